import { hash } from 'node:crypto';
import { compareText } from '../text/compare.js';
import type { AnySubjectSets, Subject, SubjectChunks, UnknownFact } from '../facts/subjects.js';
import type { SubjectSetName } from '../policy/sets.js';
import { changed, measuringOnce, withBudget, withBudgetOf } from '../policy/budget.js';
import { applyLogic, mayReadNames, scopeReads, truthy } from '../policy/logic.js';
import { renderTemplate } from '../policy/template.js';
import type { LoadedRule, Severity } from '../policy/types.js';
import type { Problem, Snapshot } from '../snapshot/types.js';
import { historyNotes, type HistoryInput } from '../facts/history.js';
import { sameItems } from '../facts/same-value.js';
import type { Check, Evaluation, Finding, NotChecked, Notification, UnknownEscalation } from './finding.js';

const FINGERPRINT_VERSION = 'mesh-audit/v1';

/** sha256 over what the finding is about; nothing secret and nothing that changes when a container is recreated. */
export function fingerprintOf(
  host: string,
  ruleId: string,
  subject: { kind: string; id: string },
  discriminator: string | null,
): string {
  // One-shot hash: a Hash object per finding cost more than the hashing (100,000 findings in a sweep).
  return hash(
    'sha256',
    JSON.stringify([FINGERPRINT_VERSION, host, ruleId, subject.kind, subject.id, discriminator]),
    'hex',
  ).slice(0, 32);
}

function discriminatorOf(rule: LoadedRule, subject: Subject, item: unknown, scope: unknown): string | null {
  let own: string | null = null;
  if (rule.discriminator !== undefined) {
    const value = applyLogic(rule.discriminator, scope);
    own = value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);
  } else if (rule.each !== undefined) {
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') own = String(item);
    else
      throw new Error(`rule ${rule.id}: items of 'each' are not strings or numbers; give the rule a 'discriminator'`);
  }
  const parts = [subject.part, own].filter((p): p is string => p !== null);
  return parts.length === 0 ? null : parts.join('#');
}

/** What a subject that passes gives: one list, never written to (a caller that keeps findings copies them). */
const NO_FINDINGS: Finding[] = Object.freeze([]) as unknown as Finding[];
/** The one item of a rule without `each`. */
const ONE_ITEM: readonly unknown[] = Object.freeze([undefined]);

export interface EvaluateOptions {
  /** Keep what each rule checked (Evaluation.checks), for reports that list passes too (JUnit). */
  recordChecks?: boolean;
  /** What each rule gave on each subject, kept for the next evaluation of the same subjects (serve). */
  outcomes?: OutcomeMemo;
}

type Outcome = { findings: Finding[] } | { unknown: UnknownFact[] };

/**
 * What each rule gave (or threw) on each subject, by the subject's identity: a subject made again is a new object,
 * so what is taken from here is what the same rule gave on the very same facts. An outcome is a function of the
 * rule and the subject alone (checkRule reads nothing else; its budget counts steps, not time), so taking it again
 * gives what checking again would. Kept for one rule list (src/pipeline.ts, IncrementalAudit).
 */
export class OutcomeMemo {
  private readonly kept = new WeakMap<Subject, Map<LoadedRule, Outcome | { thrown: unknown }>>();
  /** What each rule gave on its set's subjects the last time, with those subjects (in order). */
  private readonly passes = new Map<LoadedRule, { subjects: readonly Subject[]; checks: boolean; out: RuleOutcomes }>();
  /** How many rule x subject checks were made (not taken from the memo) since the count was last reset. */
  checks = 0;

  constructor(readonly rules: readonly LoadedRule[]) {}

  /**
   * What the rule gave on these subjects the last time, when they are the very same, in the same order (speed: one
   * read changes few subjects, and a set taken whole by the subjects' memo is the same list), else undefined.
   */
  keptPass(rule: LoadedRule, subjects: readonly Subject[], checks: boolean): RuleOutcomes | undefined {
    const last = this.passes.get(rule);
    if (last === undefined || last.checks !== checks || !sameItems(last.subjects, subjects)) return undefined;
    return last.out;
  }

