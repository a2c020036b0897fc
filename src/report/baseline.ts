import {
  compareFindings,
  severityNote,
  SEVERITY_NOT_CHECKED,
  unknownEscalationNotifications,
} from '../evaluate/evaluate.js';
import type { BaselineState, Evaluation, Finding } from '../evaluate/finding.js';
import { SEVERITIES } from '../policy/types.js';

/** What a baseline keeps of a finding: what the earlier report said (its JSON findings). */
export type BaselineFinding = Pick<
  Finding,
  | 'host'
  | 'ruleId'
  | 'ruleName'
  | 'severity'
  | 'fingerprint'
  | 'subject'
  | 'discriminator'
  | 'message'
  | 'locations'
  | 'firstSeen'
  | 'unknownEscalation'
>;

/** A finding's message without the note a severity not checked adds to it: the words its rule said. */
function ruleWords(f: BaselineFinding): string {
  const u = f.unknownEscalation;
  if (u === undefined) return f.message;
  const note = severityNote(f.severity, u);
  return f.message.endsWith(note) ? f.message.slice(0, -note.length) : f.message;
}

/** A finding's state against the earlier findings, by fingerprint. */
function stateAgainst(
  before: ReadonlyMap<string, BaselineFinding>,
  f: BaselineFinding,
): Exclude<BaselineState, 'absent'> {
  const old = before.get(f.fingerprint);
  if (old === undefined) return 'new';
  // A severity kept as last checked, with the same words, is the same finding: not updated by a night's unread source.
  return ruleWords(old) === ruleWords(f) && old.severity === f.severity ? 'unchanged' : 'updated';
}

/**
 * A finding whose severity could not be checked tonight (an `escalate` condition read an unknown fact) keeps the
 * severity the baseline had for it when that one was checked, rather than the rule's own: an unread source changes
 * no severity, so an alert raised yesterday is neither lowered nor replaced by another for one bad night. The
 * message and the notification say it was kept, and since when; without such a baseline finding it is left as is.
 */
function keptAsLastChecked(f: Finding, old: BaselineFinding | undefined, baselineTime: string | undefined): Finding {
  const u = f.unknownEscalation;
  if (u === undefined || u.keptFrom !== undefined || old === undefined || !SEVERITIES.includes(old.severity)) return f;
  // The baseline's own severity must have been checked, or kept from a night when it was.
  const lastChecked = old.unknownEscalation === undefined ? baselineTime : old.unknownEscalation.keptFrom;
  if (lastChecked === undefined || old.severity === f.severity) return f;
  const kept = { ...u, keptFrom: lastChecked };
  return {
    ...f,
    severity: old.severity,
    unknownEscalation: kept,
    message: ruleWords(f) + severityNote(old.severity, kept),
  };
}

export interface FindingsDiff {
  new: BaselineFinding[];
  updated: BaselineFinding[];
  unchanged: BaselineFinding[];
  absent: BaselineFinding[];
  /** Not in the newer report because it did not look: its rule did not run, or its host was not read whole. */
  notChecked: BaselineFinding[];
}

/**
 * Two reports' findings side by side (pure): what is new, updated, unchanged, gone — and, when the
 * newer report says what it covered, not checked: a finding the newer run could not have seen (its
 * rule did not run there, its host's run was incomplete) is not gone.
 */
export function diffFindings(
  older: readonly BaselineFinding[],
  newer: readonly BaselineFinding[],
  newerCoverage?: { rulesRun?: ReadonlySet<string>; incompleteHosts: ReadonlySet<string> },
): FindingsDiff {
  const before = new Map(older.map((f) => [f.fingerprint, f]));
  const after = new Set(newer.map((f) => f.fingerprint));
  const missing = older.filter((f) => !after.has(f.fingerprint));
  const unseen = (f: BaselineFinding): boolean =>
    newerCoverage !== undefined &&
    (newerCoverage.incompleteHosts.has(f.host) ||
      (newerCoverage.rulesRun !== undefined && !newerCoverage.rulesRun.has(f.ruleId)));
  const diff: FindingsDiff = {
    new: [],
    updated: [],
    unchanged: [],
    absent: missing.filter((f) => !unseen(f)),
    notChecked: missing.filter(unseen),
  };
  for (const f of newer) diff[stateAgainst(before, f)].push(f);
  return diff;
}

/**
 * A subject that is a socket in the host's namespace: its id is its endpoint, `ADDRESS:PORT/PROTOCOL` (one `/`);
 * a container's own socket is `NAME/ADDRESS:PORT/PROTOCOL`, and goes with its container (src/scope.ts).
 */
