import { allFindings, allNotifications, type Report } from './report.js';
import { ruleFieldsOf, type RuleFields } from './finding-fields.js';
import { helpUriOf } from './rule-docs.js';

/**
 * One finding per line for log shippers; findings gone since the baseline are lines with state
 * `absent`. With the rule's tags and CIS id, the module and resource a finding belongs to, when it was
 * first seen (when known) and the rule's documentation. What was not checked is said too (an incomplete
 * run is never a quiet one): a line per error notification (`notChecked: true`, no `ruleId`), and the
 * baseline's findings carried forward unchecked as lines with state `not-checked`. A rule the `skip` setting
 * turned off is a line per host with `skipped: true` and its `ruleId`.
 */
export function renderJsonl(report: Report): string {
  const carried = (report.baseline?.notChecked ?? []).map((f) => ({ ...f, state: 'not-checked' as const }));
  const findings = [...allFindings(report), ...(report.baseline?.absent ?? []), ...carried];
  const helpUri = new Map(
    report.rules.flatMap((r) => {
      const uri = helpUriOf(r, report.docsUrl);
      return uri === undefined ? [] : [[r.id, uri] as const];
    }),
  );
  const ruleFields = new Map(report.rules.map((r) => [r.id, ruleFieldsOf(r)]));
  const notChecked = allNotifications(report)
    .filter((n) => n.level === 'error')
    .map(
      (n) =>
        JSON.stringify({
          time: report.generatedAt,
          host: n.host,
          notChecked: true,
          kind: n.kind,
          source: n.source,
          ...(n.subject !== undefined ? { subject: n.subject } : {}),
          message: n.message,
        }) + '\n',
    );
  // A rule turned off on purpose (the `skip` setting): a line per host and rule, `skipped: true`, no finding.
  const skipped = (report.policy?.skipped ?? []).flatMap((ruleId) =>
    [...new Set(report.evaluations.map((e) => e.host))].map(
      (host) =>
        JSON.stringify({
          time: report.generatedAt,
          host,
          skipped: true,
          ruleId,
          message: `rule ${ruleId} skipped by configuration (skip): not evaluated`,
        }) + '\n',
    ),
  );
  return findings
    .map((f: (typeof findings)[number] & Partial<RuleFields>) => {
      // The rule's fields; a baseline's finding of a rule not loaded keeps those it was read with.
      const rule = ruleFields.get(f.ruleId) ?? { tags: f.tags, cis: f.cis };
      return (
        JSON.stringify({
          time: report.generatedAt,
          host: f.host,
          ruleId: f.ruleId,
          ruleName: f.ruleName,
          ...(rule.tags !== undefined ? { tags: rule.tags } : {}),
          ...(rule.cis !== undefined ? { cis: rule.cis } : {}),
          severity: f.severity,
          state: f.state ?? null,
          suppressed: f.suppressed !== undefined,
          fingerprint: f.fingerprint,
          subject: f.subject,
          discriminator: f.discriminator,
          message: f.message,
          ...(f.module !== undefined ? { module: f.module } : {}),
          ...(f.resource !== undefined ? { resource: f.resource } : {}),
          ...(f.firstSeen !== undefined ? { firstSeen: f.firstSeen } : {}),
          ...(f.unknownEscalation !== undefined ? { unknownEscalation: f.unknownEscalation } : {}),
          ...(helpUri.has(f.ruleId) ? { helpUri: helpUri.get(f.ruleId) } : {}),
        }) + '\n'
      );
    })
    .concat(notChecked, skipped)
    .join('');
}