  keepPass(rule: LoadedRule, subjects: readonly Subject[], checks: boolean, out: RuleOutcomes): void {
    this.passes.set(rule, { subjects, checks, out });
  }

  check(rule: LoadedRule, subject: Subject): Outcome {
    let byRule = this.kept.get(subject);
    if (byRule === undefined) this.kept.set(subject, (byRule = new Map<LoadedRule, Outcome | { thrown: unknown }>()));
    let outcome = byRule.get(rule);
    if (outcome === undefined) {
      this.checks++;
      try {
        outcome = withBudgetOf(checkRule, rule, subject);
      } catch (thrown) {
        outcome = { thrown };
      }
      byRule.set(rule, outcome);
    }
    if ('thrown' in outcome) throw outcome.thrown;
    return outcome;
  }
}

const applies = (rule: LoadedRule, subject: Subject): boolean =>
  rule.where === undefined || withBudget(() => truthy(applyLogic(rule.where, subject.data)));

/**
 * One rule on one subject: zero or more findings (none when facts it reads are unknown). Throws when an expression
 * fails.
 */
export function evaluateRule(rule: LoadedRule, subject: Subject, probe?: MessageProbe): Finding[] {
  const outcome = withBudget(() => checkRule(rule, subject, probe));
  return 'findings' in outcome ? [...outcome.findings] : [];
}

/** For rule cases (src/evaluate/cases.ts): collects the message placeholders that had no value. */
export interface MessageProbe {
  unfilled: string[];
}

/**
 * One rule on one subject, three-valued: its findings when every fact it reads is known, else the
 * unknown facts it would have read (then it says nothing either way). `where` is looked at first: a
 * subject it leaves out on known facts is checked whatever its other facts are.
 */
export function checkRule(
  rule: LoadedRule,
  subject: Subject,
  probe?: MessageProbe,
): { findings: Finding[] } | { unknown: UnknownFact[] } {
  const unknown = subject.unknown ?? [];
  if (unknown.length > 0) {
    const { blocksWhere, blocksDecision } = planOf(rule);
    const blocking = unknown.filter((u) => blocksWhere(u.field));
    if (blocking.length > 0) {
      if (leftOutOnKnownFacts(rule, subject, unknown)) return PASSED;
      return { unknown: blocking };
    }
    if (rule.where !== undefined && !truthy(applyLogic(rule.where, subject.data))) return PASSED;
    const rest = unknown.filter((u) => blocksDecision(u.field));
    if (rest.length > 0) return { unknown: rest };
    return outcomeOf(findingsOf(rule, subject, true, unknown, probe));
  }
  return outcomeOf(findingsOf(rule, subject, false, [], probe));
}

/** The outcome of a subject that passes, shared (never written to). */
const PASSED: { findings: Finding[] } = Object.freeze({ findings: NO_FINDINGS });
const outcomeOf = (findings: Finding[]): { findings: Finding[] } => (findings === NO_FINDINGS ? PASSED : { findings });

/**
 * Whether a `where` written as `{"and": [...]}` leaves the subject out on a condition that reads no unknown
 * fact: one false condition makes the whole false, whatever the unknown ones would be (a socket on
 * loopback is out of a rule about reach beyond it, though who holds it is not known).
 */
function leftOutOnKnownFacts(rule: LoadedRule, subject: Subject, unknown: readonly UnknownFact[]): boolean {
  for (const { condition, reads } of planOf(rule).whereConditions) {
    if (unknown.some((u) => overlaps(reads, u.field))) continue;
    let held: unknown;
    try {
      held = applyLogic(condition, subject.data);
    } catch {
      continue; // `and` may never have reached it: a condition that fails alone decides nothing
    }
    if (!truthy(held)) return true;
  }
  return false;
}

/** The conditions of a `where` that is one `and`, each with the fields it reads (none for another shape). */
function whereConditionsOf(rule: LoadedRule): RulePlan['whereConditions'] {
  const where: unknown = rule.where;
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return [];
  const keys = Object.keys(where);
  const conditions = (where as Record<string, unknown>)['and'];
  if (keys.length !== 1 || !Array.isArray(conditions)) return [];
  return (conditions as unknown[]).map((condition) => ({
    condition,
    reads: fieldsRead({ ...rule, where: condition }).where,
  }));
}

