import type { Finding } from '../evaluate/finding.js';
import { severityRank, type Severity } from '../policy/types.js';
import { allFindings, summarize, type Report } from './report.js';
import { moreAbout, remediationOf } from './rule-docs.js';
import { shown, shownMessage } from '../shown.js';
import { shortenDigests } from './terminal.js';
import { suppressionText } from './waivers.js';

export interface TextOptions {
  /** Colour only on a terminal (and never with NO_COLOR): decided by the caller, which knows the stream. */
  color: boolean;
  /**
   * --quiet: only what needs a person — findings (not the waived ones) and what was not checked; a
   * complete run with no such finding renders as nothing at all (cron sends no mail).
   */
  quiet?: boolean;
  /** --only-new: of the findings, only those new against the baseline (what was not checked is always shown). */
  onlyNew?: boolean;
}

const COLORS: Record<Severity | 'dim' | 'bold', [number, number]> = {
  error: [31, 39],
  warning: [33, 39],
  note: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/** `[new]`, `[updated]` against a baseline, `[waived until DATE]` under a waiver, `[allowed by …]` by the ledger. */
function tagsOf(f: Finding): string {
  const tags = [
    f.state === 'new' || f.state === 'updated' ? f.state : null,
    f.suppressed ? shown(suppressionText(f.suppressed)) : null,
  ].filter((t) => t !== null);
  return tags.length > 0 ? `  [${tags.join(', ')}]` : '';
}

/** A subject as the terminal shows it: its id escaped and bounded (src/shown.ts), long digests cut. */
const subjectOf = (f: Pick<Finding, 'subject'>): string =>
  `${shown(f.subject.kind)} ${shortenDigests(shown(f.subject.id))}`;
/** A message made over host values: escaped as a whole, then its long digests cut. */
const messageOf = (message: string): string => shortenDigests(shownMessage(message));

const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

/** Most severe first, then by rule; within a rule the evaluation's order (by subject) stands. */
const bySeverityThenRule = (a: Finding, b: Finding): number =>
  severityRank(b.severity) - severityRank(a.severity) || (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0);

/** Whether the options print this finding (the summary counts every one all the same). */
export function printed(f: Finding, options: Pick<TextOptions, 'quiet' | 'onlyNew'>): boolean {
  if (options.quiet === true && f.suppressed !== undefined) return false;
  return options.onlyNew !== true || f.state === 'new';
}

/**
 * The terminal view: the summary first, then per host its findings, most severe first (the message
 * on the line below each), what was not checked, and what to do about each rule that has findings.
 * Long digests are cut to 12 hex digits here, never in the files.
 */
export function renderText(report: Report, options: TextOptions): string {
  const paint = painter(options.color);
  const quiet = options.quiet === true;
  const printedOf = (e: Report['evaluations'][number]): Finding[] =>
    e.findings.filter((f) => printed(f, options)).sort(bySeverityThenRule);
  const carriedOf = (host: string) => (report.baseline?.notChecked ?? []).filter((f) => f.host === host);
  const problemsOf = (e: Report['evaluations'][number]) => e.notifications.filter((n) => n.level === 'error');
  // Under --quiet a host with nothing to act on is left out, and a run with nothing to act on prints nothing.
  const hosts = report.evaluations.filter(
    (e) => !quiet || printedOf(e).length > 0 || !e.complete || problemsOf(e).length > 0 || carriedOf(e.host).length > 0,
  );
  if (quiet && hosts.length === 0) return '';

  const policy = policyLine(report);
  const skipped = skippedLine(report);
  const lines: string[] = [
    summaryLine(report, options),
    ...(policy !== null ? [policy] : []),
    ...(skipped !== null ? [skipped] : []),
    '',
  ];
  const printedFindings: Finding[] = [];
  for (const e of hosts) {
    const findings = printedOf(e);
    printedFindings.push(...findings);
    lines.push(
      paint('bold', shown(e.host)) + paint('dim', `  snapshot ${shown(e.takenAt)}${e.complete ? '' : '  INCOMPLETE'}`),
    );
    if (findings.length === 0)
      lines.push(
        e.findings.length === 0
          ? '  no findings'
          : `  no ${options.onlyNew === true ? 'new ' : ''}findings to show (${plural(e.findings.length, 'finding')} ` +
              `in the reports)`,
      );
    addFindingsTable(lines, findings, paint);
    const carried = carriedOf(e.host);
    if (carried.length > 0) {
      lines.push('', paint('warning', `  Not checked this run, still standing from earlier runs (${carried.length}):`));
      for (const f of carried)
        lines.push(
          `  - ${f.severity} ${shown(f.ruleId)} ${shown(f.ruleName)} ${subjectOf(f)}: ${messageOf(f.message)}`,
        );
    }
    const gone = quiet ? [] : (report.baseline?.absent ?? []).filter((f) => f.host === e.host);
    if (gone.length > 0) {
      lines.push('', paint('dim', `  Gone since the baseline (${gone.length}):`));
      for (const f of gone) lines.push(`  - ${shown(f.ruleId)} ${shown(f.ruleName)} ${subjectOf(f)}`);
    }
    const errors = problemsOf(e);
    const notes = quiet ? [] : e.notifications.filter((n) => n.level === 'note');
    if (errors.length > 0) {
      lines.push('', paint('error', `  Not checked (${errors.length}):`));
      for (const n of errors) lines.push(`  - [${shown(n.source)}] ${messageOf(n.message)}`);
    }
    if (notes.length > 0) {
      lines.push('', paint('dim', `  Notes (${notes.length}):`));
      for (const n of notes) lines.push(`  - [${shown(n.source)}] ${messageOf(n.message)}`);
    }
    lines.push('');
  }
  addHowToFix(lines, printedFindings, report, paint);
  return lines.join('\n');
}

/** Text in a style, with the terminal's escapes only when colour is on. */
type Paint = (style: keyof typeof COLORS, s: string) => string;
function painter(color: boolean): Paint {
  return (style, s) => (color ? `\u001b[${COLORS[style][0]}m${s}\u001b[${COLORS[style][1]}m` : s);
}

/** A host's findings as a table, columns as wide as their longest cell; each message on the line below. */
function addFindingsTable(lines: string[], findings: readonly Finding[], paint: Paint): void {
  const rows = findings.map((f) => ({
    severity: f.severity,
    rule: `${shown(f.ruleId)} ${shown(f.ruleName)}`,
    subject: subjectOf(f) + tagsOf(f),
    message: messageOf(f.message),
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
}

/** What to do about each rule that has printed findings: its remediation, and where its whole help is. */
function addHowToFix(lines: string[], printedFindings: readonly Finding[], report: Report, paint: Paint): void {
  const ruled = [...new Set(printedFindings.map((f) => f.ruleId))].sort();
  const rules = new Map(report.rules.map((r) => [r.id, r]));
  if (ruled.length > 0) {
    lines.push(paint('bold', 'How to fix'));
    for (const id of ruled) {
      const rule = rules.get(id);
      if (!rule) continue;
      lines.push(`  ${rule.id} ${rule.name}: ${remediationOf(rule)}`);
      lines.push(`  ${paint('dim', `  more: ${moreAbout(rule, report.docsUrl)}`)}`);
    }
    lines.push('');
  }
}

/** Which packs ran, said only when it is not the shipped pack alone: packs added, or the shipped one replaced. */
export function policyLine(report: Report): string | null {
  const used = report.policy;
  if (used === undefined || (used.shippedPack && used.packs.length === 1)) return null;
  const packs = used.packs.map((p) => `${p.id} ${p.version}${p.shipped ? ' (shipped)' : ''}`).join(' + ');
  return used.shippedPack
    ? `Rules: ${packs}`
    : `Rules: ${packs} — the shipped pack was NOT loaded (--no-default-policy): its findings are not checked`;
}

/** The rules the `skip` setting left out, said on every run (under --quiet too when anything is printed). */
function skippedLine(report: Report): string | null {
  const skipped = report.policy?.skipped ?? [];
  return skipped.length === 0 ? null : `Skipped by configuration: ${skipped.map((id) => shown(id)).join(', ')}`;
}

/** Findings a waiver accepts and those a ledger entry's `allow:` accepts, each counted as what it is. */
function suppressedParts(report: Report, suppressed: number, options: TextOptions): string[] {
  if (suppressed === 0) return [];
  const allowed = allFindings(report).filter((f) => f.suppressed !== undefined && 'allowedBy' in f.suppressed).length;
  const hidden = options.quiet === true ? ' (not shown)' : '';
  return [
    ...(suppressed > allowed ? [`${suppressed - allowed} waived${hidden}`] : []),
    ...(allowed > 0 ? [`${allowed} allowed by the ledger${hidden}`] : []),
  ];
}

/** The run in one line: counts by severity, against the baseline, waived, out of scope; INCOMPLETE when it was. */
function summaryLine(report: Report, options: TextOptions): string {
  const s = summarize(report);
  const counts = [
    plural(s.bySeverity.error, 'error'),
    plural(s.bySeverity.warning, 'warning'),
    plural(s.bySeverity.note, 'note'),
  ];
  const extra = [
    s.byState
      ? `${s.byState.new} new, ${s.byState.absent} gone` +
        (s.notCheckedFindings ? `, ${s.notCheckedFindings} not checked` : '')
      : null,
    ...suppressedParts(report, s.suppressed, options),
    s.excluded
      ? `${s.excluded.total} out of scope (${plural(s.excluded.containers, 'container')}, ` +
        `${plural(s.excluded.files, 'file')}, ${plural(s.excluded.ledger, 'ledger entry', 'ledger entries')}` +
        (s.excluded.listeners > 0 ? `, ${plural(s.excluded.listeners, 'listener')})` : ')')
      : null,
  ].filter((t) => t !== null);
  return (
    `${plural(s.findings, 'finding')} (${counts.join(', ')}${extra.length > 0 ? '; ' + extra.join(', ') : ''}) on ` +
    plural(report.evaluations.length, 'host') +
    (options.onlyNew === true ? '; showing the new ones only' : '') +
    (s.complete ? '' : ` — INCOMPLETE: ${plural(s.notChecked, 'thing')} not checked`)
  );
}
