import type { Finding } from '../evaluate/finding.js';
import type { LoadedRule } from '../policy/types.js';
import { shown, shownMessage } from '../shown.js';
import { allFindings, carriedFindings, type Report } from './report.js';
import { helpUriOf, remediationOf, summaryOf } from './rule-docs.js';

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
 * The alerts of a run (pure). Findings that stand (new, unchanged, updated, not waived) fire from when
 * they were first seen (`firstSeen`, else this run) until `ttlHours` after this run, long enough to
 * reach the next nightly run, so nothing resolves by itself between two scans; absent and waived
 * findings are resolved (endsAt = now). An incomplete scan fires an alert of its own, and a complete
 * one resolves it.
 *
 * Labels: `alertname` (the rule's name), `rule_id`, `severity`, `host`, `fingerprint`, and `resource`
 * — the mesh resource (ledger id) the finding is about, else its subject — so that one route can
 * group the findings of one root cause (a renamed container is MA2001 and MA2003 of one resource).
 * Annotations: `summary`, `description` (the message), `runbook_url` (the rule's page),
 * `remediation` (whole), and `message`, `help`, `subject` as before. Every value made of host strings is
 * shown as a person reads it (src/shown.ts): controls escaped, a value cut at SHOWN_BOUND and a message at
 * SHOWN_MESSAGE_BOUND, so a 100k-character id never goes to Alertmanager whole (the JSON report keeps it).
 */
export function alertsOf(report: Report, options: { ttlHours: number }): PostableAlert[] {
  const now = report.generatedAt;
  const until = new Date(Date.parse(now) + options.ttlHours * 3600_000).toISOString();
  const rules = new Map(report.rules.map((r) => [r.id, r]));
  const alertOf = (f: Finding, endsAt: string): PostableAlert => {
    const rule = rules.get(f.ruleId);
    // Alertmanager refuses an alert that ends before it starts (a finding seen first "later" than it resolves).
    const startsAt = f.firstSeen !== undefined && f.firstSeen <= endsAt ? f.firstSeen : now <= endsAt ? now : endsAt;
    return {
      labels: {
        alertname: f.ruleName,
        rule_id: f.ruleId,
        severity: f.severity,
        host: shown(f.host),
        fingerprint: f.fingerprint,
        resource: shown(f.resource ?? `${f.subject.kind}/${f.subject.id}`),
      },
      annotations: annotationsOf(f, rule, report.docsUrl),
      startsAt,
      endsAt,
    };
  };
  const alerts = [
    ...allFindings(report).map((f) => alertOf(f, f.suppressed ? now : until)),
    // Not checked tonight (a source was not read): still standing, so renewed, never resolved by an outage.
    ...carriedFindings(report).map((f) => alertOf(f, f.suppressed ? now : until)),
    ...(report.baseline?.absent ?? []).map((f) => alertOf(f, now)),
  ];
  for (const e of report.evaluations) {
    const notChecked = e.notifications.filter((n) => n.level === 'error');
    const host = shown(e.host);
    const message = shownMessage(
      e.complete
        ? `the last scan of ${e.host} was complete`
        : `the scan of ${e.host} was incomplete: ` +
            notChecked
              .map((n) => (n.subject && !n.message.includes(n.subject) ? `${n.subject}: ${n.message}` : n.message))
              .join('; '),
    );
    alerts.push({
      labels: { alertname: INCOMPLETE_ALERT, severity: 'error', host },
      annotations: {
        summary: e.complete
          ? `${host}: the mesh-audit scan is complete again`
          : `${host}: the mesh-audit scan was incomplete (${notChecked.length} not checked)`,
        description: message,
        message,
        runbook_url: `${report.tool.uri}#exit-codes`,
        help:
          'Something could not be read or a rule failed: the findings are not the whole truth. Fix the source ' +
          'named, then scan again.',
      },
      startsAt: now,
      endsAt: e.complete ? now : until,
    });
  }
  return alerts;
}

function annotationsOf(f: Finding, rule: LoadedRule | undefined, docsUrl: string): Record<string, string> {
  const subject = shown(`${f.subject.kind} ${f.subject.id}`);
  const message = shownMessage(f.message);
  return {
    summary: `${shown(f.host)}: ${rule?.title ?? f.ruleName} — ${subject}`,
    description: message,
    message,
    subject,
    ...(rule
      ? {
          ...(helpUriOf(rule, docsUrl) !== undefined ? { runbook_url: helpUriOf(rule, docsUrl)! } : {}),
          remediation: remediationOf(rule),
          help: summaryOf(rule),
        }
      : {}),
  };
}