/**
 * The subject fields (dotted paths) a rule reads in `where`, in what decides a finding, and in each
 * `escalate` step's condition (what decides its severity); null: any field.
 */
interface FieldsRead {
  where: ReadonlySet<string> | null;
  decision: ReadonlySet<string> | null;
  escalate: readonly (ReadonlySet<string> | null)[];
}

/**
 * What decides a finding: `where`, `each`, `assert`, `discriminator` and the `let` names these read
 * (a `let` only for the message does not: the message says what it can); apart, what decides its
 * severity: each `escalate` condition and the `let` names it reads.
 */
function fieldsRead(rule: LoadedRule): FieldsRead {
  const lets = rule.let ?? {};
  const letNames = new Set(Object.keys(lets));
  const collect = (exprs: unknown[]): Set<string> | null => {
    const out = new Set<string>();
    const pending = [...exprs];
    const expanded = new Set<string>();
    while (pending.length > 0) {
      const { reads, opaque } = scopeReads(pending.pop());
      if (opaque) return null;
      for (const { steps } of reads) {
        const head = steps[0]!;
        if (head === 'item') continue; // an item of `each`, whose own reads are counted
        if (letNames.has(head)) {
          if (!expanded.has(head)) {
            expanded.add(head);
            pending.push(lets[head]);
          }
          continue;
        }
        out.add(steps.join('.'));
      }
    }
    return out;
  };
  return {
    where: rule.where === undefined ? new Set() : collect([rule.where]),
    decision: collect([rule.each, rule.assert, rule.discriminator].filter((e) => e !== undefined)),
    escalate: (rule.escalate ?? []).map((step) => collect([step.when])),
  };
}

const overlaps = (reads: ReadonlySet<string> | null, field: string): boolean => {
  // The empty path is the whole subject: a subject that may not exist (sources the unread ledger may name).
  if (reads === null || field === '') return true;
  for (const path of reads)
    if (path === field || path.startsWith(`${field}.`) || field.startsWith(`${path}.`)) return true;
  return false;
};

/**
 * Speed: what is worked out once per rule rather than once per subject (the walks of its expressions).
 * `letsFirst` false lets the `let` values wait until a subject fails the assertion: most subjects pass,
 * and the messages' texts of MA2001 were most of its cost.
 */
interface RulePlan {
  reads: FieldsRead;
  /** overlaps(reads.where, field) and overlaps(reads.decision, field), remembered by field: subjects share fields. */
  blocksWhere: (field: string) => boolean;
  blocksDecision: (field: string) => boolean;
  lets: readonly [string, unknown][];
  letsFirst: boolean;
  /** A `where` that is one `and`: its conditions apart (see leftOutOnKnownFacts). */
  whereConditions: readonly { condition: unknown; reads: ReadonlySet<string> | null }[];
}

/** overlaps(reads, field), remembered for each field asked (a set's unknown fields are few). */
function overlapsOnce(reads: ReadonlySet<string> | null): (field: string) => boolean {
  const known = new Map<string, boolean>();
  return (field) => {
    let answer = known.get(field);
    if (answer === undefined) known.set(field, (answer = overlaps(reads, field)));
    return answer;
  };
}

const plans = new WeakMap<LoadedRule, RulePlan>();

function planOf(rule: LoadedRule): RulePlan {
  let plan = plans.get(rule);
  if (plan === undefined) {
    const lets = rule.let === undefined ? [] : Object.entries(rule.let);
    // Whether the assertion may read one of the `let` names (when in doubt, it may).
    const reads = fieldsRead(rule);
    plan = {
      reads,
      blocksWhere: overlapsOnce(reads.where),
      blocksDecision: overlapsOnce(reads.decision),
      lets,
      letsFirst: lets.length > 0 && mayReadNames(rule.assert, new Set(Object.keys(rule.let ?? {}))),
      whereConditions: whereConditionsOf(rule),
    };
    plans.set(rule, plan);
  }
  return plan;
}

