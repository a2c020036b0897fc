import { STANDINGS } from '../../premigrate/inventory.js';
import { isEmptyPlan, type AdoptionPlan } from '../../premigrate/plan.js';
import { SHOWN_MESSAGE_BOUND, shownCode, shownJson, shownMarkdown } from '../../shown.js';
import { verdictOf, type Premigration, type PremigrationReport } from './model.js';

/** Text over host values (a message, a detail, a list of ids), as Markdown that renders as itself (src/shown.ts). */
const md = (s: string): string => shownMarkdown(s, SHOWN_MESSAGE_BOUND);
/** An id, a name, a path or a command in a table cell: a code span nothing in it can end, nor the cell. */
const code = (s: string): string => shownCode(s, { cell: true });
/** The same outside a table (a list item). */
const inlineCode = (s: string): string => shownCode(s);
/** Host values listed in a cell, each escaped and bounded; `-` for none. */
const mdList = (values: readonly string[], separator: string): string =>
  values.length === 0 ? '-' : values.map((v) => shownMarkdown(v)).join(separator);

/** A summary an operator pastes into a change ticket. */
export function renderPremigrationMarkdown(p: PremigrationReport): string {
  const out: string[] = [];
  // Each section of a node appends its lines to `out`, in the order a reader goes down the page.
  for (const node of p.nodes) {
    addHeader(out, node, p);
    addToResolve(out, node);
    addBlockingFindings(out, node);
    if (!isEmptyPlan(node.plan)) addAdoptionPlan(out, node.plan);
    addHeldPortConflicts(out, node);
    if (node.notChecked.length > 0) {
      out.push('', '### Not checked', '');
      for (const m of node.notChecked) out.push(`- ${md(m)}`);
    }
    out.push('');
  }
  return out.join('\n');
}

/** The node's title, verdict and snapshot, and the count of its resources in each standing. */
function addHeader(out: string[], node: Premigration, p: PremigrationReport): void {
  out.push(
    `## Pre-migration check: ${shownMarkdown(node.host)}`,
    '',
    `**Verdict: ${md(verdictOf(node))}**`,
    '',
    `Snapshot taken ${shownMarkdown(node.takenAt)} by ${p.report.tool.name} ${p.report.tool.version}.`,
    '',
  );
  const skipped = p.report.policy?.skipped ?? [];
  if (skipped.length > 0)
    out.push(`Skipped by configuration (not evaluated): ${skipped.map((id) => shownMarkdown(id)).join(', ')}.`, '');
  out.push('| standing | count | blocks | meaning |', '|---|---|---|---|');
  for (const s of STANDINGS) {
    const rows = node.inventory.rows.filter((r) => r.standing === s.standing);
    const blocking = rows.filter((r) => r.blocking).length;
    out.push(
      `| ${s.title} | ${rows.length} | ${s.blocking ? (blocking > 0 ? `yes (${blocking})` : 'no') : '-'} | ` +
        `${md(s.meaning)} |`,
    );
  }
}

/** The resources whose standing blocks the migration. */
function addToResolve(out: string[], node: Premigration): void {
  const blocking = node.inventory.rows.filter((r) => r.blocking);
  if (blocking.length === 0) return;
  out.push(
    '',
    '### To resolve before migrating',
    '',
    '| standing | resource | ledger entries | detail |',
    '|---|---|---|---|',
  );
  for (const r of blocking)
    out.push(`| ${r.standing} | ${r.kind} ${code(r.id)} | ${mdList(r.entries, ', ')} | ${md(r.detail)} |`);
}

/** The findings that block the migration. */
function addBlockingFindings(out: string[], node: Premigration): void {
  if (node.inventory.blockers.length === 0) return;
  out.push('', '### Blocking findings', '', '| rule | severity | subject | message |', '|---|---|---|---|');
  for (const b of node.inventory.blockers)
    out.push(`| ${b.ruleId} | ${b.severity} | ${b.subject.kind} ${code(b.subject.id)} | ${md(b.message)} |`);
}

/** The plan's steps, each kind its own list: record, remove, recreate, resolve, review, then its notes. */
function addAdoptionPlan(out: string[], plan: AdoptionPlan): void {
  out.push('', '### Adoption plan', '', 'Proposed by mesh-audit, never carried out by it: review each step.');
  if (plan.record.length > 0) addRecordSteps(out, plan.record);
  if (plan.remove.length > 0) {
    out.push('', 'Remove:', '', '| command | standing | why |', '|---|---|---|');
    for (const r of plan.remove) out.push(`| ${code(r.command)} | ${r.standing} | ${md(r.reason.join('; '))} |`);
  }
  if (plan.recreate.length > 0) {
    out.push('', 'Recreate (re-apply the module):', '', '| container | entries | module | why |', '|---|---|---|---|');
    for (const r of plan.recreate)
      out.push(
        `| ${code(r.container)} | ${mdList(r.entries, ', ')} | ` +
          `${r.module === null ? '-' : shownMarkdown(r.module)} | ${md(r.reason.join('; '))} |`,
      );
  }
  if (plan.resolve.length > 0) {
    out.push('', 'Resolve (keep one entry per target):', '');
    for (const r of plan.resolve)
      out.push(
        `- ${r.kind} ${inlineCode(r.target)} is claimed by ${r.entries.map((e) => inlineCode(e)).join(' and ')}`,
      );
  }
  if (plan.review.length > 0) {
    out.push('', 'Review (blocking findings no step above resolves):', '');
    for (const r of plan.review)
      out.push(
        `- ${r.ruleId} ${shownMarkdown(r.subject)}: ${md(r.message)}` +
          (r.advice !== undefined ? ` — **first:** ${md(r.advice)}` : ''),
      );
  }
  if (plan.notes.length > 0) {
    out.push('', 'Notes:', '');
    for (const n of plan.notes) out.push(`- ${md(n)}`);
  }
}

/** The entries to record: a table to read, then the entries themselves as JSON to merge into the ledger. */
function addRecordSteps(out: string[], record: AdoptionPlan['record']): void {
  out.push(
    '',
    "Record in the ledger as found (merge into the host agent's ledger, after reading each warning):",
    '',
    '| entry | target | severity | exposure | warning |',
    '|---|---|---|---|---|',
  );
  for (const r of record) {
    const exposure =
      r.exposure === null
        ? '-'
        : r.exposedEndpoints.length > 0
          ? `${r.exposure}: ${mdList(r.exposedEndpoints, ', ')}`
          : r.exposure;
    out.push(
      `| ${code(r.entry.id)} | ${r.entry.type} ${code(r.entry.target)} | ${r.severity ?? '-'} | ` +
        `${exposure} | ${r.warning === null ? '-' : `**${md(r.warning)}**`} |`,
    );
  }
  out.push('', '```json', ...record.map((r) => shownJson(r.entry)), '```');
}

/** Ports the ledger holds for one container that others have open. */
function addHeldPortConflicts(out: string[], node: Premigration): void {
  const conflicts = node.inventory.ports.filter((x) => x.alsoBoundBy.length > 0);
  if (conflicts.length === 0) return;
  out.push('', '### Held ports bound by someone else', '');
  for (const c of conflicts)
    for (const b of c.alsoBoundBy)
      out.push(
        `- port ${b.port}, held for ${inlineCode(c.container)}, is open in ` +
          b.containers.map((x) => inlineCode(x)).join(', '),
      );
}
