import { compareText } from '../../text/compare.js';
import { STANDINGS, type InventoryRow } from '../../premigrate/inventory.js';
import { isEmptyPlan, type AdoptionPlan, type Recording } from '../../premigrate/plan.js';
import { severityRank, type Severity } from '../../policy/types.js';
import { shown, shownMessage } from '../../shown.js';
import { shortenDigests } from '../terminal.js';
import { excludedText, verdictOf, type Premigration, type PremigrationReport } from './model.js';

/** A list of host values (ledger ids, names, endpoints), each escaped and bounded (src/shown.ts). */
const shownList = (values: readonly string[], separator: string): string => values.map((v) => shown(v)).join(separator);
/** A message made over host values: escaped as a whole, then its long digests cut. */
const messageOf = (message: string): string => shortenDigests(shownMessage(message));

const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;
const bySeverity = <T extends { severity: Severity; ruleId: string }>(a: T, b: T): number =>
  severityRank(b.severity) - severityRank(a.severity) || compareText(a.ruleId, b.ruleId);

/**
 * The terminal view, in the order a person acts on it: the verdict and the counts first, what was not
 * checked, then the resources by standing with each finding once (under the resource it is about, or
 * among the other findings), the plan naming findings by rule only, and the ports last. Long digests
 * are cut to 12 hex digits here; the JSON files and the plan keep them whole.
 */