/**
 * The severity of a failing item: the first `escalate` step whose condition holds, else the rule's
 * own. A step whose condition reads an unknown fact, reached before any step that holds, leaves the
 * severity at the rule's own and says which facts were not known: an unread source never raises
 * (nor lowers) a severity (docs/history.md).
 */
function severityOf(
  rule: LoadedRule,
  scope: unknown,
  unknown: readonly UnknownFact[],
): { severity: Severity; unknownEscalation?: Finding['unknownEscalation'] } {
  const steps = rule.escalate ?? [];
  const { reads } = planOf(rule);
  for (const [i, step] of steps.entries()) {
    if (unknown.length > 0) {
      const blocking = unknown.filter((u) => overlaps(reads.escalate[i] ?? null, u.field));
      if (blocking.length > 0) {
        return {
          severity: rule.severity,
          unknownEscalation: {
            fields: [...new Set(blocking.map((u) => u.field))],
            sources: [...new Set(blocking.map((u) => u.source))].sort(),
            reasons: [...new Set(blocking.map((u) => u.reason))],
          },
        };
      }
    }
    if (truthy(applyLogic(step.when, scope))) return { severity: step.severity };
  }
  return { severity: rule.severity };
}

/** The end of a message whose severity was not checked: the severity it has, and what was not known. */
export function severityNote(severity: Severity, u: UnknownEscalation): string {
  const kept = u.keptFrom !== undefined ? `kept at ${severity} as last checked (${u.keptFrom})` : `left at ${severity}`;
  return ` (severity ${kept}: ${u.fields.join(', ')} not known: ${u.reasons.join('; ')})`;
}

function findingsOf(
  rule: LoadedRule,
  subject: Subject,
  whereDone: boolean,
  unknown: readonly UnknownFact[],
  probe?: MessageProbe,
): Finding[] {
  const data = subject.data as Readonly<Record<string, unknown>>; // rules read it as JSON
  if (!whereDone && rule.where !== undefined && !truthy(applyLogic(rule.where, data))) return NO_FINDINGS;
  const items: readonly unknown[] = rule.each === undefined ? ONE_ITEM : toList(applyLogic(rule.each, data));
  const { lets, letsFirst } = planOf(rule);
  // Speed: a subject that passes (nearly all) makes no list of findings, and no function per item.
  let findings: Finding[] | undefined;
  // Indexed: this loop runs for every rule on every subject, and an iterator here was ~20 MB a run.
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    // Speed: the subject's own data is the scope until something is added to it (rules never write to their scope).
    let scope: Record<string, unknown> = rule.each === undefined ? data : { ...data, item };
    if (letsFirst) scope = withLets(lets, data, scope);
    if (truthy(applyLogic(rule.assert, scope))) continue;
    if (!letsFirst) scope = withLets(lets, data, scope);
    const { severity, unknownEscalation } = severityOf(rule, scope, unknown);
    const discriminator = discriminatorOf(rule, subject, item, scope);
    const host = String(data['host']);
    // The ledger allows the subject to break this rule (`allow:` naming its id or name): reported, suppressed.
    const allowance = subject.allowances?.find((a) => a.rule === rule.id || a.rule === rule.name);
    (findings ??= []).push({
      host,
      ruleId: rule.id,
      ruleName: rule.name,
      severity,
      fingerprint: fingerprintOf(host, rule.id, subject.about, discriminator),
      subject: { ...subject.about },
      discriminator,
      message:
        renderTemplate(rule.message, scope, probe?.unfilled) +
        (unknownEscalation ? severityNote(severity, unknownEscalation) : ''),
      locations: subject.locate(item),
      ...(subject.module !== null ? { module: subject.module } : {}),
      ...(subject.resource !== null ? { resource: subject.resource } : {}),
      ...(unknownEscalation ? { unknownEscalation } : {}),
      ...(allowance ? { suppressed: { justification: allowance.reason, allowedBy: allowance.by } } : {}),
    });
  }
  return findings ?? NO_FINDINGS;
}

