import { STANDINGS } from '../../premigrate/inventory.js';
import { verdictOf, type PremigrationReport } from './model.js';

const md = (s: string): string => s.replace(/\|/g, '\\|').replace(/`/g, "'");

/** A summary an operator pastes into a change ticket. */
export function renderPremigrationMarkdown(p: PremigrationReport): string {
  const out: string[] = [];
  for (const node of p.nodes) {
    out.push(`## Pre-migration check: ${md(node.host)}`, '', `**Verdict: ${verdictOf(node)}**`, '', `Snapshot taken ${node.takenAt} by ${p.report.tool.name} ${p.report.tool.version}.`, '');
    out.push('| standing | count | blocks | meaning |', '|---|---|---|---|');
    for (const s of STANDINGS) {
      const n = node.inventory.rows.filter((r) => r.standing === s.standing).length;
      out.push(`| ${s.title} | ${n} | ${s.blocking ? (n > 0 ? 'yes' : 'no') : '-'} | ${md(s.meaning)} |`);
    }
    const blocking = node.inventory.rows.filter((r) => STANDINGS.find((s) => s.standing === r.standing)!.blocking);
    if (blocking.length > 0) {
      out.push('', '### To resolve before migrating', '', '| standing | resource | ledger entries | detail |', '|---|---|---|---|');
      for (const r of blocking) out.push(`| ${r.standing} | ${r.kind} \`${md(r.id)}\` | ${md(r.entries.join(', ')) || '-'} | ${md(r.detail)} |`);
    }
    const conflicts = node.inventory.ports.filter((x) => x.alsoBoundBy.length > 0);
    if (conflicts.length > 0) {
      out.push('', '### Held ports bound by someone else', '');
      for (const c of conflicts) for (const b of c.alsoBoundBy) out.push(`- port ${b.port}, held for \`${md(c.container)}\`, is open in ${b.containers.map((x) => `\`${md(x)}\``).join(', ')}`);
    }
    if (node.notChecked.length > 0) {
      out.push('', '### Not checked', '');
      for (const m of node.notChecked) out.push(`- ${md(m)}`);
    }
    out.push('');
  }
  return out.join('\n');
}
