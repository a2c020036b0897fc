import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import jsonLogic, { type RulesLogic } from 'json-logic-js';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { evaluate, evaluateRule } from '../../src/evaluate/evaluate.js';
import type { Finding } from '../../src/evaluate/finding.js';
import { buildSubjects, type Subject } from '../../src/facts/subjects.js';
import { DEFAULT_POLICY, loadPack } from '../../src/policy/load.js';
import type { LoadedRule, SubjectSetName } from '../../src/policy/types.js';
import { SUBJECT_SET_NAMES } from '../../src/policy/sets.js';
import { loadSnapshot } from '../../src/snapshot/load.js';
import type { Snapshot } from '../../src/snapshot/types.js';
import { example } from '../support/cli.js';
import { buildRealistic, realisticHost } from '../support/realistic-host.js';

/*
 * The evaluator against a reference evaluator written here (below: plain loops, json-logic-js's own
 * `apply`, its own rendering of messages; nothing of src/evaluate or src/policy/template.ts), with every
 * rule of the shipped pack over arbitrary subject data (real subjects of the example hosts and of the
 * realistic host model with fields replaced by arbitrary JSON, and data that is JSON only): the same
 * findings (rule, subject, discriminator, severity, message, locations), the same failures, two
 * subjects with one identity giving two findings told apart; with unknown facts, a rule that reads one
 * not checked on that subject, one that does not checked as if all were known, and a finding whose
 * `escalate` reads one kept at the rule's own severity. And: a rule gives well-formed findings or
 * throws an Error.
 */

// Runs enough to reach all three outcomes: a rule throwing on arbitrary data is rare (about one run in 300,
// rarer as rules are added: 200 runs of 0xe7a2 reached none once the MA2005-MA2009 and MA5 rules came); 400 runs
// reached all three with this seed and with seeds 1 to 8.
const RUNS = { numRuns: 400, seed: 0xe7a2 } as const;
const SETS = SUBJECT_SET_NAMES;

const rules: LoadedRule[] = (await loadPack(DEFAULT_POLICY)).rules;
const snapshots = new Map<string, Snapshot>();
const realSubjects = Object.fromEntries(SETS.map((s) => [s, [] as Subject[]])) as Record<SubjectSetName, Subject[]>;
for (const name of ['clean', '045', '097', 'demo', 'adopted-node']) {
  const snapshot = await loadSnapshot(example(name, 'snapshot.json'));
  const historyDir = example(name, 'history');
  const history = existsSync(historyDir)
    ? await Promise.all(readdirSync(historyDir).map((f) => loadSnapshot(join(historyDir, f))))
    : [];
  snapshots.set(name, snapshot);
  const sets = buildSubjects(snapshot, history);
  for (const set of SETS) realSubjects[set].push(...sets[set]);
}
// And hosts shaped like real ones (test/support/realistic-host.ts): image env, Compose and OCI labels,
// named volumes, loopback-only sockets, stopped and restarting containers.
for (const seed of [1, 2, 3]) {
  const host = realisticHost(seed);
  const sets = buildSubjects(buildRealistic(host, '2026-10-02T03:00:00Z'), [
    buildRealistic(host, '2026-10-01T03:00:00Z', { before: true }),
  ]);
  for (const set of SETS) realSubjects[set].push(...sets[set]);
}
for (const set of SETS) assert.ok(realSubjects[set].length > 0, `the examples have ${set}`);
const ruleById = new Map(rules.map((r) => [r.id, r]));
// Rules and snapshots are drawn by name, so that a counterexample reads as ids, not as whole objects.
const ruleIds = fc.constantFrom(...ruleById.keys());

/**
 * A subject of `set`: a real one with some fields replaced by arbitrary JSON, or arbitrary data with a
 * real identity; every fact known (what unknown facts do is test/property/unknown.test.ts's business).
 */