/** The scope with the rule's `let` values bound, in order (a copy of the subject's data when it is still that). */
function withLets(
  lets: readonly [string, unknown][],
  data: Readonly<Record<string, unknown>>,
  scope: Record<string, unknown>,
): Record<string, unknown> {
  if (lets.length === 0) return scope;
  const bound = scope === data ? { ...data } : scope;
  for (const [name, expr] of lets) {
    bound[name] = applyLogic(expr, bound);
    changed(bound);
  }
  return bound;
}

function toList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === null || value === undefined) return [];
  throw new Error(`'each' must give a list, got ${typeof value}`);
}

/** The finding with the discriminator `<discriminator>#<n>` for the smallest n >= 2 whose fingerprint is still free. */
function nextOccurrence(finding: Finding, taken: ReadonlySet<string>): Finding {
  for (let n = 2; ; n++) {
    const discriminator = `${finding.discriminator ?? ''}#${n}`;
    const fingerprint = fingerprintOf(finding.host, finding.ruleId, finding.subject, discriminator);
    if (!taken.has(fingerprint)) return { ...finding, discriminator, fingerprint };
  }
}

export const compareFindings = (a: Finding, b: Finding): number =>
  compareText(a.host, b.host) ||
  compareText(a.ruleId, b.ruleId) ||
  compareText(a.subject.kind, b.subject.kind) ||
  compareText(a.subject.id, b.subject.id) ||
  compareText(a.discriminator ?? '', b.discriminator ?? '');

/**
 * Rules x subjects -> findings, deterministic. A rule that throws on one subject becomes a
 * notification; every other rule and subject still reports (nothing lost).
 */
export function evaluate(
  snapshot: Snapshot,
  subjects: AnySubjectSets,
  rules: readonly LoadedRule[],
  history: HistoryInput = [],
  options: EvaluateOptions = {},
): Evaluation {
  return evaluateChunks(snapshot, (set) => [subjects[set]], rules, history, options);
}

/** What one rule gave, kept apart until every rule has run (evaluateChunks). */
interface RuleOutcomes {
  findings: Finding[];
  notChecked: NotChecked[];
  checks: Check[];
  errors: Notification[];
}

const copyOutcomes = (o: RuleOutcomes): RuleOutcomes => ({
  findings: [...o.findings],
  notChecked: [...o.notChecked],
  checks: [...o.checks],
  errors: [...o.errors],
});

/** Appends one by one: a host's list may be longer than a call's arguments may be. */
function addOutcomes(to: RuleOutcomes, from: RuleOutcomes): void {
  for (const f of from.findings) to.findings.push(f);
  for (const n of from.notChecked) to.notChecked.push(n);
  for (const c of from.checks) to.checks.push(c);
  for (const e of from.errors) to.errors.push(e);
}

/**
 * evaluate, with each set's subjects given a chunk at a time (`subjectChunks`, src/facts/subjects.ts): every
 * rule of a set checks a chunk before the next one is made, so that a large host's subjects never all live
 * at once. What it gives is evaluate's on the whole sets: each rule's outcomes are kept apart, in the order of
 * its set's subjects, and joined in the order of the rules' ids. Each set is asked for once (once per rule
 * when two rules share an id: passesOf).
 */
