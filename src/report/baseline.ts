import { compareFindings } from '../evaluate/evaluate.js';
import type { BaselineState, Evaluation, Finding } from '../evaluate/finding.js';

/** What a baseline keeps of a finding: what the earlier report said (its JSON findings). */
export type BaselineFinding = Pick<Finding, 'host' | 'ruleId' | 'ruleName' | 'severity' | 'fingerprint' | 'subject' | 'discriminator' | 'message' | 'locations'>;

/** A finding's state against the earlier findings, by fingerprint. */
function stateAgainst(before: ReadonlyMap<string, BaselineFinding>, f: BaselineFinding): Exclude<BaselineState, 'absent'> {
  const old = before.get(f.fingerprint);
  return old === undefined ? 'new' : old.message === f.message && old.severity === f.severity ? 'unchanged' : 'updated';
}

export interface FindingsDiff {
  new: BaselineFinding[];
  updated: BaselineFinding[];
  unchanged: BaselineFinding[];
  absent: BaselineFinding[];
}

/** Two reports' findings side by side (pure): what is new, updated, unchanged, and gone. */
export function diffFindings(older: readonly BaselineFinding[], newer: readonly BaselineFinding[]): FindingsDiff {
  const before = new Map(older.map((f) => [f.fingerprint, f]));
  const after = new Set(newer.map((f) => f.fingerprint));
  const diff: FindingsDiff = { new: [], updated: [], unchanged: [], absent: older.filter((f) => !after.has(f.fingerprint)) };
  for (const f of newer) diff[stateAgainst(before, f)].push(f);
  return diff;
}

/**
 * Marks each finding new, unchanged or updated against the baseline's, by fingerprint, and lists
 * the baseline's findings that are gone as absent (pure). A host whose evaluation is incomplete
 * declares nothing absent: what was not read is not gone; nor is a subject the scope left out.
 */
export function applyBaseline(evaluations: readonly Evaluation[], baseline: readonly BaselineFinding[]): { evaluations: Evaluation[]; absent: Finding[] } {
  const before = new Map(baseline.map((f) => [f.fingerprint, f]));
  const seen = new Set<string>();
  const marked = evaluations.map((e) => ({
    ...e,
    findings: e.findings.map((f): Finding => {
      seen.add(f.fingerprint);
      return { ...f, state: stateAgainst(before, f) };
    }),
  }));
  const completeHosts = new Set(evaluations.filter((e) => e.complete).map((e) => e.host));
  // A subject the scope left out is not checked, so its findings are not gone either.
  const outOfScope = new Set(evaluations.flatMap((e) => (e.outOfScope ?? []).map((s) => `${e.host}\u0000${s.kind}\u0000${s.id}`)));
  const absent = baseline
    .filter((f) => !seen.has(f.fingerprint) && completeHosts.has(f.host) && !outOfScope.has(`${f.host}\u0000${f.subject.kind}\u0000${f.subject.id}`))
    .map((f): Finding => ({ ...f, locations: f.locations ?? { physical: [], logical: [] }, state: 'absent' }))
    .sort(compareFindings);
  return { evaluations: marked, absent };
}