function subjectOf(set: SubjectSetName, ids: fc.Arbitrary<string>): fc.Arbitrary<Subject> {
  const bases = realSubjects[set];
  const keys = [...new Set(bases.flatMap((b) => Object.keys(b.data)))];
  const mutated = fc
    .tuple(
      fc.constantFrom(...bases),
      fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 })), fc.jsonValue({ maxDepth: 3 }), {
        maxKeys: 4,
      }),
      ids,
    )
    .map(
      ([base, overrides, id]): Subject => ({
        ...base,
        about: { ...base.about, id },
        data: { ...base.data, ...overrides },
        unknown: [],
      }),
    );
  const arbitrary = fc
    .tuple(
      fc.constantFrom(...bases),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }),
      ids,
    )
    .map(([base, data, id]): Subject => ({ ...base, about: { ...base.about, id }, data, unknown: [] }));
  return fc.oneof({ arbitrary: mutated, weight: 3 }, { arbitrary: arbitrary, weight: 1 });
}

const SEVERITIES = new Set(['error', 'warning', 'note']);

/** What every finding of a rule on a subject looks like. */
function wellFormed(f: Finding, rule: LoadedRule, subject: Subject): void {
  assert.is(f.ruleId, rule.id);
  assert.is(f.ruleName, rule.name);
  assert.ok(SEVERITIES.has(f.severity), f.severity);
  assert.match(f.fingerprint, /^[0-9a-f]{32}$/);
  assert.equal(f.subject, subject.about);
  assert.ok(f.discriminator === null || typeof f.discriminator === 'string');
  assert.type(f.message, 'string');
  assert.ok(Array.isArray(f.locations.physical) && Array.isArray(f.locations.logical));
}

/** A rule's outcome on one subject: its findings (one per fingerprint), or the Error it threw. */
function outcome(rule: LoadedRule, subject: Subject): { findings: Finding[] } | { error: Error } {
  try {
    const findings = evaluateRule(rule, subject);
    return { findings: findings.filter((f, i) => findings.findIndex((g) => g.fingerprint === f.fingerprint) === i) };
  } catch (err) {
    assert.instance(err, Error, `a rule threw something that is not an Error: ${String(err)}`);
    return { error: err as Error };
  }
}

test('every shipped rule on arbitrary subject data: well-formed findings, or an Error', () => {
  const seen = { findings: 0, errors: 0, quiet: 0 };
  fc.assert(
    fc.property(
      ruleIds.chain((id) => fc.tuple(fc.constant(id), subjectOf(ruleById.get(id)!.subject, fc.constantFrom('a', 'b')))),
      ([id, subject]) => {
        const rule = ruleById.get(id)!;
        const result = outcome(rule, subject);
        if ('error' in result) {
          seen.errors++;
          return;
        }
        if (result.findings.length === 0) seen.quiet++;
        else seen.findings++;
        for (const f of result.findings) wellFormed(f, rule, subject);
      },
    ),
    RUNS,
  );
  // Not vacuous: the data reached findings, quiet passes and failures.
  assert.ok(seen.findings > 0 && seen.quiet > 0 && seen.errors > 0, JSON.stringify(seen));
});

// ---------------------------------------------------------------------------------------------------
// The reference evaluator: what docs/writing-rules.md and docs/history.md say a rule
// does, written plainly and slowly, sharing nothing with src/evaluate. Expressions run through
// json-logic-js's own `apply` (with the operator table src/policy/logic.ts sets up: mesh-audit's dialect
// of JSON Logic, whose operators test/property/jsonlogic-differential.test.ts checks), never through
// the evaluator's compiled closures; a `let` is worked out when something reads it; nothing is skipped
// for speed. The evaluator's answers are compared with it, finding by finding.
// ---------------------------------------------------------------------------------------------------

const apply = (expr: unknown, data: unknown): unknown => jsonLogic.apply(expr as RulesLogic, data);
assert.is(apply({ count: [{ var: 'xs' }] }, { xs: [1, 2] }), 2, "json-logic-js has mesh-audit's operators");