export function renderPremigrationText(p: PremigrationReport, options: { color: boolean }): string {
  const paint = (code: number, s: string) => (options.color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const out: string[] = [];
  for (const node of p.nodes) {
    const verdict = verdictOf(node);
    out.push(paint(1, shown(node.host)) + `  pre-migration check, snapshot ${shown(node.takenAt)}`);
    out.push(`Verdict: ${node.complete && node.inventory.ready ? paint(32, verdict) : paint(31, verdict)}`);
    out.push(...countLines(node));
    if (node.excluded)
      out.push(`Out of scope (not read, not checked, not in the plan): ${excludedText(node.excluded)}`);
    out.push('');
    if (p.report.policy?.shippedPack === false) {
      out.push(
        paint(
          33,
          `Rules: ${p.report.policy.packs.map((k) => k.id).join(' + ')} — the shipped pack was NOT loaded ` +
            `(--no-default-policy): its rules did not run`,
        ),
        '',
      );
    }
    const skipped = p.report.policy?.skipped ?? [];
    if (skipped.length > 0)
      out.push(`Skipped by configuration (not evaluated): ${skipped.map((id) => shown(id)).join(', ')}`, '');
    if (node.notChecked.length > 0) {
      out.push(paint(31, `Not checked (${node.notChecked.length}):`));
      for (const m of node.notChecked) out.push(`    - ${shownMessage(m)}`);
      out.push('');
    }
    const findingLine = (f: { severity: Severity; ruleId: string; message: string }) =>
      `        ${f.severity.padEnd(7)} ${f.ruleId}  ${messageOf(f.message)}`;
    for (const s of STANDINGS) {
      const rows = node.inventory.rows.filter((r) => r.standing === s.standing);
      const mark = rows.some((r) => r.blocking) ? paint(31, '✗') : paint(32, '✓');
      out.push(`${mark} ${s.title} (${rows.length})  — ${s.meaning}`);
      const w = Math.max(0, ...rows.map((r) => `${r.kind} ${shown(r.id)}`.length));
      for (const r of rows) {
        out.push(
          `    ${`${r.kind} ${shown(r.id)}`.padEnd(w)}  ` +
            (r.entries.length > 0 ? `[${shownList(r.entries, ', ')}] ` : '') +
            messageOf(r.detail),
        );
        for (const f of [...r.findings].sort(bySeverity)) out.push(findingLine(f));
      }
    }
    const unplaced = [...node.inventory.unplaced].sort(bySeverity);
    if (unplaced.length > 0) {
      out.push(`Other findings (${unplaced.length}):`);
      for (const f of unplaced)
        out.push(`    ${f.subject.kind} ${shortenDigests(shown(f.subject.id))}`, findingLine(f));
    }
    if (!isEmptyPlan(node.plan)) out.push('', ...planLines(node.plan, node.inventory.rows, paint));
    out.push('', 'Ports (held / open / also bound by):');
    if (node.inventory.ports.length === 0) out.push('    none');
    for (const port of node.inventory.ports) {
      const others = port.alsoBoundBy.map((b) => `${b.port} by ${shownList(b.containers, ', ')}`).join('; ');
      out.push(
        `    ${shown(port.container)}: holds ${port.holds.join(', ') || '-'}; open ${port.open.join(', ') || '-'}` +
          (others ? `; also bound: ${others}` : ''),
      );
    }
    out.push('');
  }
  return out.join('\n');
}

/** Under the verdict: the resources, the blocking findings by severity, and the plan's steps, counted. */
function countLines(node: Premigration): string[] {
  const rows = node.inventory.rows;
  const blocking = rows.filter((r) => r.blocking).length;
  const severities = (['error', 'warning', 'note'] as const).map((s) =>
    plural(node.inventory.blockers.filter((b) => b.severity === s).length, s),
  );
  const plan = node.plan;
  const warned = plan.record.filter((r) => r.warning !== null).length;
  const steps = [
    plan.record.length > 0 ? `record ${plan.record.length}${warned > 0 ? ` (${warned} with a warning)` : ''}` : null,
    plan.remove.length > 0 ? `remove ${plan.remove.length}` : null,
    plan.recreate.length > 0 ? `recreate ${plan.recreate.length}` : null,
    plan.resolve.length > 0 ? `resolve ${plan.resolve.length}` : null,
    plan.review.length > 0 ? `review ${plan.review.length}` : null,
  ].filter((x) => x !== null);
  return [
    `  ${plural(rows.length, 'resource')}: ${rows.length - blocking} in order, ${blocking} blocking; ` +
      `${plural(node.inventory.blockers.length, 'blocking finding')} (${severities.join(', ')})`,
    ...(steps.length > 0 ? [`  plan: ${steps.join(', ')}`] : []),
  ];
}

/** The plan, each step naming the findings behind it by rule (their messages are above). */
function planLines(
  plan: AdoptionPlan,
  rows: readonly InventoryRow[],
  paint: (code: number, s: string) => string,
): string[] {
  const rulesOf = (kind: string, id: string): string => {
    const ids = [
      ...new Set(rows.find((r) => r.kind === kind && r.id === id)?.findings.map((f) => f.ruleId) ?? []),
    ].sort(compareText);
    return ids.length > 0 ? `  (${ids.join(', ')})` : '';
  };
  const out = ['Adoption plan (printed, never carried out; --plan FILE writes it as JSON, entries whole):'];
  if (plan.record.length > 0) {
    out.push(`  record in the ledger as found (${plan.record.length}):`);
    for (const r of plan.record) out.push(...recordingLines(r, paint));
  }
  if (plan.remove.length > 0) {
    out.push(`  remove (${plan.remove.length}):`);
    const commands = plan.remove.map((r) => shown(r.command));
    const w = Math.max(...commands.map((c) => c.length));
    plan.remove.forEach((r, i) => out.push(`    ${commands[i]!.padEnd(w)}${rulesOf(r.kind, r.target)}`));
  }
  if (plan.recreate.length > 0) {
    out.push(`  recreate (${plan.recreate.length}):`);
    for (const r of plan.recreate)
      out.push(
        `    container ${shown(r.container)} [${shownList(r.entries, ', ')}]: re-apply module ` +
          `${r.module === null ? '(none recorded)' : shown(r.module)}${rulesOf('container', r.container)}`,
      );
  }
  if (plan.resolve.length > 0) {
    out.push(`  resolve (${plan.resolve.length}):`);
    for (const r of plan.resolve)
      out.push(
        `    ${r.kind} ${shown(r.target)}: claimed by ${shownList(r.entries, ' and ')}; keep one entry` +
          rulesOf(r.kind, r.target),
      );
  }
  if (plan.review.length > 0) {
    out.push(`  review (${plan.review.length}): blocking findings no step above resolves (shown above)`);
    for (const r of plan.review) {
      out.push(`    ${r.severity} ${r.ruleId} ${shortenDigests(shown(r.subject))}`);
      if (r.advice !== undefined) out.push(`      first: ${shownMessage(r.advice)}`);
    }
  }
  for (const n of plan.notes) out.push(`  note: ${shownMessage(n)}`);
  return out;
}

/**
 * One "record as found": the entry in brief, its findings' severity and its exposure; the warning, when there is one,
 * first and loud.
 */
function recordingLines(r: Recording, paint: (code: number, s: string) => string): string[] {
  const e = r.entry;
  const what = [
    r.severity === null ? 'no finding' : `${r.severity} (${[...new Set(r.findings.map((f) => f.ruleId))].join(', ')})`,
    r.exposure === null
      ? null
      : r.exposure === 'none'
        ? 'not exposed'
        : r.exposure === 'loopback'
          ? 'loopback only'
          : r.exposure === 'unknown'
            ? 'exposure unknown'
            : `exposed: ${shownList(r.exposedEndpoints, ', ')}`,
    e.holds !== undefined ? `holds ${e.holds.join(', ') || 'none'}` : e.type === 'container' ? 'holds not read' : null,
    e.digest !== undefined ? shortenDigests(shown(e.digest)) : null,
  ].filter((x) => x !== null);
  const line = `    ${e.type} ${shown(e.target)} as ${shown(e.id)}: ${what.join('; ')}`;
  return r.warning === null ? [line] : [line, paint(31, `      WARNING: ${shownMessage(r.warning)}`)];
}
