import { allFindings, type Report } from './report.js';

/** One finding per line for log shippers; findings gone since the baseline are lines with state `absent`. */
export function renderJsonl(report: Report): string {
  const findings = [...allFindings(report), ...(report.baseline?.absent ?? [])];
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
        }) + '\n',
    )
    .join('');
}
