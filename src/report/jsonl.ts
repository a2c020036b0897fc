import { allFindings, type Report } from './report.js';
import { helpUriOf } from './rule-docs.js';

/**
 * One finding per line for log shippers; findings gone since the baseline are lines with state
 * `absent`. With the resource a finding belongs to, when it was first seen (when known) and the
 * rule's documentation.
 */
export function renderJsonl(report: Report): string {
  const findings = [...allFindings(report), ...(report.baseline?.absent ?? [])];
  const helpUri = new Map(report.rules.map((r) => [r.id, helpUriOf(r)]));
  return findings
    .map(
      (f) =>
        JSON.stringify({
          time: report.generatedAt,
          host: f.host,
          ruleId: f.ruleId,
          ruleName: f.ruleName,
          severity: f.severity,
          state: f.state ?? null,
          suppressed: f.suppressed !== undefined,
          fingerprint: f.fingerprint,
          subject: f.subject,
          discriminator: f.discriminator,
          message: f.message,
          ...(f.resource !== undefined ? { resource: f.resource } : {}),
          ...(f.firstSeen !== undefined ? { firstSeen: f.firstSeen } : {}),
          ...(helpUri.has(f.ruleId) ? { helpUri: helpUri.get(f.ruleId) } : {}),
        }) + '\n',
    )
    .join('');
}
