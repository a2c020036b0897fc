import type { BaselineState, Evaluation, Finding, Notification } from '../evaluate/finding.js';
import type { LoadedRule, PolicyPack, Severity } from '../policy/types.js';

/** The packs a run evaluated, and whether the shipped one was among them: said in every format. */
export interface PolicyUsed {
  /** False when the shipped pack was replaced on purpose (`--no-default-policy`, `defaultPolicy: false`). */
  shippedPack: boolean;
  /** Each pack loaded; `file` for the packs added (the shipped pack's place depends on the install). */
  packs: { id: string; version: string; shipped: boolean; file?: string; rules: number }[];
  /** The ids of the rules the run evaluated (after --profile): `diff` tells "not checked" from "absent" by them. */
  rulesRun?: string[];
  /**
   * The rules of the run's profile the `skip` setting left out on purpose (not evaluated, not in `rulesRun`), sorted;
   * absent when none was. Every format names them.
   */
  skipped?: string[];
}

export function policyUsed(packs: readonly PolicyPack[]): PolicyUsed {
  return {
    shippedPack: packs.some((p) => p.shipped === true),
    packs: packs.map((p) => ({
      id: p.pack.id,
      version: p.pack.version,
      shipped: p.shipped === true,
      ...(p.shipped === true ? {} : { file: p.file }),
      rules: p.rules.length,
    })),
  };
}

/** What every reporter receives: pure data, rendered to text by one function per format. */
export interface Report {
  tool: { name: string; version: string; uri: string };
  /** The docs folder the shipped rules' pages are in (setting `docsUrl`): their links, rule-docs.ts helpUriOf. */
  docsUrl: string;
  /** Time the report was made; the only field allowed to differ between two runs on one snapshot. */
  generatedAt: string;
  rules: LoadedRule[];
  evaluations: Evaluation[];
  /** Seconds from the start of the run to the report (collection included for a scan). */
  durationSeconds: number;
  /**
   * The baseline compared against, when one was: findings then carry a state, and gone ones are here.
   * `notChecked`: the baseline's findings not found on a host whose run was incomplete — carried
   * forward as they were (neither gone nor new), so that the next baseline still has them.
   */
  baseline?: { source: string; absent: Finding[]; notChecked?: Finding[] };
  /** The waivers file applied, when one was: findings then say whether they are suppressed. */
  waivers?: { source: string };
  /** The packs evaluated (absent for reports made without packs at hand, e.g. tests of one writer). */
  policy?: PolicyUsed;
}

export interface Summary {
  /** Open findings: those no waiver or ledger `allow:` accepts (issue 47: a waived error is not an error to fix). */
  findings: number;
  /** Open findings by severity. */
  bySeverity: Record<Severity, number>;
  /** Open findings by rule. */
  byRule: Record<string, number>;
  /** With a baseline: new, unchanged, updated (every finding of the run, accepted ones too) and absent counts. */
  byState?: Record<BaselineState, number>;
  /** With a baseline: its findings carried forward not checked (an incomplete host, a rule that did not run). */
  notCheckedFindings?: number;
  /** Findings a waiver or the ledger's `allow:` accepts, counted apart from `findings`: in the report, not to fix. */
  suppressed: number;
  /** The accepted findings by severity. */
  suppressedBySeverity: Record<Severity, number>;
  /** Things not checked (error-level notifications): non-zero means the run is incomplete. */
  notChecked: number;
  notes: number;
  complete: boolean;
  /** Subjects left out by the scope (--include/--exclude, ignore entries): counted, never dropped silently. */
  excluded?: { containers: number; files: number; ledger: number; listeners: number; total: number };
}

export const allFindings = (report: Report): Finding[] => report.evaluations.flatMap((e) => e.findings);
export const allNotifications = (report: Report): Notification[] => report.evaluations.flatMap((e) => e.notifications);
/**
 * The baseline's findings carried forward on a host whose run was incomplete: not seen tonight because
 * their facts were not read, so they still stand (unknown is never absent). Every format shows them.
 */
export const carriedFindings = (report: Report): Finding[] => report.baseline?.notChecked ?? [];
/** What stands after this run: its findings, and those carried forward unchecked. */
export const standingFindings = (report: Report): Finding[] => [...allFindings(report), ...carriedFindings(report)];

export function summarize(report: Report): Summary {
  const findings = allFindings(report);
  const bySeverity: Record<Severity, number> = { error: 0, warning: 0, note: 0 };
  const suppressedBySeverity: Record<Severity, number> = { error: 0, warning: 0, note: 0 };
  const byRule: Record<string, number> = {};
  let open = 0;
  for (const f of findings) {
    // An accepted finding stays in every report but is counted apart: the totals are what is left to fix.
    if (f.suppressed !== undefined) {
      suppressedBySeverity[f.severity]++;
      continue;
    }
    open++;
    bySeverity[f.severity]++;
    byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
  }
  return {
    findings: open,
    bySeverity,
    byRule: Object.fromEntries(Object.entries(byRule).sort(([a], [b]) => (a < b ? -1 : 1))),
    ...(report.baseline
      ? {
          byState: {
            new: findings.filter((f) => f.state === 'new').length,
            unchanged: findings.filter((f) => f.state === 'unchanged').length,
            updated: findings.filter((f) => f.state === 'updated').length,
            absent: report.baseline.absent.length,
          },
          notCheckedFindings: report.baseline.notChecked?.length ?? 0,
        }
      : {}),
    suppressed: findings.length - open,
    suppressedBySeverity,
    notChecked: allNotifications(report).filter((n) => n.level === 'error').length,
    notes: allNotifications(report).filter((n) => n.level === 'note').length,
    complete: report.evaluations.every((e) => e.complete),
    ...excludedOf(report),
  };
}

function excludedOf(report: Report): { excluded?: NonNullable<Summary['excluded']> } {
  const scoped = report.evaluations.filter((e) => e.excluded !== undefined);
  if (scoped.length === 0) return {};
  const sum = (k: 'containers' | 'files' | 'ledger' | 'listeners') => scoped.reduce((n, e) => n + e.excluded![k], 0);
  const excluded = {
    containers: sum('containers'),
    files: sum('files'),
    ledger: sum('ledger'),
    listeners: sum('listeners'),
    total: 0,
  };
  excluded.total = excluded.containers + excluded.files + excluded.ledger + excluded.listeners;
  return { excluded };
}
