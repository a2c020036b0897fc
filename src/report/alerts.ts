import type { Finding } from '../evaluate/finding.js';
import { allFindings, type Report } from './report.js';

/** An alert as Alertmanager's v2 API takes it (`POST /api/v2/alerts`). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt?: string;
  endsAt: string;
  generatorURL?: string;
}

export const INCOMPLETE_ALERT = 'MeshAuditScanIncomplete';

/**
 * The alerts of a run (pure). Findings that stand (new, unchanged, updated, not waived) fire until
 * `ttlHours` after this run, long enough to reach the next nightly run, so nothing resolves by itself
 * between two scans; absent and waived findings are resolved (endsAt = now). An incomplete scan
 * fires an alert of its own, and a complete one resolves it.
 */
export function alertsOf(report: Report, options: { ttlHours: number }): PostableAlert[] {
  const now = report.generatedAt;
  const until = new Date(Date.parse(now) + options.ttlHours * 3600_000).toISOString();
  const help = new Map(report.rules.map((r) => [r.id, r.help.split('\n\n')[0]!.replace(/\s*\n\s*/g, ' ').trim()]));
  const alertOf = (f: Finding, endsAt: string): PostableAlert => ({
    labels: { alertname: f.ruleName, rule_id: f.ruleId, severity: f.severity, host: f.host, fingerprint: f.fingerprint },
    annotations: { message: f.message, help: help.get(f.ruleId) ?? '', subject: `${f.subject.kind} ${f.subject.id}` },
    endsAt,
  });
  const alerts = [
    ...allFindings(report).map((f) => alertOf(f, f.suppressed ? now : until)),
    ...(report.baseline?.absent ?? []).map((f) => alertOf(f, now)),
  ];
  for (const e of report.evaluations) {
    const notChecked = e.notifications.filter((n) => n.level === 'error');
    alerts.push({
      labels: { alertname: INCOMPLETE_ALERT, severity: 'error', host: e.host },
      annotations: {
        message: e.complete ? 'the last scan was complete' : `the scan of ${e.host} was incomplete: ${notChecked.map((n) => n.message).join('; ')}`,
        help: 'Something could not be read or a rule failed: the findings are not the whole truth. Fix the source named, then scan again.',
      },
      endsAt: e.complete ? now : until,
    });
  }
  return alerts;
}