export function evaluateChunks(
  snapshot: Snapshot,
  chunksOf: SubjectChunks,
  rules: readonly LoadedRule[],
  history: HistoryInput = [],
  options: EvaluateOptions = {},
): Evaluation {
  const host = snapshot.host.hostname;
  const fromCollection =
    (level: Notification['level']) =>
    (p: Problem): Notification => ({
      host,
      level,
      kind: 'collection',
      source: p.source,
      ...(p.subject !== undefined ? { subject: p.subject } : {}),
      message: p.message,
    });
  const notifications: Notification[] = [
    ...snapshot.problems.map(fromCollection('error')),
    ...(snapshot.notes ?? []).map(fromCollection('note')),
  ];
  for (const note of historyNotes(snapshot, history))
    notifications.push({ host, level: 'note', kind: 'collection', source: 'history', message: note });
  const ordered = [...rules].sort((a, b) => compareText(a.id, b.id));
  const outcomes: RuleOutcomes[] = ordered.map(() => ({ findings: [], notChecked: [], checks: [], errors: [] }));
  const emitted = new Set<string>();
  // Each map a rule measures (src/policy/budget.ts) is walked once per snapshot, not once per operator using it.
  const unique = new Set(ordered.map((r) => r.id)).size === ordered.length;
  measuringOnce(() => {
    for (const { set, indexes } of passesOf(ordered)) {
      let first = true;
      for (const chunk of chunksOf(set)) {
        for (const i of indexes) {
          const rule = ordered[i]!;
          // A rule's first chunk given the same subjects as last time gives what it gave: its fingerprints are its own
          // (they carry its id), so numbering the occurrences of one of them needs none of the other rules'.
          const memo = first && unique ? options.outcomes : undefined;
          const checks = options.recordChecks === true;
          const kept = memo?.keptPass(rule, chunk, checks);
          if (kept !== undefined) {
            addOutcomes(outcomes[i]!, kept);
            for (const f of kept.findings) emitted.add(f.fingerprint);
            continue;
          }
          checkChunk(host, rule, chunk, outcomes[i]!, emitted, options.recordChecks, options.outcomes);
          memo?.keepPass(rule, chunk, checks, copyOutcomes(outcomes[i]!));
        }
        first = false;
      }
    }
  });
  const findings = outcomes.flatMap((o) => o.findings);
  const notChecked = outcomes.flatMap((o) => o.notChecked);
  for (const o of outcomes) notifications.push(...o.errors);
  notifications.push(...notCheckedNotifications(host, notChecked), ...unknownEscalationNotifications(host, findings));
  return {
    host,
    takenAt: snapshot.takenAt,
    ledgerPath: snapshot.ledger.path,
    complete: notifications.every((n) => n.level !== 'error'),
    findings: findings.sort(compareFindings),
    notifications,
    ...(options.recordChecks ? { checks: outcomes.flatMap((o) => o.checks) } : {}),
    ...(notChecked.length > 0 ? { notChecked } : {}),
  };
}

/**
 * The passes over the sets: each set once, with the rules (their places in `ordered`) that check it. Findings of
 * one identity from two rules sharing an id (a pack loader refuses those; a caller may not) are numbered in rule
 * order, so then each rule has a pass of its own, in order, over its whole set.
 */
function passesOf(ordered: readonly LoadedRule[]): { set: SubjectSetName; indexes: number[] }[] {
  if (new Set(ordered.map((r) => r.id)).size < ordered.length) {
    return ordered.map((rule, i) => ({ set: rule.subject, indexes: [i] }));
  }
  const bySet = new Map<SubjectSetName, number[]>();
  ordered.forEach((rule, i) => {
    const indexes = bySet.get(rule.subject);
    if (indexes) indexes.push(i);
    else bySet.set(rule.subject, [i]);
  });
  return [...bySet].map(([set, indexes]) => ({ set, indexes }));
}

/** One rule on each subject of a chunk, in order; what it gives goes to the rule's own outcomes. */
function checkChunk(
  host: string,
  rule: LoadedRule,
  chunk: readonly Subject[],
  out: RuleOutcomes,
  emitted: Set<string>,
  recordChecks: boolean | undefined,
  memo: OutcomeMemo | undefined,
): void {
  for (const subject of chunk) {
    try {
      // Within the evaluation budget (src/policy/budget.ts): past it, the catch below says so.
      const outcome = memo !== undefined ? memo.check(rule, subject) : withBudgetOf(checkRule, rule, subject);
      if ('unknown' in outcome) {
        out.notChecked.push({
          ruleId: rule.id,
          subject: { ...subject.about },
          part: subject.part,
          sources: [...new Set(outcome.unknown.map((u) => u.source))].sort(),
          reasons: [...new Set(outcome.unknown.map((u) => u.reason))],
        });
        continue;
      }
      const found = outcome.findings;
      // A subject the rule does not apply to is no check of it (its `where` is evaluated twice only here).
      const check: Check | undefined =
        recordChecks && applies(rule, subject)
          ? {
              ruleId: rule.id,
              subject:
                `${String((subject.data as { kind?: unknown }).kind)} ` + String((subject.data as { id?: unknown }).id),
              fingerprints: [],
            }
          : undefined;
      if (check) out.checks.push(check);
      if (found.length === 0) continue;
      const own = new Set<string>();
      for (const finding of found) {
        // Two items of one subject with one discriminator are one finding for alerting: keep the first.
        if (own.has(finding.fingerprint)) continue;
        own.add(finding.fingerprint);
        // Two subjects with one identity (ledger entries sharing an id, or without ids on one line)
        // are two findings: the later one is told apart by an occurrence number, never dropped.
        const kept = emitted.has(finding.fingerprint) ? nextOccurrence(finding, emitted) : finding;
        emitted.add(kept.fingerprint);
        out.findings.push(kept);
        check?.fingerprints.push(kept.fingerprint);
      }
    } catch (err) {
      out.errors.push({
        host,
        level: 'error',
        kind: 'evaluation',
        source: rule.id,
        subject: `${subject.about.kind} ${subject.about.id}`,
        message:
          `rule ${rule.id} (${rule.name}) failed on ${subject.about.kind} ${subject.about.id}: ` +
          (err as Error).message,
      });
    }
  }
}

