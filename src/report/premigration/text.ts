import { STANDINGS } from '../../premigrate/inventory.js';
import { verdictOf, type PremigrationReport } from './model.js';

const cell = (s: string, w: number): string => s.padEnd(w);

/** The terminal view: the inventory by standing, the ports, the verdict last. */
export function renderPremigrationText(p: PremigrationReport, options: { color: boolean }): string {
  const paint = (code: number, s: string) => (options.color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const out: string[] = [];
  for (const node of p.nodes) {
    out.push(paint(1, `${node.host}`) + `  pre-migration check, snapshot ${node.takenAt}`, '');
    for (const s of STANDINGS) {
      const rows = node.inventory.rows.filter((r) => r.standing === s.standing);
      const mark = s.blocking && rows.length > 0 ? paint(31, '✗') : paint(32, '✓');
      out.push(`${mark} ${s.title} (${rows.length})${s.blocking ? '' : ''}  — ${s.meaning}`);
      const w = Math.max(0, ...rows.map((r) => `${r.kind} ${r.id}`.length));
      for (const r of rows) out.push(`    ${cell(`${r.kind} ${r.id}`, w)}  ${r.entries.length > 0 ? `[${r.entries.join(', ')}] ` : ''}${r.detail}`);
    }
    out.push('', 'Ports (held / open / also bound by):');
    if (node.inventory.ports.length === 0) out.push('    none');
    for (const port of node.inventory.ports) {
      const others = port.alsoBoundBy.map((b) => `${b.port} by ${b.containers.join(', ')}`).join('; ');
      out.push(`    ${port.container}: holds ${port.holds.join(', ') || '-'}; open ${port.open.join(', ') || '-'}${others ? `; also bound: ${others}` : ''}`);
    }
    if (node.notChecked.length > 0) {
      out.push('', paint(31, `Not checked (${node.notChecked.length}):`));
      for (const m of node.notChecked) out.push(`    - ${m}`);
    }
    const verdict = verdictOf(node);
    out.push('', `Verdict: ${node.complete && node.inventory.ready ? paint(32, verdict) : paint(31, verdict)}`, '');
  }
  return out.join('\n');
}
