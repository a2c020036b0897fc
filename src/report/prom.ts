import { compareText } from '../text/compare.js';
import type { Finding } from '../evaluate/finding.js';
import type { Severity } from '../policy/types.js';
import { shown } from '../shown.js';
import { standingFindings, type Report } from './report.js';
import { severitiesOf } from './rule-docs.js';

/**
 * Label values escaped as the text exposition format wants: backslash, double quote, newline. The host name, the
 * one label the host controls, is first shown as a person reads it (src/shown.ts): controls escaped and cut at
 * SHOWN_BOUND, so a 100k-character host name is not a 100k label value in every series.
 */
const label = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (pairs: Record<string, string>): string =>
  '{' +
  Object.entries(pairs)
    .map(([k, v]) => `${k}="${label(v)}"`)
    .join(',') +
  '}';

interface Family {
  name: string;
  help: string;
  samples: { labels: Record<string, string>; value: number }[];
}

/**
 * Prometheus textfile for node_exporter's textfile collector. Series are stable from run to run: the
 * findings of every rule are counted for each severity the rule can give, 0 included, so a series
 * neither appears with a finding nor vanishes when it is gone (no `state` label that turns `new` into
 * `unchanged`); findings gone since the baseline are simply no longer counted, and findings carried
 * forward unchecked on an incomplete run are still counted (what was not read is not gone).
 *
 * - `mesh_audit_findings{host,rule_id,rule,severity}`: standing findings (waived ones not counted);
 * - `mesh_audit_findings_waived{…}`: findings a waiver accepts;
 * - `mesh_audit_findings_new{…}`: findings new since the baseline (only with `--baseline`);
 * - `mesh_audit_last_run_timestamp_seconds`, `mesh_audit_run_complete` (0/1),
 *   `mesh_audit_not_checked` (things not checked), `mesh_audit_run_duration_seconds`; by `host`;
 * - `mesh_audit_rules_skipped{host}`: rules the `skip` setting turned off, only when it did.
 */
export function renderProm(report: Report): string {
  // Each host's label once: a finding's host is shown from here, never escaped again per finding.
  const hostLabels = new Map(report.evaluations.map((e) => [e.host, shown(e.host)]));
  const counts = findingSamples(report, hostLabels);
  const families: Family[] = [
    {
      name: 'mesh_audit_findings',
      help: 'Standing findings of the last mesh-audit run (waived ones not counted), by host, rule and severity.',
      samples: counts.standing,
    },
    {
      name: 'mesh_audit_findings_waived',
      help: 'Findings of the last mesh-audit run that a waiver accepts, by host, rule and severity.',
      samples: counts.waived,
    },
    ...(report.baseline
      ? [
          {
            name: 'mesh_audit_findings_new',
            help:
              'Standing findings of the last mesh-audit run that were not in its baseline, by host, rule and ' +
              'severity.',
            samples: counts.fresh,
          },
        ]
      : []),
    ...runFamilies(report, hostLabels),
  ];
  const lines = families.flatMap((f) => [
    `# HELP ${f.name} ${f.help}`,
    `# TYPE ${f.name} gauge`,
    ...f.samples.map((s) => `${f.name}${labels(s.labels)} ${s.value}`),
  ]);
  return lines.join('\n') + '\n';
}

type Sample = Family['samples'][number];

/**
 * The counts of findings standing, waived and new (the last only with a baseline): one sample for every
 * (host, rule, severity) the rules can give, 0 included, in the order of their labels.
 */
function findingSamples(
  report: Report,
  hostLabels: ReadonlyMap<string, string>,
): { standing: Sample[]; waived: Sample[]; fresh: Sample[] } {
  const byRule = new Map(report.rules.map((r) => [r.id, r]));
  // Findings carried forward unchecked (an outage night) still stand: their series must not drop to 0.
  const findings = standingFindings(report);
  // Every (host, rule, severity) that exists before any finding: the rule's severities on each host.
  const keys = new Map<string, Record<string, string>>();
  const keyOf = (host: string, ruleId: string, ruleName: string, severity: Severity) => {
    const l = { host: hostLabels.get(host) ?? shown(host), rule_id: ruleId, rule: ruleName, severity };
    const key = JSON.stringify(l);
    if (!keys.has(key)) keys.set(key, l);
    return key;
  };
  for (const host of new Set(report.evaluations.map((e) => e.host))) {
    for (const rule of byRule.values()) for (const s of severitiesOf(rule)) keyOf(host, rule.id, rule.name, s);
  }
  const count = (which: (f: Finding) => boolean) => {
    const n = new Map<string, number>();
    for (const f of findings) {
      if (!which(f)) continue;
      const key = keyOf(f.host, f.ruleId, f.ruleName, f.severity);
      n.set(key, (n.get(key) ?? 0) + 1);
    }
    return n;
  };
  const standing = count((f) => f.suppressed === undefined);
  const waived = count((f) => f.suppressed !== undefined);
  const fresh = count((f) => f.state === 'new' && f.suppressed === undefined);
  const sorted = [...keys.entries()].sort(([a], [b]) => compareText(a, b));
  const perKey = (counts: Map<string, number>) =>
    sorted.map(([key, l]) => ({ labels: l, value: counts.get(key) ?? 0 }));
  return { standing: perKey(standing), waived: perKey(waived), fresh: report.baseline ? perKey(fresh) : [] };
}

/** The run's own series, one sample per host: when it ended, whether it was complete, what it could not check. */
function runFamilies(report: Report, hostLabels: ReadonlyMap<string, string>): Family[] {
  const perHost = (value: (e: Report['evaluations'][number]) => number) => {
    // One sample per host: the same host evaluated twice in one report keeps its last evaluation.
    const last = new Map(report.evaluations.map((e) => [e.host, e]));
    return [...last.values()].map((e) => ({ labels: { host: hostLabels.get(e.host)! }, value: value(e) }));
  };
  const at = Date.parse(report.generatedAt) / 1000;
  const skipped = report.policy?.skipped ?? [];
  return [
    // Only when the `skip` setting turned rules off: a run that skips none has the series it always had.
    ...(skipped.length > 0
      ? [
          {
            name: 'mesh_audit_rules_skipped',
            help: 'Rules the skip setting turned off on purpose in the last mesh-audit run (not evaluated), by host.',
            samples: perHost(() => skipped.length),
          },
        ]
      : []),
    {
      name: 'mesh_audit_last_run_timestamp_seconds',
      help: 'When the last mesh-audit run ended, in seconds since the epoch.',
      samples: perHost(() => at),
    },
    {
      name: 'mesh_audit_run_complete',
      help:
        '1 when every source was read and every rule ran in the last mesh-audit run, 0 when something was ' +
        'not checked.',
      samples: perHost((e) => (e.complete ? 1 : 0)),
    },
    {
      name: 'mesh_audit_not_checked',
      help: 'Things the last mesh-audit run could not check (sources not read, rules that failed on a subject).',
      samples: perHost((e) => e.notifications.filter((n) => n.level === 'error').length),
    },
    {
      name: 'mesh_audit_run_duration_seconds',
      help: 'How long the last mesh-audit run took, collection included.',
      samples: perHost(() => report.durationSeconds),
    },
  ];
}
