import type { Evaluation, Finding, Notification } from '../evaluate/finding.js';
import type { LoadedRule, Severity } from '../policy/types.js';

/** What every reporter receives: pure data, rendered to text by one function per format. */
export interface Report {
  tool: { name: string; version: string; uri: string };
  /** Time the report was made; the only field allowed to differ between two runs on one snapshot. */
  generatedAt: string;
  rules: LoadedRule[];
  evaluations: Evaluation[];
}

export interface Summary {
  findings: number;
  bySeverity: Record<Severity, number>;
  byRule: Record<string, number>;
  /** Things not checked (error-level notifications): non-zero means the run is incomplete. */
  notChecked: number;
  notes: number;
  complete: boolean;
}

export const allFindings = (report: Report): Finding[] => report.evaluations.flatMap((e) => e.findings);
export const allNotifications = (report: Report): Notification[] => report.evaluations.flatMap((e) => e.notifications);

export function summarize(report: Report): Summary {
  const findings = allFindings(report);
  const bySeverity: Record<Severity, number> = { error: 0, warning: 0, note: 0 };
  const byRule: Record<string, number> = {};
  for (const f of findings) {
    bySeverity[f.severity]++;
    byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
  }
  return {
    findings: findings.length,
    bySeverity,
    byRule: Object.fromEntries(Object.entries(byRule).sort(([a], [b]) => (a < b ? -1 : 1))),
    notChecked: allNotifications(report).filter((n) => n.level === 'error').length,
    notes: allNotifications(report).filter((n) => n.level === 'note').length,
    complete: report.evaluations.every((e) => e.complete),
  };
}
