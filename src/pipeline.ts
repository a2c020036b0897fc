import type { HistoryInput } from './facts/history.js';
import { buildSubjects, subjectChunks } from './facts/subjects.js';
import { evaluate, evaluateChunks, OutcomeMemo, type EvaluateOptions } from './evaluate/evaluate.js';
import { SubjectMemo, type SubjectReuse } from './facts/incremental-subjects.js';
import type { SubjectSets } from './policy/subject.js';
import type { LoadedRule, PolicyPack, Profile } from './policy/types.js';
import { policyUsed, type Report } from './report/report.js';
import type { Evaluation, Finding } from './evaluate/finding.js';
import type { Snapshot } from './snapshot/types.js';
import { DEFAULT_DOCS_URL, TOOL_NAME, TOOL_URI, TOOL_VERSION } from './version.js';
import { applyBaseline, withFirstSeen, type BaselineFinding } from './report/baseline.js';
import { applyWaivers, WAIVER_EXPIRED_RULE, type Waiver } from './report/waivers.js';
import { applyScope, isEmptyScope, type Scope } from './scope.js';
import { skippedOf, withoutSkipped } from './policy/skip.js';

/** The rules a profile runs (all of them without one), less those `skip` names (src/policy/skip.ts). */
export function rulesOf(
  rules: readonly LoadedRule[],
  profile: Profile | undefined,
  skip: readonly string[] = [],
): LoadedRule[] {
  return withoutSkipped(
    rules.filter((r) => profile === undefined || r.profiles.includes(profile)),
    skip,
  );
}

/** The rules of the profile that `skip` left out: every report names them. */
export const skippedRulesOf = (
  rules: readonly LoadedRule[],
  profile: Profile | undefined,
  skip: readonly string[],
): string[] => skippedOf(rulesOf(rules, profile), skip);

/**
 * The pure core for one host: snapshot -> facts -> (scope) -> findings. `rules` already selected (rulesOf).
 * A scope leaves subjects out; how many is told in the evaluation, never silently dropped.
 */
export function auditSnapshot(
  snapshot: Snapshot,
  history: HistoryInput,
  rules: readonly LoadedRule[],
  options: AuditOptions = {},
): Evaluation {
  const { scoped, ...evaluateOptions } = options;
  // Unscoped, the subjects are made as the evaluation takes them, a chunk at a time (subjectChunks).
  if (!scoped || isEmptyScope(scoped.scope))
    return evaluateChunks(snapshot, subjectChunks(snapshot, history), rules, history, evaluateOptions);
  return scopedEvaluation(snapshot, buildSubjects(snapshot, history), history, rules, options);
}

type AuditOptions = EvaluateOptions & { scoped?: { scope: Scope; now: Date } | undefined };

/** The evaluation of subjects already made, the scope (when one is given) leaving some out and counting them. */
function scopedEvaluation(
  snapshot: Snapshot,
  subjects: SubjectSets,
  history: HistoryInput,
  rules: readonly LoadedRule[],
  options: AuditOptions,
): Evaluation {
  const { scoped, ...evaluateOptions } = options;
  if (!scoped || isEmptyScope(scoped.scope)) return evaluate(snapshot, subjects, rules, history, evaluateOptions);
  const applied = applyScope(subjects, snapshot, scoped.scope, scoped.now);
  const evaluation = evaluate(snapshot, applied.subjects, rules, history, evaluateOptions);
  return {
    ...evaluation,
    notifications: [...evaluation.notifications, ...applied.notifications],
    // Counted when the scope left something out (as premigrate's plan does): a scope that matched nothing is no news.
    ...(Object.values(applied.excluded).some((n) => n > 0) ? { excluded: applied.excluded } : {}),
    outOfScope: applied.outOfScope,
    ...(applied.everyHostListenerOut ? { everyHostListenerOut: true } : {}),
  };
}

/** What the last IncrementalAudit.audit did: items whose subjects were made anew or taken again, rule checks made. */
export interface IncrementalWork extends SubjectReuse {
  ruleChecks: number;
}

