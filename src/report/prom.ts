import { compareText } from '../compare.js';
import type { Report } from './report.js';

/** Label values escaped as the text exposition format wants: backslash, double quote, newline. */
const label = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (pairs: Record<string, string>): string =>
  '{' + Object.entries(pairs).map(([k, v]) => `${k}="${label(v)}"`).join(',') + '}';

/**
 * Prometheus textfile for node_exporter's textfile collector: findings by rule, severity and state,
 * the time of the last run, whether it was complete, and how long it took.
 */
export function renderProm(report: Report): string {
  const counts = new Map<string, { labels: Record<string, string>; value: number }>();
  const count = (f: { host: string; ruleId: string; ruleName: string; severity: string; suppressed?: unknown }, state: string) => {
    const l = { host: f.host, rule_id: f.ruleId, rule: f.ruleName, severity: f.severity, state, waived: f.suppressed !== undefined ? 'true' : 'false' };
    const key = JSON.stringify(l);
    const entry = counts.get(key) ?? { labels: l, value: 0 };
    entry.value++;
    counts.set(key, entry);
  };
  for (const e of report.evaluations) for (const f of e.findings) count(f, f.state ?? 'current');
  for (const f of report.baseline?.absent ?? []) count(f, 'absent');
  const series = [...counts.values()].sort((a, b) => compareText(JSON.stringify(a.labels), JSON.stringify(b.labels)));
  const at = Date.parse(report.generatedAt) / 1000;
  const lines = [
    '# HELP mesh_audit_findings Findings of the last mesh-audit run, by host, rule, severity and state (new, unchanged, updated, absent; current without a baseline).',
    '# TYPE mesh_audit_findings gauge',
    ...series.map((s) => `mesh_audit_findings${labels(s.labels)} ${s.value}`),
    '# HELP mesh_audit_last_run_timestamp_seconds When the last mesh-audit run ended, in seconds since the epoch.',
    '# TYPE mesh_audit_last_run_timestamp_seconds gauge',
    ...report.evaluations.map((e) => `mesh_audit_last_run_timestamp_seconds${labels({ host: e.host })} ${at}`),
    '# HELP mesh_audit_scan_complete 1 when every source was read and every rule ran, 0 when something was not checked.',
    '# TYPE mesh_audit_scan_complete gauge',
    ...report.evaluations.map((e) => `mesh_audit_scan_complete${labels({ host: e.host })} ${e.complete ? 1 : 0}`),
    '# HELP mesh_audit_run_duration_seconds How long the last mesh-audit run took, collection included.',
    '# TYPE mesh_audit_run_duration_seconds gauge',
    ...report.evaluations.map((e) => `mesh_audit_run_duration_seconds${labels({ host: e.host })} ${report.durationSeconds}`),
  ];
  return lines.join('\n') + '\n';
}
