import { allFindings, allNotifications, summarize, type Report } from './report.js';

export const JSON_REPORT_SCHEMA = 'mesh-audit/report@1';

export function renderJson(report: Report): string {
  const doc = {
    schemaVersion: JSON_REPORT_SCHEMA,
    tool: report.tool,
    generatedAt: report.generatedAt,
    summary: summarize(report),
    hosts: report.evaluations.map((e) => ({ hostname: e.host, takenAt: e.takenAt, complete: e.complete })),
    findings: allFindings(report),
    notifications: allNotifications(report),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}
