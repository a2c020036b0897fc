import type { Evaluation, Finding } from '../evaluate/finding.js';
import { severityRank, type Severity } from '../policy/types.js';
import { SHOWN_MESSAGE_BOUND, shownCode, shownLines, shownMarkdown } from '../shown.js';
import { carriedFindings, summarize, type Report } from './report.js';
import { moreAbout } from './rule-docs.js';
import { policyLine } from './text.js';
import { suppressionText } from './waivers.js';

/*
 * `scan --format md` / `evaluate --format md`: the run as Markdown, for a GitHub job summary or a ticket. Every host
 * value goes through src/shown.ts's Markdown forms, as premigrate's Markdown does
 * (src/report/premigration/markdown.ts): text escaped so that it renders as itself, ids and paths as code spans, and
 * no `|` that ends a table cell.
 */

/** A message over host values, as Markdown text that renders as itself. */
const md = (s: string): string => shownMarkdown(s, SHOWN_MESSAGE_BOUND);
/** An id or a path in a table cell: a code span nothing in it can end, nor the cell. */
const code = (s: string): string => shownCode(s, { cell: true });

const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

const SEVERITY_TITLES: Record<Severity, string> = { error: 'Errors', warning: 'Warnings', note: 'Notes' };
const SEVERITIES: readonly Severity[] = ['error', 'warning', 'note'];

/** The report: its header and counts, then each host's findings by severity, then how to fix each rule's. */
export function renderMarkdown(report: Report): string {
  const out: string[] = [];
  addHeader(out, report);
  addCounts(out, report);
  for (const e of report.evaluations) addHost(out, e, report);
  addHowToFix(out, report);
  return out.join('\n') + '\n';
}

/** What ran, when, whether it is complete (and what was not checked, said per host below), what was skipped. */
function addHeader(out: string[], report: Report): void {
  const s = summarize(report);
  const hosts = report.evaluations.map((e) => shownMarkdown(e.host)).join(', ');
  out.push(
    `# mesh-audit report: ${hosts === '' ? 'no host' : hosts}`,
    '',
    s.complete
      ? '**Complete**: everything in scope was read and checked.'
      : `**INCOMPLETE: ${plural(s.notChecked, 'thing')} not checked** (listed under each host): what was not read ` +
          'is unknown, neither a finding nor its absence.',
    '',
    `Generated ${shownMarkdown(report.generatedAt)} by ${report.tool.name} ${report.tool.version}.`,
  );
  const policy = policyLine(report);
  if (policy !== null) out.push('', md(policy));
  const skipped = report.policy?.skipped ?? [];
  if (skipped.length > 0)
    out.push('', `Skipped by configuration (not evaluated): ${skipped.map((id) => shownMarkdown(id)).join(', ')}.`);
}

/** The counts, one row each: by severity, waived, against the baseline, out of scope, not checked. */
function addCounts(out: string[], report: Report): void {
  const s = summarize(report);
  const rows: [string, number][] = [
    ['findings', s.findings],
    ...SEVERITIES.map((sev): [string, number] => [sev, s.bySeverity[sev]]),
    ['waived or allowed', s.suppressed],
    ...(s.byState
      ? ([
          ['new', s.byState.new],
          ['gone since the baseline', s.byState.absent],
          ['standing from earlier runs, not checked this run', s.notCheckedFindings ?? 0],
        ] as [string, number][])
      : []),
    ...(s.excluded ? ([['out of scope', s.excluded.total]] as [string, number][]) : []),
    ['not checked', s.notChecked],
  ];
  out.push('', '| | count |', '|---|---|', ...rows.map(([what, n]) => `| ${what} | ${n} |`));
}

/** A finding's state against the baseline and its waiver, when it has either. */
function stateOf(f: Finding): string {
  const parts = [
    f.state === 'new' || f.state === 'updated' ? f.state : null,
    f.suppressed ? md(suppressionText(f.suppressed)) : null,
  ].filter((p) => p !== null);
  return parts.length > 0 ? parts.join(', ') : '-';
}

/** A table of findings: rule, subject, message, state. */
function addFindingsTable(out: string[], findings: readonly Finding[]): void {
  out.push('', '| rule | subject | message | state |', '|---|---|---|---|');
  for (const f of findings)
    out.push(
      `| ${shownMarkdown(f.ruleId)} ${shownMarkdown(f.ruleName)} | ${shownMarkdown(f.subject.kind)} ` +
        `${code(f.subject.id)} | ${md(f.message)} | ${stateOf(f)} |`,
    );
}

/** One host: its snapshot, what was not checked, its findings by severity, those carried, those gone. */
function addHost(out: string[], e: Evaluation, report: Report): void {
  out.push('', `## ${shownMarkdown(e.host)}`, '', `Snapshot taken ${shownMarkdown(e.takenAt)}.`);
  const notChecked = e.notifications.filter((n) => n.level === 'error');
  if (!e.complete || notChecked.length > 0) {
    out.push('', `### INCOMPLETE: not checked (${notChecked.length})`, '');
    for (const n of notChecked) out.push(`- ${code(n.source)} ${md(n.message)}`);
    if (notChecked.length === 0) out.push('- this host was not read whole');
  }
  if (e.findings.length === 0) out.push('', 'No findings.');
  for (const severity of SEVERITIES) {
    const findings = e.findings.filter((f) => f.severity === severity);
    if (findings.length === 0) continue;
    out.push('', `### ${SEVERITY_TITLES[severity]} (${findings.length})`);
    addFindingsTable(out, [...findings].sort(byRule));
  }
  const carried = carriedFindings(report).filter((f) => f.host === e.host);
  if (carried.length > 0) {
    out.push('', `### Not checked this run, still standing from earlier runs (${carried.length})`);
    addFindingsTable(out, [...carried].sort(bySeverityThenRule));
  }
  const gone = (report.baseline?.absent ?? []).filter((f) => f.host === e.host);
  if (gone.length > 0) {
    out.push('', `### Gone since the baseline (${gone.length})`);
    addFindingsTable(out, [...gone].sort(bySeverityThenRule));
  }
  const notes = e.notifications.filter((n) => n.level === 'note');
  if (notes.length > 0) {
    out.push('', `### Notes (${notes.length})`, '');
    for (const n of notes) out.push(`- ${code(n.source)} ${md(n.message)}`);
  }
}

const byRule = (a: Finding, b: Finding): number => (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0);
const bySeverityThenRule = (a: Finding, b: Finding): number =>
  severityRank(b.severity) - severityRank(a.severity) || byRule(a, b);

/**
 * What to do about each rule that has findings: its remediation as its pack wrote it (Markdown, the controls escaped,
 * src/shown.ts `shownLines`), and where its whole help is.
 */
function addHowToFix(out: string[], report: Report): void {
  const ids = [
    ...new Set([...report.evaluations.flatMap((e) => e.findings), ...carriedFindings(report)].map((f) => f.ruleId)),
  ].sort();
  const rules = new Map(report.rules.map((r) => [r.id, r]));
  const fixes = ids.flatMap((id) => (rules.has(id) ? [rules.get(id)!] : []));
  if (fixes.length === 0) return;
  out.push('', '## How to fix');
  for (const rule of fixes)
    out.push(
      '',
      `### ${shownMarkdown(rule.id)} ${shownMarkdown(rule.name)}`,
      '',
      shownLines(rule.remediation.trim()),
      '',
      `More: ${md(moreAbout(rule, report.docsUrl))}`,
    );
}