/**
 * auditSnapshot for a sequence of snapshots of one host (serve, issue 44): each audit gives exactly what
 * auditSnapshot gives on its snapshot (test/unit/incremental-audit.test.ts holds the two equal), but a subject whose
 * inputs did not change since the last audit is not made again (SubjectMemo, src/facts/incremental-subjects.ts) and
 * no rule is checked on it again (OutcomeMemo, src/evaluate/evaluate.ts). The notifications, what was not checked,
 * the scope's counts and the findings' order are worked out whole each time from those outcomes. For one rule list:
 * another list (a SIGHUP read the packs again) starts afresh, as does another host.
 */
export class IncrementalAudit {
  private subjects = new SubjectMemo();
  private outcomes = new OutcomeMemo([]);
  private host: string | null = null;
  private work: IncrementalWork = { made: 0, reused: 0, ruleChecks: 0 };

  /** What the last audit made anew, took again, and how many rule checks it made. */
  lastWork(): IncrementalWork {
    return { ...this.work };
  }

  audit(
    snapshot: Snapshot,
    history: HistoryInput,
    rules: readonly LoadedRule[],
    options: { scoped?: { scope: Scope; now: Date } | undefined } = {},
  ): Evaluation {
    if (rules !== this.outcomes.rules || snapshot.host.hostname !== this.host) {
      this.subjects = new SubjectMemo();
      this.outcomes = new OutcomeMemo(rules);
      this.host = snapshot.host.hostname;
    }
    this.outcomes.checks = 0;
    const subjects = this.subjects.build(snapshot, history);
    const evaluation = scopedEvaluation(snapshot, subjects, history, rules, { ...options, outcomes: this.outcomes });
    this.work = { ...this.subjects.lastReuse(), ruleChecks: this.outcomes.checks };
    return evaluation;
  }
}

/** The note each host's evaluation carries when the shipped pack was replaced on purpose. */
export const SHIPPED_PACK_REPLACED =
  'the shipped pack was not loaded (--no-default-policy or defaultPolicy: false): its rules did not run, and what ' +
  'they would find is not checked';

/**
 * The report of evaluations already made, for every writer. `packs`: the packs loaded, said in every
 * format (and, when the shipped one is not among them, a note on each host). `docsUrl`: the setting.
 * `skipped`: the rules of the profile the `skip` setting left out (skippedRulesOf), said in every format.
 */
export function reportOf(
  evaluations: Evaluation[],
  rules: readonly LoadedRule[],
  options: {
    now: Date;
    startedAt?: Date;
    packs?: readonly PolicyPack[];
    docsUrl?: string;
    skipped?: readonly string[];
  },
): Report {
  const skipped = options.skipped ?? [];
  const policy = options.packs
    ? {
        ...policyUsed(options.packs),
        rulesRun: rules.map((r) => r.id).sort(),
        ...(skipped.length > 0 ? { skipped: [...skipped] } : {}),
      }
    : undefined;
  const replaced = policy !== undefined && !policy.shippedPack;
  return {
    tool: { name: TOOL_NAME, version: TOOL_VERSION, uri: TOOL_URI },
    docsUrl: options.docsUrl ?? DEFAULT_DOCS_URL,
    generatedAt: options.now.toISOString(),
    rules: [...rules],
    evaluations: replaced
      ? evaluations.map((e) => ({
          ...e,
          notifications: [
            ...e.notifications,
            {
              host: e.host,
              level: 'note' as const,
              kind: 'evaluation' as const,
              source: 'policy',
              message: SHIPPED_PACK_REPLACED,
            },
          ],
        }))
      : evaluations,
    ...(policy ? { policy } : {}),
    durationSeconds: Math.max(0, (options.now.getTime() - (options.startedAt ?? options.now).getTime()) / 1000),
  };
}

