import { fieldDocAt, SUBJECT_FIELD_DOCS, unknownFieldOf, type FieldDoc } from './fields.js';
import { escapePointer, scopeReads } from './logic.js';
import type { Rule, SubjectSetName } from './types.js';

/**
 * Fields a rule reads that its subject set does not have: a misspelt `var` would read null on every
 * subject and the rule would pass (or fire) silently, so the pack is refused at load instead. Each
 * problem has the JSON Pointer of the `var` (relative to the rule). Besides the set's fields
 * (src/policy/fields.ts) an expression may name what the evaluator binds where it runs
 * (src/evaluate/evaluate.ts): nothing in `where` and `each`; `item` (with `each`) and the `let` names
 * before it in a `let`; `item` and every `let` name in `assert`, `escalate` and `discriminator`.
 * Inside `map`, `all`, `some`… a `var` reads the item and is not checked (logic.ts, scopeReads).
 * `docs`: another registry's field docs (a test's).
 */
export function unknownFieldReads(
  rule: Rule,
  docs: Readonly<Record<SubjectSetName, Readonly<Record<string, FieldDoc>>>> = SUBJECT_FIELD_DOCS,
): { path: string; message: string }[] {
  const letNames = Object.keys(rule.let ?? {});
  const item = rule.each !== undefined ? ['item'] : [];
  const decided = new Set([...item, ...letNames]);
  const scopes: { at: string; expr: unknown; heads: ReadonlySet<string> }[] = [
    { at: '/where', expr: rule.where, heads: new Set() },
    { at: '/each', expr: rule.each, heads: new Set() },
    ...letNames.map((name, i) => ({
      at: `/let/${escapePointer(name)}`,
      expr: rule.let![name],
      heads: new Set([...item, ...letNames.slice(0, i)]),
    })),
    { at: '/assert', expr: rule.assert, heads: decided },
    { at: '/discriminator', expr: rule.discriminator, heads: decided },
    ...(rule.escalate ?? []).map((step, i) => ({ at: `/escalate/${i}/when`, expr: step.when, heads: decided })),
  ];
  const problems: { path: string; message: string }[] = [];
  for (const { at, expr, heads } of scopes) {
    if (expr === undefined) continue;
    for (const read of scopeReads(expr, at).reads) {
      const why = unknownFieldOf(rule.subject, read.steps, heads, docs);
      if (why !== null) problems.push({ path: read.pointer, message: why });
    }
  }
  return problems;
}

/**
 * Fields a rule case's subject gives that its subject set does not have, each with its path in the
 * subject: a misspelt field (`single_fle`) would leave the field the rule reads absent, and the case
 * would pass or fail for another reason than the one it names. Checked as far as the set documents its
 * fields (into a map or a list, anything goes), like a rule's `var`.
 */
export function unknownSubjectFields(
  set: SubjectSetName,
  subject: Readonly<Record<string, unknown>>,
  at: readonly string[] = [],
): { path: string[]; message: string }[] {
  return Object.entries(subject).flatMap(([key, value]) => {
    const path = [...at, key];
    const why = unknownFieldOf(set, path);
    if (why !== null) return [{ path, message: why }];
    const doc = fieldDocAt(set, path);
    return typeof doc === 'object' && value !== null && typeof value === 'object' && !Array.isArray(value)
      ? unknownSubjectFields(set, value as Record<string, unknown>, path)
      : [];
  });
}
