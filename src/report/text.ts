import type { Finding } from '../evaluate/finding.js';
import type { Severity } from '../policy/types.js';
import { allFindings, summarize, type Report } from './report.js';
import { helpUriOf, remediationOf } from './rule-docs.js';

export interface TextOptions {
  /** Colour only on a terminal (and never with NO_COLOR): decided by the caller, which knows the stream. */
  color: boolean;
}

const COLORS: Record<Severity | 'dim' | 'bold', [number, number]> = {
  error: [31, 39],
  warning: [33, 39],
  note: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/** `[new]`, `[updated]` against a baseline, `[waived until DATE]` under a waiver. */
function tagsOf(f: Finding): string {
  const tags = [f.state === 'new' || f.state === 'updated' ? f.state : null, f.suppressed ? `waived until ${f.suppressed.expires}` : null].filter((t) => t !== null);
  return tags.length > 0 ? `  [${tags.join(', ')}]` : '';
}

const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

/** The terminal table: one row per finding, its message on the line below. */
export function renderText(report: Report, options: TextOptions): string {
  const paint = (style: keyof typeof COLORS, s: string): string =>
    options.color ? `\u001b[${COLORS[style][0]}m${s}\u001b[${COLORS[style][1]}m` : s;
  const lines: string[] = [];
  for (const e of report.evaluations) {
    lines.push(paint('bold', e.host) + paint('dim', `  snapshot ${e.takenAt}${e.complete ? '' : '  INCOMPLETE'}`));
    if (e.findings.length === 0) lines.push('  no findings');
    const rows = e.findings.map((f) => ({
      severity: f.severity,
      rule: `${f.ruleId} ${f.ruleName}`,
      subject: `${f.subject.kind} ${f.subject.id}` + tagsOf(f),
      message: f.message,
    }));
    const width = {
      severity: Math.max(8, ...rows.map((r) => r.severity.length)),
      rule: Math.max(4, ...rows.map((r) => r.rule.length)),
    };
    if (rows.length > 0) {
      lines.push(paint('dim', `  ${'SEVERITY'.padEnd(width.severity)}  ${'RULE'.padEnd(width.rule)}  SUBJECT`));
    }
    for (const r of rows) {
      lines.push(`  ${paint(r.severity, r.severity.padEnd(width.severity))}  ${r.rule.padEnd(width.rule)}  ${r.subject}`);
      lines.push(`  ${' '.repeat(width.severity)}  ${paint('dim', '└')} ${r.message}`);
    }
    const carried = (report.baseline?.notChecked ?? []).filter((f) => f.host === e.host);
    if (carried.length > 0) {
      lines.push('', paint('warning', `  Not checked this run, still standing from earlier runs (${carried.length}):`));
      for (const f of carried) lines.push(`  - ${f.severity} ${f.ruleId} ${f.ruleName} ${f.subject.kind} ${f.subject.id}: ${f.message}`);
    }
    const gone = (report.baseline?.absent ?? []).filter((f) => f.host === e.host);
    if (gone.length > 0) {
      lines.push('', paint('dim', `  Gone since the baseline (${gone.length}):`));
      for (const f of gone) lines.push(`  - ${f.ruleId} ${f.ruleName} ${f.subject.kind} ${f.subject.id}`);
    }
    const errors = e.notifications.filter((n) => n.level === 'error');
    const notes = e.notifications.filter((n) => n.level === 'note');
    if (errors.length > 0) {
      lines.push('', paint('error', `  Not checked (${errors.length}):`));
      for (const n of errors) lines.push(`  - [${n.source}] ${n.message}`);
    }
    if (notes.length > 0) {
      lines.push('', paint('dim', `  Notes (${notes.length}):`));
      for (const n of notes) lines.push(`  - [${n.source}] ${n.message}`);
    }
    lines.push('');
  }
  // What to do about each rule that has findings: its remediation, and where its whole help is.
  const ruled = [...new Set(allFindings(report).map((f) => f.ruleId))].sort();
  const rules = new Map(report.rules.map((r) => [r.id, r]));
  if (ruled.length > 0) {
    lines.push(paint('bold', 'How to fix'));
    for (const id of ruled) {
      const rule = rules.get(id);
      if (!rule) continue;
      const remediation = remediationOf(rule);
      lines.push(`  ${rule.id} ${rule.name}: ${remediation || 'see its help'}`);
      lines.push(`  ${paint('dim', `  more: ${helpUriOf(rule)}`)}`);
    }
    lines.push('');
  }
  const s = summarize(report);
  const counts = [plural(s.bySeverity.error, 'error'), plural(s.bySeverity.warning, 'warning'), plural(s.bySeverity.note, 'note')];
  const extra = [
    s.byState ? `${s.byState.new} new, ${s.byState.absent} gone` : null,
    s.suppressed > 0 ? `${s.suppressed} waived` : null,
    s.excluded ? `${s.excluded.total} out of scope (${plural(s.excluded.containers, 'container')}, ${plural(s.excluded.files, 'file')}, ${plural(s.excluded.ledger, 'ledger entry', 'ledger entries')})` : null,
  ].filter((t) => t !== null);
  lines.push(
    `${plural(s.findings, 'finding')} (${counts.join(', ')}${extra.length > 0 ? '; ' + extra.join(', ') : ''}) on ${plural(report.evaluations.length, 'host')}` +
      (s.complete ? '' : ` — INCOMPLETE: ${plural(s.notChecked, 'thing')} not checked`),
  );
  return lines.join('\n') + '\n';
}