/** How many subjects a grouped notification names before "and N more". */
const SHOWN = 5;

/**
 * One error notification per rule and set of sources not read, naming the first few subjects of the
 * group: every format shows what was not checked, and the run is incomplete. `say` words the message
 * from the group's first item and the subjects shown.
 */
function groupedErrors<T extends { ruleId: string }>(
  host: string,
  items: readonly T[],
  sourcesOf: (item: T) => readonly string[],
  nameOf: (item: T) => string,
  say: (first: T, shown: string) => string,
): Notification[] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = JSON.stringify([item.ruleId, sourcesOf(item)]);
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  return [...groups.values()].map((list) => {
    const first = list[0]!;
    const names = [...new Set(list.map(nameOf))];
    const shown = names.slice(0, SHOWN).join(', ') + (names.length > SHOWN ? ` and ${names.length - SHOWN} more` : '');
    return {
      host,
      level: 'error' as const,
      kind: 'evaluation' as const,
      source: first.ruleId,
      subject: sourcesOf(first).join(','),
      message: say(first, shown),
    };
  });
}

/** How the notifications of severities not checked begin, after `rule ID: ` (src/report/baseline.ts rewrites them). */
export const SEVERITY_NOT_CHECKED = 'severity not checked on ';

/**
 * Findings that kept their rule's severity (or the baseline's, src/report/baseline.ts) because an `escalate`
 * condition read unknown facts: the severity was not checked, so the run is incomplete (exit 3), and every format
 * says which findings.
 */
export function unknownEscalationNotifications(host: string, findings: readonly Finding[]): Notification[] {
  const notChecked = findings.filter((f) => f.unknownEscalation !== undefined);
  // Kept at the baseline's severity, or left at the rule's own: grouped apart, since they are worded apart.
  return [true, false].flatMap((kept) =>
    groupedErrors(
      host,
      notChecked.filter((f) => (f.unknownEscalation!.keptFrom !== undefined) === kept),
      (f) => f.unknownEscalation!.sources,
      (f) => `${f.subject.kind} ${f.subject.id}${f.discriminator !== null ? ` (${f.discriminator})` : ''}`,
      (f, shown) =>
        `rule ${f.ruleId}: ${SEVERITY_NOT_CHECKED}${shown}, ` +
        (kept
          ? `kept at ${f.severity} as last checked (${f.unknownEscalation!.keptFrom}) `
          : `left at ${f.severity} `) +
        `(${f.unknownEscalation!.fields.join(', ')} not known: ${f.unknownEscalation!.reasons[0]})`,
    ),
  );
}

/** Rules not checked on subjects whose facts were unknown. */
function notCheckedNotifications(host: string, notChecked: readonly NotChecked[]): Notification[] {
  return groupedErrors(
    host,
    notChecked,
    (n) => n.sources,
    (n) => `${n.subject.kind} ${n.subject.id}${n.part !== null ? ` (${n.part})` : ''}`,
    (n, shown) => `rule ${n.ruleId} not checked on ${shown}: ${n.reasons[0]}`,
  );
}
