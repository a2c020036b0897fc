import { withRuleFields } from './finding-fields.js';
import { allFindings, allNotifications, summarize, type Report } from './report.js';

export const JSON_REPORT_SCHEMA = 'mesh-audit/report@1';

/** The JSON report, `mesh-audit/report@1`: policies/report.schema.json says it field by field. */
export function renderJson(report: Report): string {
  // Each finding with its rule's tags and CIS id, so that a script needs no second file to filter or join on them.
  const withRule = withRuleFields(report.rules);
  const doc = {
    schemaVersion: JSON_REPORT_SCHEMA,
    tool: report.tool,
    generatedAt: report.generatedAt,
    summary: summarize(report),
    hosts: report.evaluations.map((e) => ({ hostname: e.host, takenAt: e.takenAt, complete: e.complete })),
    ...(report.baseline ? { baseline: report.baseline.source } : {}),
    ...(report.waivers ? { waivers: report.waivers.source } : {}),
    // The packs evaluated; `shippedPack: false` when the shipped one was replaced on purpose.
    ...(report.policy ? { policy: report.policy } : {}),
    findings: allFindings(report).map(withRule),
    ...(report.baseline ? { absent: report.baseline.absent.map(withRule) } : {}),
    // Carried forward from the baseline, not checked tonight: the next run's baseline reads them as findings.
    ...(report.baseline?.notChecked?.length ? { notCheckedFindings: report.baseline.notChecked.map(withRule) } : {}),
    ...(report.evaluations.some((e) => e.notChecked?.length)
      ? { notChecked: report.evaluations.flatMap((e) => (e.notChecked ?? []).map((n) => ({ host: e.host, ...n }))) }
      : {}),
    notifications: allNotifications(report),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}