/** A finding as a user reads it: everything but the fingerprint (a hash of the identity, checked unique). */
interface Visible {
  host: string;
  ruleId: string;
  severity: string;
  /** The severity was not worked out: an `escalate` condition read an unknown fact (then it is the rule's own). */
  severityUnknown: boolean;
  kind: string;
  id: string;
  discriminator: string | null;
  message: string;
  locations: unknown;
  resource: string | null;
}
const visibleText = (f: Visible): string =>
  JSON.stringify([
    f.host,
    f.ruleId,
    f.severity,
    f.severityUnknown,
    f.kind,
    f.id,
    f.discriminator,
    f.message,
    f.locations,
    f.resource,
  ]);
/** What a finding whose severity was not worked out adds to its message (test/property/unknown.test.ts checks its words). */
const SEVERITY_NOT_KNOWN = / \(severity left at (error|warning|note): [^]*\)$/;
const visibleOf = (f: Finding): Visible => ({
  host: f.host,
  ruleId: f.ruleId,
  severity: f.severity,
  severityUnknown: f.unknownEscalation !== undefined,
  kind: f.subject.kind,
  id: f.subject.id,
  discriminator: f.discriminator,
  message: f.unknownEscalation !== undefined ? f.message.replace(SEVERITY_NOT_KNOWN, '') : f.message,
  locations: f.locations,
  resource: f.resource ?? null,
});
/** What makes two findings one for alerting: host, rule, subject and discriminator. */
const identityOf = (f: Visible, discriminator = f.discriminator): string =>
  JSON.stringify([f.host, f.ruleId, f.kind, f.id, discriminator]);

/** The unknown fields a rule read, by where it read them; `current` is where reads are being counted now (null: not counted). */
interface Reads {
  where: Set<string>;
  decision: Set<string>;
  /** Read by `escalate` conditions (decides a severity, not a finding). */
  escalate: Set<string>;
  current: Set<string> | null;
}

/** A finding of the reference; `alternative`: the same finding with its severity not worked out, which the evaluator may also give. */
type ReferenceFinding = Visible & { alternative?: Visible };

// ---------------------------------------------------------------------------------------------------
// Messages, by the reference: docs/writing-rules.md says a message is a template of
// `{named.placeholders}` over the subject and `let` values, `{{`/`}}` literal braces; a secret-safe value
// prints as its shape, a list as its items joined by ", " (an empty one, like a missing value, as "-"),
// an object field by field. A dotted name reaches into objects, a key containing dots first (a label
// such as `com.docker.compose.service`). Written here character by character, sharing nothing with
// src/policy/template.ts.
// ---------------------------------------------------------------------------------------------------

/** The value at a dotted name: the longest own key first, then shorter ones (`labels.mesh.module`). */
function lookUp(value: unknown, parts: readonly string[]): unknown {
  if (parts.length === 0) return value;
  if (value === null || (typeof value !== 'object' && typeof value !== 'string')) return undefined;
  const holder = Object(value) as Record<string, unknown>;
  for (let take = parts.length; take >= 1; take--) {
    const key = parts.slice(0, take).join('.');
    if (!Object.hasOwn(holder, key)) continue;
    const found = lookUp(holder[key], parts.slice(take));
    if (found !== undefined) return found;
  }
  return undefined;
}

function shown(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(shown).join(', ');
  if (typeof value === 'object') {
    if (Object.hasOwn(value, 'shape')) return String((value as { shape: unknown }).shape);
    return Object.keys(value)
      .map((key) => `${key}=${shown((value as Record<string, unknown>)[key])}`)
      .join(', ');
  }
  return String(value);
}

const NAME_START = /[a-zA-Z_]/;
const NAME_PART = /[a-zA-Z0-9_.-]/;