const isHostListener = (subject: { kind: string; id: string }): boolean =>
  subject.kind === 'listener' && subject.id.indexOf('/') === subject.id.lastIndexOf('/');

/** Each finding with the time it was first seen: the snapshot's time, for a finding seen for the first time. */
export function withFirstSeen(evaluations: readonly Evaluation[]): Evaluation[] {
  return evaluations.map((e) => ({
    ...e,
    findings: e.findings.map((f) => (f.firstSeen !== undefined ? f : { ...f, firstSeen: e.takenAt })),
  }));
}

/**
 * Marks each finding new, unchanged or updated against the baseline's, by fingerprint, and sorts
 * the baseline's findings not found now (pure):
 * - on a host whose evaluation is complete, they are absent (gone since);
 * - on a host whose evaluation is incomplete, they are not checked: carried forward as they were
 *   (what was not read is not gone), so that the next run, comparing against this one, still knows
 *   them and finds them neither new nor absent. This is the baseline's last complete knowledge,
 *   finding by finding.
 * - a finding of a rule that did not run this time (`ranRules` given and without it: a pack not
 *   loaded, another profile) is not checked either, on any host: carried forward the same way, never
 *   absent — a rule that did not look has not seen it go.
 * A subject the scope left out is not checked either: its findings are neither absent nor carried.
 * Every finding keeps the time it was first seen (`firstSeen`) from the baseline.
 */
export function applyBaseline(
  evaluations: readonly Evaluation[],
  baseline: readonly BaselineFinding[],
  baselineTime?: string,
  ranRules?: ReadonlySet<string>,
): { evaluations: Evaluation[]; absent: Finding[]; notChecked: Finding[] } {
  const before = new Map(baseline.map((f) => [f.fingerprint, f]));
  const firstSeenOf = (old: BaselineFinding | undefined, fallback: string): string =>
    old?.firstSeen ?? (old !== undefined && baselineTime ? baselineTime : fallback);
  const seen = new Set<string>();
  const marked = evaluations.map((e) => {
    const kept = new Set<string>();
    const findings = e.findings.map((found): Finding => {
      seen.add(found.fingerprint);
      const f = keptAsLastChecked(found, before.get(found.fingerprint), baselineTime);
      if (f !== found) kept.add(f.fingerprint);
      return {
        ...f,
        state: stateAgainst(before, f),
        firstSeen: firstSeenOf(before.get(f.fingerprint), f.firstSeen ?? e.takenAt),
      };
    });
    if (kept.size === 0) return { ...e, findings };
    findings.sort(compareFindings);
    // Severities kept: the notifications about severities not checked say so (the others stand as they were).
    const notifications = [
      ...e.notifications.filter((n) => !n.message.startsWith(`rule ${n.source}: ${SEVERITY_NOT_CHECKED}`)),
      ...unknownEscalationNotifications(e.host, findings),
    ];
    return { ...e, findings, notifications };
  });
  const completeHosts = new Set(evaluations.filter((e) => e.complete).map((e) => e.host));
  const incompleteHosts = new Set(evaluations.filter((e) => !e.complete).map((e) => e.host));
  // A subject the scope left out is not checked, so its findings are not gone either.
  const outOfScope = new Set(
    evaluations.flatMap((e) => (e.outOfScope ?? []).map((s) => `${e.host}\u0000${s.kind}\u0000${s.id}`)),
  );
  const everyHostListenerOut = new Set(evaluations.filter((e) => e.everyHostListenerOut).map((e) => e.host));
  const gone = baseline.filter(
    (f) =>
      !seen.has(f.fingerprint) &&
      !outOfScope.has(`${f.host}\u0000${f.subject.kind}\u0000${f.subject.id}`) &&
      !(everyHostListenerOut.has(f.host) && isHostListener(f.subject)),
  );
  const asBefore = (f: BaselineFinding, state: BaselineState): Finding => {
    const firstSeen = f.firstSeen ?? baselineTime;
    return {
      ...f,
      // An older or hand-edited report may lack the field, whatever its type says.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      locations: f.locations ?? { physical: [], logical: [] },
      state,
      ...(firstSeen ? { firstSeen } : {}),
    };
  };
  const ran = (f: BaselineFinding): boolean => ranRules === undefined || ranRules.has(f.ruleId);
  const absent = gone
    .filter((f) => completeHosts.has(f.host) && ran(f))
    .map((f) => asBefore(f, 'absent'))
    .sort(compareFindings);
  const notChecked = gone
    .filter((f) => incompleteHosts.has(f.host) || (completeHosts.has(f.host) && !ran(f)))
    .map((f) => asBefore(f, 'unchanged'))
    .sort(compareFindings);
  return { evaluations: marked, absent, notChecked };
}
