import { STANDINGS } from '../../premigrate/inventory.js';
import { isEmptyPlan, type AdoptionPlan } from '../../premigrate/plan.js';
import { verdictOf, type PremigrationReport } from './model.js';

const cell = (s: string, w: number): string => s.padEnd(w);

/** The terminal view: the inventory by standing, the ports, what blocks, the plan, the verdict last. */
export function renderPremigrationText(p: PremigrationReport, options: { color: boolean }): string {
  const paint = (code: number, s: string) => (options.color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const out: string[] = [];
  for (const node of p.nodes) {
    out.push(paint(1, node.host) + `  pre-migration check, snapshot ${node.takenAt}`, '');
    for (const s of STANDINGS) {
      const rows = node.inventory.rows.filter((r) => r.standing === s.standing);
      const mark = rows.some((r) => r.blocking) ? paint(31, '✗') : paint(32, '✓');
      out.push(`${mark} ${s.title} (${rows.length})  — ${s.meaning}`);
      const w = Math.max(0, ...rows.map((r) => `${r.kind} ${r.id}`.length));
      for (const r of rows) out.push(`    ${cell(`${r.kind} ${r.id}`, w)}  ${r.entries.length > 0 ? `[${r.entries.join(', ')}] ` : ''}${r.detail}`);
    }
    out.push('', 'Ports (held / open / also bound by):');
    if (node.inventory.ports.length === 0) out.push('    none');
    for (const port of node.inventory.ports) {
      const others = port.alsoBoundBy.map((b) => `${b.port} by ${b.containers.join(', ')}`).join('; ');
      out.push(`    ${port.container}: holds ${port.holds.join(', ') || '-'}; open ${port.open.join(', ') || '-'}${others ? `; also bound: ${others}` : ''}`);
    }
    if (node.inventory.blockers.length > 0) {
      out.push('', `Blocking findings (${node.inventory.blockers.length}):`);
      for (const b of node.inventory.blockers) out.push(`    ${b.ruleId} ${b.severity} ${b.subject.kind} ${b.subject.id}: ${b.message}`);
    }
    if (!isEmptyPlan(node.plan)) out.push('', ...planLines(node.plan));
    if (node.notChecked.length > 0) {
      out.push('', paint(31, `Not checked (${node.notChecked.length}):`));
      for (const m of node.notChecked) out.push(`    - ${m}`);
    }
    const verdict = verdictOf(node);
    out.push('', `Verdict: ${node.complete && node.inventory.ready ? paint(32, verdict) : paint(31, verdict)}`, '');
  }
  return out.join('\n');
}

function planLines(plan: AdoptionPlan): string[] {
  const out = ['Adoption plan (printed, never carried out; --plan FILE writes it as JSON):'];
  if (plan.record.length > 0) {
    out.push(`  record in the ledger as found (${plan.record.length}):`);
    for (const e of plan.record) out.push(`    ${JSON.stringify(e)}`);
  }
  if (plan.remove.length > 0) {
    out.push(`  remove (${plan.remove.length}):`);
    for (const r of plan.remove) {
      out.push(`    ${r.command}`);
      for (const why of r.reason) out.push(`        because ${why}`);
    }
  }
  if (plan.recreate.length > 0) {
    out.push(`  recreate (${plan.recreate.length}):`);
    for (const r of plan.recreate) {
      out.push(`    container ${r.container} [${r.entries.join(', ')}]: re-apply module ${r.module ?? '(none recorded)'}`);
      for (const why of r.reason) out.push(`        because ${why}`);
    }
  }
  if (plan.resolve.length > 0) {
    out.push(`  resolve (${plan.resolve.length}):`);
    for (const r of plan.resolve) out.push(`    ${r.kind} ${r.target}: claimed by ${r.entries.join(' and ')}; keep one entry`);
  }
  if (plan.review.length > 0) {
    out.push(`  review (${plan.review.length}): blocking findings no step above resolves`);
    for (const r of plan.review) out.push(`    ${r.ruleId} ${r.subject}: ${r.message}`);
  }
  for (const n of plan.notes) out.push(`  note: ${n}`);
  return out;
}