function referenceMessage(template: string, scope: unknown): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const c = template[i]!;
    if ((c === '{' || c === '}') && template[i + 1] === c) {
      out += c;
      i += 2;
      continue;
    }
    if (c === '{' && NAME_START.test(template[i + 1] ?? '')) {
      let end = i + 1;
      while (end < template.length && NAME_PART.test(template[end]!)) end++;
      if (template[end] === '}') {
        out += shown(lookUp(scope, template.slice(i + 1, end).split('.')));
        i = end + 1;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

assert.is(
  referenceMessage('{a} {{x}} {b.c.d} {e} {f', {
    a: [1, 2],
    'b.c': { d: { shape: 'postgresql://…@:5/…', digest: 'x' } },
    e: [],
  }),
  '1, 2 {x} postgresql://…@:5/… - {f',
);

/**
 * The subject's facts, copied, each unknown one behind a getter that counts a read: what a rule touches
 * on this subject, found by running it rather than by reading its text.
 */
function watchedData(subject: Subject, reads: Reads): Record<string, unknown> {
  const data: Record<string, unknown> = { ...subject.data };
  // Deeper fields first: the getter of `container` then returns the copy that watches `container.claimed_by`.
  const fields = (subject.unknown ?? []).map((u) => u.field).sort((a, b) => b.split('.').length - a.split('.').length);
  for (const field of fields) {
    const path = field.split('.');
    let holder: Record<string, unknown> | null = data;
    for (const key of path.slice(0, -1)) {
      const next: unknown = holder[key];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) {
        holder = null;
        break;
      }
      holder = holder[key] = { ...(next as Record<string, unknown>) };
    }
    const last = path[path.length - 1]!;
    if (holder === null || !Object.hasOwn(holder, last)) continue;
    const value = holder[last];
    Object.defineProperty(holder, last, {
      enumerable: true,
      configurable: true,
      get: () => (reads.current?.add(field), value),
    });
  }
  return data;
}

/** What one item's expressions see: the facts, `item` (with `each`), and each `let`, worked out once, when first read. */
function scopeFor(rule: LoadedRule, data: Record<string, unknown>, item: unknown): Record<string, unknown> {
  const scope = Object.defineProperties({}, Object.getOwnPropertyDescriptors(data)) as Record<string, unknown>;
  if (rule.each !== undefined)
    Object.defineProperty(scope, 'item', { value: item, enumerable: true, configurable: true, writable: true });
  for (const [name, expr] of Object.entries(rule.let ?? {})) {
    let worked: { value: unknown } | null = null;
    Object.defineProperty(scope, name, {
      enumerable: true,
      configurable: true,
      get: () => (worked ??= { value: apply(expr, scope) }).value,
    });
  }
  return scope;
}

const holds = (expr: unknown, data: unknown): boolean => jsonLogic.truthy(apply(expr, data));

/**
 * One rule on one subject by the book: `where` on the facts; the items of `each` (null is none, a
 * list is its items, anything else an error; no `each`: the subject itself); for each item that fails
 * `assert`, a finding with the first `escalate` severity that holds, a discriminator (the subject's
 * part, then `discriminator`'s value or the item, joined by `#`), the message filled from the item's
 * scope, and the subject's locations; one finding per discriminator. `allLets`: also work out every
 * `let` of every item, read or not. Throws what an expression throws.
 */
function reference(
  rule: LoadedRule,
  subject: Subject,
  allLets = false,
): { findings: ReferenceFinding[]; whereHeld: boolean; reads: Reads } {
  const reads: Reads = { where: new Set(), decision: new Set(), escalate: new Set(), current: null };
  const data = watchedData(subject, reads);
  reads.current = reads.where;
  const whereHeld = rule.where === undefined || holds(rule.where, data);
  reads.current = null;
  if (!whereHeld) return { findings: [], whereHeld, reads };
  reads.current = reads.decision;
  let items: unknown[] = [undefined];
  if (rule.each !== undefined) {
    const list = apply(rule.each, data);
    if (list === null || list === undefined) items = [];
    else if (Array.isArray(list)) items = list;
    else throw new Error(`each gave ${typeof list}`);
  }
  const findings: ReferenceFinding[] = [];
  const unknownFields = (subject.unknown ?? []).map((u) => u.field);
  for (const item of items) {
    reads.current = reads.decision;
    const scope = scopeFor(rule, data, item);
    if (allLets) void Object.keys(rule.let ?? {}).map((name) => scope[name]);
    if (holds(rule.assert, scope)) continue;
    // The first step that holds; a step that reads an unknown fact first leaves the rule's own severity, said.
    let severity = rule.severity;
    let severityUnknown = false;
    let mayBeUnknown = false; // a step up to the one deciding names an unknown fact: the evaluator, reading the text, may say unknown
    for (const step of rule.escalate ?? []) {
      const before = reads.escalate.size;
      reads.current = reads.escalate;
      const held = holds(step.when, scope);
      reads.current = reads.decision;
      const letTexts = Object.entries(rule.let ?? {})
        .filter(([name]) => JSON.stringify(step.when).includes(name))
        .map(([, e]) => e);
      if (unknownFields.some((field) => mayRead([step.when, ...letTexts], field))) mayBeUnknown = true;
      if (reads.escalate.size > before) {
        severityUnknown = true;
        break;
      }
      if (held) {
        severity = step.severity;
        break;
      }
    }
    let own: string | null = null;
    if (rule.discriminator !== undefined) {
      const value = apply(rule.discriminator, scope);
      if (value !== null && value !== undefined) own = typeof value === 'string' ? value : JSON.stringify(value);
    } else if (rule.each !== undefined) {
      if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean')
        throw new Error('an item that is no string or number, and no discriminator');
      own = String(item);
    }
    reads.current = null; // the message says what it can: what it reads decides nothing
    const parts = [subject.part, own].filter((p) => p !== null);
    const finding: ReferenceFinding = {
      host: String(data['host']),
      ruleId: rule.id,
      severity,
      severityUnknown,
      kind: subject.about.kind,
      id: subject.about.id,
      discriminator: parts.length === 0 ? null : parts.join('#'),
      message: referenceMessage(rule.message, scope),
      locations: subject.locate(item),
      resource: subject.resource,
    };
    if (mayBeUnknown && !severityUnknown)
      finding.alternative = { ...finding, severity: rule.severity, severityUnknown: true };
    if (!findings.some((f) => identityOf(f) === identityOf(finding))) findings.push(finding);
  }
  return { findings, whereHeld, reads };
}

/** Whether a rule's text may read a field: it names the field's first segment, or reads paths it computes or does not name. */
function mayRead(exprs: unknown[], field: string): boolean {
  const text = JSON.stringify(exprs);
  return /"missing|"var":(?:\{|\[\{|""|\[""|\[\])/.test(text) || text.includes(field.split('.')[0]!);
}

/** What the evaluator may answer for one rule on one subject. */
interface Allowed {
  /** The findings it must give when it checks the subject; null: it must not check it. */
  findings: ReferenceFinding[] | null;
  /** It may say the rule was not checked (unknown facts). */
  notChecked: boolean;
  /** It may fail (an expression threw). */
  fails: boolean;
  /** Which case of the reference this is, for the counts that show the runs reached every case. */
  case: 'fails' | 'reads unknown in where' | 'where leaves it out' | 'reads unknown' | 'checked';
}

/**
 * The reference's verdict. A subject whose unknown facts the rule reads (as it runs on this subject) is
 * not checked; `where` first: one it leaves out on known facts is checked, and has no finding. The
 * evaluator decides from the rule's text, which may name a fact a branch not taken reads: it may then
 * also say "not checked", but never when the rule does not name the fact at all. It may work out a `let`
 * nothing reads, and fail on it.
 */
/** The conditions of an expression that is one `and` (none for any other shape). */
function andConditions(where: unknown): unknown[] {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return [];
  const entries = Object.entries(where);
  return entries.length === 1 && entries[0]![0] === 'and' && Array.isArray(entries[0]![1]) ? entries[0]![1] : [];
}

function allowedFor(rule: LoadedRule, subject: Subject): Allowed {
  const unknown = (subject.unknown ?? []).map((u) => u.field);
  const whereText = rule.where === undefined ? [] : [rule.where];
  const allText = [...whereText, rule.each, rule.assert, rule.discriminator, rule.let, rule.escalate].filter(
    (e) => e !== undefined,
  );
  const named = (texts: unknown[]) => unknown.some((field) => mayRead(texts, field));
  let failsWithAllLets = false;
  try {
    reference(rule, subject, true);
  } catch {
    failsWithAllLets = true;
  }
  let result: ReturnType<typeof reference>;
  try {
    result = reference(rule, subject);
  } catch {
    return { findings: null, notChecked: named(allText), fails: true, case: 'fails' };
  }
  const readUnknown = (reads: Set<string>) => unknown.some((field) => reads.has(field));
  if (readUnknown(result.reads.where)) {
    // A `where` that is one `and` is false when any one condition is, whatever the unknown ones would be.
    const conditions = andConditions(rule.where);
    const falseOnKnown = conditions.some((condition) => {
      try {
        const alone = reference({ ...rule, where: condition }, subject);
        return !readUnknown(alone.reads.where) && !alone.whereHeld;
      } catch {
        return false; // it held, and the rest of the rule failed; or the condition itself failed: it decides nothing
      }
    });
    if (falseOnKnown) return { findings: [], notChecked: named(whereText), fails: false, case: 'where leaves it out' };
    return { findings: null, notChecked: true, fails: false, case: 'reads unknown in where' };
  }
  if (!result.whereHeld)
    return { findings: [], notChecked: named(whereText), fails: false, case: 'where leaves it out' };
  if (readUnknown(result.reads.decision))
    return { findings: null, notChecked: true, fails: false, case: 'reads unknown' };
  return { findings: result.findings, notChecked: named(allText), fails: failsWithAllLets, case: 'checked' };
}

/**
 * A whole evaluation by the reference, given which (rule, subject) pairs fail: findings of two
 * subjects with one identity are both kept, the later told apart by `#2`, `#3`, … (the first free one).
 */
function referenceEvaluation(
  pairs: { rule: LoadedRule; subject: Subject; allowed: Allowed }[],
  failing: ReadonlySet<number>,
): { findings: string[]; failures: string[] } {
  const taken = new Set<string>();
  const findings: string[] = [];
  const failures: string[] = [];
  pairs.forEach(({ rule, subject, allowed }, i) => {
    if (failing.has(i) || allowed.findings === null) {
      failures.push(`${rule.id} ${subject.about.kind} ${subject.about.id}`);
      return;
    }
    for (const f of allowed.findings) {
      let discriminator = f.discriminator;
      for (let n = 2; taken.has(identityOf(f, discriminator)); n++) discriminator = `${f.discriminator ?? ''}#${n}`;
      taken.add(identityOf(f, discriminator));
      findings.push(visibleText({ ...f, discriminator }));
    }
  });
  return { findings: findings.sort(), failures: failures.sort() };
}

const setsOf = (subject: (set: SubjectSetName) => fc.Arbitrary<Subject[]>) =>
  fc.record(
    Object.fromEntries(SETS.map((set) => [set, subject(set)])) as Record<SubjectSetName, fc.Arbitrary<Subject[]>>,
  );

test('evaluate gives the findings and failures of the reference evaluator, also for subjects sharing an identity', () => {
  const seen = { findings: 0, failures: 0, numbered: 0, excludedByWhere: 0 };
  fc.assert(
    fc.property(
      fc.constantFrom(...snapshots.keys()),
      setsOf((set) => fc.array(subjectOf(set, fc.constantFrom('a', 'b', 'line 1')), { maxLength: 3 })),
      fc.subarray([...ruleById.keys()], { minLength: 1 }),
      (name, subjects, ids) => {
        const some = ids.map((id) => ruleById.get(id)!);
        let evaluation;
        try {
          evaluation = evaluate(snapshots.get(name)!, subjects, some);
        } catch (err) {
          assert.unreachable(`evaluate threw: ${err instanceof Error ? err.stack : String(err)}`);
          return;
        }
        const pairs = some.flatMap((rule) =>
          subjects[rule.subject].map((subject) => ({ rule, subject, allowed: allowedFor(rule, subject) })),
        );
        // A pair that may fail or not (a `let` nothing reads fails): every choice is a reference answer.
        const either = pairs.flatMap((p, i) => (p.allowed.fails && p.allowed.findings !== null ? [i] : []));
        fc.pre(either.length <= 4);
        const actual = {
          findings: evaluation.findings.map((f) => visibleText(visibleOf(f))).sort(),
          failures: evaluation.notifications
            .filter((n) => n.kind === 'evaluation')
            .map((n) => `${n.source} ${n.subject ?? ''}`)
            .sort(),
        };
        const answers = Array.from({ length: 2 ** either.length }, (_, mask) =>
          referenceEvaluation(pairs, new Set(either.filter((_, bit) => (mask >> bit) & 1))),
        );
        if (!answers.some((expected) => isDeepStrictEqual(actual, expected)))
          assert.equal(actual, answers[0], 'the findings and failures of the reference');
        for (const n of evaluation.notifications) if (n.kind === 'evaluation') assert.is(n.level, 'error');
        assert.is(evaluation.notChecked, undefined, 'every fact known: every rule checked');
        const fingerprints = evaluation.findings.map((f) => f.fingerprint);
        assert.is(new Set(fingerprints).size, fingerprints.length, 'fingerprints are unique');
        assert.is(
          evaluation.complete,
          evaluation.notifications.every((n) => n.level !== 'error'),
        );
        if (actual.failures.length > 0)
          assert.is(evaluation.complete, false, 'a failing rule makes the run incomplete');
        seen.findings += actual.findings.length;
        seen.failures += actual.failures.length;
        seen.numbered += evaluation.findings.filter((f) => /#\d+$/.test(f.discriminator ?? '')).length;
        seen.excludedByWhere += pairs.filter((p) => p.allowed.case === 'where leaves it out').length;
      },
    ),
    RUNS,
  );
  // Not vacuous: findings, failures, subjects `where` leaves out, and findings told apart by occurrence.
  assert.ok(
    Object.values(seen).every((n) => n > 0),
    JSON.stringify(seen),
  );
});

/** Facts of a subject set that may be unknown: its fields, the fields of its objects, and one no rule names. */
function fieldsOf(set: SubjectSetName): string[] {
  const fields = new Set<string>(['fact_no_rule_reads']);
  for (const subject of realSubjects[set]) {
    for (const [key, value] of Object.entries(subject.data)) {
      fields.add(key);
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        for (const inner of Object.keys(value)) fields.add(`${key}.${inner}`);
    }
    for (const u of subject.unknown ?? []) fields.add(u.field);
  }
  return [...fields].sort();
}

const SOURCES = ['docker', 'ledger', 'proc', 'files'] as const;

/** Subjects of a set, each with its own id, some of whose facts are unknown. */
function subjectsWithUnknown(set: SubjectSetName): fc.Arbitrary<Subject[]> {
  const fields = fieldsOf(set);
  // The fields `escalate` conditions of the set's rules name, drawn often enough that severities are reached.
  const escalated = fields.filter((f) =>
    rules.some((r) => r.subject === set && JSON.stringify(r.escalate ?? []).includes(`"${f}"`)),
  );
  const unknownFields =
    escalated.length > 0
      ? fc.oneof(fc.subarray(fields, { maxLength: 3 }), fc.subarray(escalated, { minLength: 1, maxLength: 1 }))
      : fc.subarray(fields, { maxLength: 3 });
  const one = fc.tuple(subjectOf(set, fc.constant('')), unknownFields, fc.constantFrom(...SOURCES)).map(
    ([subject, unknown, source]): Subject => ({
      ...subject,
      unknown: unknown.map((field) => ({ field, source, reason: `${field} not read (${source})` })),
    }),
  );
  return fc
    .array(one, { maxLength: 3 })
    .map((list) => list.map((s, i) => ({ ...s, about: { ...s.about, id: `subject-${i}` } })));
}

test('unknown facts: a rule that reads one is not checked on that subject, one that does not is checked as if all were known', () => {
  const seen: Record<
    Allowed['case'] | 'not checked' | 'checked with unknown facts it does not name' | 'severity not worked out',
    number
  > = {
    fails: 0,
    'reads unknown in where': 0,
    'where leaves it out': 0,
    'reads unknown': 0,
    checked: 0,
    'not checked': 0,
    'checked with unknown facts it does not name': 0,
    'severity not worked out': 0,
  };
  fc.assert(
    fc.property(
      fc.constantFrom(...snapshots.keys()),
      setsOf(subjectsWithUnknown),
      fc.subarray([...ruleById.keys()], { minLength: 1 }),
      (name, subjects, ids) => {
        const some = ids.map((id) => ruleById.get(id)!);
        const evaluation = evaluate(snapshots.get(name)!, subjects, some);
        for (const rule of some) {
          for (const subject of subjects[rule.subject]) {
            const allowed = allowedFor(rule, subject);
            const who = `${subject.about.kind} ${subject.about.id}`;
            const notChecked = (evaluation.notChecked ?? []).filter(
              (n) => n.ruleId === rule.id && `${n.subject.kind} ${n.subject.id}` === who,
            );
            const failed = evaluation.notifications.some(
              (n) => n.kind === 'evaluation' && n.source === rule.id && n.subject === who,
            );
            const findings = evaluation.findings
              .filter((f) => f.ruleId === rule.id && `${f.subject.kind} ${f.subject.id}` === who)
              .map(visibleOf);
            const context = `${rule.id} on ${who} (${allowed.case}; unknown: ${(subject.unknown ?? []).map((u) => u.field).join(', ')})`;
            seen[allowed.case]++;
            assert.ok(
              notChecked.length <= 1 && !(notChecked.length === 1 && (failed || findings.length > 0)),
              `one answer: ${context}`,
            );
            if (notChecked.length === 1) {
              assert.ok(allowed.notChecked, `not checked, but it reads no unknown fact: ${context}`);
              const n = notChecked[0]!;
              const unknown = subject.unknown ?? [];
              assert.ok(
                n.sources.length > 0 && n.sources.every((s) => unknown.some((u) => u.source === s)),
                `the sources not read: ${context}`,
              );
              assert.ok(
                n.reasons.length > 0 && n.reasons.every((r) => unknown.some((u) => u.reason === r)),
                `the reasons: ${context}`,
              );
              assert.is(n.part, subject.part);
              assert.ok(
                evaluation.notifications.some(
                  (x) =>
                    x.level === 'error' &&
                    x.source === rule.id &&
                    x.message.includes(`not checked on`) &&
                    x.message.includes(who),
                ),
                `an error notification names it: ${context}`,
              );
              seen['not checked']++;
            } else if (failed) {
              assert.ok(allowed.fails, `failed: ${context}`);
            } else {
              assert.ok(allowed.findings !== null, `checked, but it reads an unknown fact: ${context}`);
              // Where the reference allows the severity not worked out too, the evaluator's choice is taken.
              const expected = allowed.findings.map((f) => {
                const given = findings.find((g) => identityOf(g) === identityOf(f));
                if (f.alternative && given && visibleText(given) === visibleText(f.alternative)) return f.alternative;
                return f;
              });
              assert.equal(
                findings.map(visibleText).sort(),
                expected.map(visibleText).sort(),
                `the reference's findings: ${context}`,
              );
              seen['severity not worked out'] += findings.filter((f) => f.severityUnknown).length;
              if ((subject.unknown ?? []).length > 0 && !allowed.notChecked)
                seen['checked with unknown facts it does not name']++;
            }
          }
        }
        if ((evaluation.notChecked ?? []).length > 0)
          assert.is(evaluation.complete, false, 'a rule not checked makes the run incomplete');
      },
    ),
    RUNS,
  );
  // Not vacuous: every case of the reference was reached, and both answers to unknown facts were given.
  assert.ok(
    Object.values(seen).every((n) => n > 0),
    JSON.stringify(seen),
  );
});

test.run();