/** The pure core, top to bottom: snapshots -> facts -> findings -> a report for every writer. */
export function auditSnapshots(
  snapshots: readonly Snapshot[],
  history: HistoryInput,
  rules: readonly LoadedRule[],
  options: {
    profile?: Profile | undefined;
    now: Date;
    startedAt?: Date;
    packs?: readonly PolicyPack[];
    scoped?: { scope: Scope; now: Date };
    docsUrl?: string;
    /** Rule ids not evaluated on purpose (the `skip` setting). */
    skip?: readonly string[];
  },
): Report {
  const skip = options.skip ?? [];
  const selected = rulesOf(rules, options.profile, skip);
  return reportOf(
    snapshots.map((s) => auditSnapshot(s, history, selected, { scoped: options.scoped })),
    selected,
    { ...options, skipped: skippedRulesOf(rules, options.profile, skip) },
  );
}

/**
 * What alerting needs on top of the findings (pure): waivers first (an expired waiver is a finding
 * too), then each finding's state against the baseline, and the baseline's findings now gone.
 */
export function triage(
  report: Report,
  options: {
    waivers?: { source: string; waivers: readonly Waiver[] };
    baseline?: { source: string; generatedAt?: string; findings: readonly BaselineFinding[] };
    now: Date;
  },
): Report {
  let evaluations = withFirstSeen(report.evaluations);
  let rules = report.rules;
  if (options.waivers) {
    evaluations = applyWaivers(evaluations, options.waivers.waivers, options.now);
    if (evaluations.some((e) => e.findings.some((f) => f.ruleId === WAIVER_EXPIRED_RULE.id)))
      rules = [...rules, WAIVER_EXPIRED_RULE];
  }
  if (!options.baseline)
    return {
      ...report,
      rules,
      evaluations,
      ...(options.waivers ? { waivers: { source: options.waivers.source } } : {}),
    };
  // The rules that looked this time: a baseline finding of any other is not checked, never absent.
  const ran = new Set([...rules.map((r) => r.id), ...(options.waivers ? [WAIVER_EXPIRED_RULE.id] : [])]);
  const marked = applyBaseline(evaluations, options.baseline.findings, options.baseline.generatedAt || undefined, ran);
  const notRun = marked.notChecked.filter((f) => !ran.has(f.ruleId));
  const absentRules = new Set(marked.absent.map((f) => f.ruleId));
  // An absent finding's rule may be one this run no longer loads (a built-in, another profile).
  if (absentRules.has(WAIVER_EXPIRED_RULE.id) && !rules.includes(WAIVER_EXPIRED_RULE))
    rules = [...rules, WAIVER_EXPIRED_RULE];
  return {
    ...report,
    rules,
    evaluations: withNotRunNotes(marked.evaluations, notRun, report.policy?.skipped ?? []),
    baseline: { source: options.baseline.source, absent: marked.absent, notChecked: marked.notChecked },
    ...(options.waivers ? { waivers: { source: options.waivers.source } } : {}),
  };
}

/** A note on each host whose baseline findings were carried because their rule did not run this time. */
function withNotRunNotes(
  evaluations: Evaluation[],
  notRun: readonly Finding[],
  skipped: readonly string[],
): Evaluation[] {
  const noted = new Set<string>();
  return evaluations.map((e) => {
    const mine = notRun.filter((f) => f.host === e.host);
    if (mine.length === 0 || noted.has(e.host)) return e;
    noted.add(e.host);
    const ids = [...new Set(mine.map((f) => f.ruleId))].sort();
    // A rule skipped by configuration is named as such: the operator turned it off, no pack went missing.
    const why = ids.every((id) => skipped.includes(id))
      ? 'skipped by configuration'
      : ids.some((id) => skipped.includes(id))
        ? 'skipped by configuration, a pack not loaded, or another --profile'
        : 'a pack not loaded, or another --profile';
    const message =
      `${mine.length} finding${mine.length === 1 ? '' : 's'} of the baseline from rule${ids.length === 1 ? '' : 's'} ` +
      `that did not run this time (${ids.join(', ')}: ${why}) ` +
      'carried forward not checked: a rule that did not run has not seen them go';
    return {
      ...e,
      notifications: [
        ...e.notifications,
        { host: e.host, level: 'note' as const, kind: 'evaluation' as const, source: 'baseline', message },
      ],
    };
  });
}
