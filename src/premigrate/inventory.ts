import { compareText } from '../compare.js';
import type { SubjectSets } from '../facts/subjects.js';

/**
 * Where each resource stands before a node is handed to the mesh (ADR 0100): what the host wrote,
 * what it found and will hold for ever, and what no record claims.
 */
export type Standing =
  | 'declared-present'
  | 'declared-missing'
  | 'found-recorded'
  | 'mesh-unclaimed'
  | 'unknown-unrecorded'
  | 'stale-former-target'
  | 'double-claimed';

/** In the order a person reads them, with what each means and whether it blocks the migration. */
export const STANDINGS: readonly { standing: Standing; title: string; blocking: boolean; meaning: string }[] = [
  { standing: 'declared-present', title: 'declared and present', blocking: false, meaning: 'the host wrote it and it is there' },
  { standing: 'declared-missing', title: 'declared and missing', blocking: true, meaning: 'the ledger says the host applied it, but it is not there' },
  { standing: 'found-recorded', title: 'found and recorded', blocking: false, meaning: 'adopted as found: it will be held and never removed' },
  { standing: 'mesh-unclaimed', title: 'written by the mesh but unclaimed', blocking: true, meaning: 'mesh labels or sources name it, no ledger entry claims it' },
  { standing: 'unknown-unrecorded', title: 'unknown origin and unrecorded', blocking: true, meaning: 'nothing records it: after migration it would become "found" and be held for ever' },
  { standing: 'stale-former-target', title: 'stale at a former target', blocking: true, meaning: 'a ledger entry moved away from it and it stayed' },
  { standing: 'double-claimed', title: 'claimed by two entries', blocking: true, meaning: 'two ledger entries claim it; removing either removes the other\'s' },
];

export interface InventoryRow {
  kind: 'container' | 'file';
  /** A container's name or a file's path. */
  id: string;
  standing: Standing;
  /** Ledger entries that claim it now (or claimed it, for a stale one). */
  entries: string[];
  detail: string;
}

export interface PortRow {
  container: string;
  holds: number[];
  open: number[];
  /** For each held port, the other containers that have it open. */
  alsoBoundBy: { port: number; containers: string[] }[];
}

export interface Inventory {
  rows: InventoryRow[];
  ports: PortRow[];
  ready: boolean;
  blocking: Partial<Record<Standing, number>>;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const numbers = (v: unknown): number[] => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : []);
const formerIds = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => str((x as { id?: unknown }).id)).filter((x) => x !== '') : []);

/** The inventory of a node from its subjects (pure). */
export function buildInventory(subjects: SubjectSets): Inventory {
  const rows: InventoryRow[] = [];
  const ledger = subjects.ledger.map((s) => s.data).filter((d) => d['valid'] === true);
  const origin = (ids: string[]) => ledger.filter((d) => ids.includes(str(d['id']))).map((d) => d['origin'] ?? 'declared');

  for (const { data: c } of subjects.containers) {
    const claimedBy = strings(c['claimed_by']);
    const former = formerIds(c['formerly_claimed_by']);
    const name = str(c['name']);
    let row: Omit<InventoryRow, 'kind' | 'id'>;
    if (claimedBy.length > 1) row = { standing: 'double-claimed', entries: claimedBy, detail: `claimed by ${claimedBy.join(' and ')}` };
    else if (claimedBy.length === 1) {
      const found = origin(claimedBy).includes('found');
      row = { standing: found ? 'found-recorded' : 'declared-present', entries: claimedBy, detail: `${str(c['status'])}, ${str(c['network_mode'])} network` };
    } else if (former.length > 0) row = { standing: 'stale-former-target', entries: former, detail: `${former.join(', ')} moved away; ${str(c['status'])}` };
    else if (c['mesh_labelled'] === true) {
      const mesh = c['mesh'] as { module?: unknown; resource?: unknown };
      row = { standing: 'mesh-unclaimed', entries: [], detail: `labels: module ${str(mesh.module) || '-'}, resource ${str(mesh.resource) || '-'}` };
    } else row = { standing: 'unknown-unrecorded', entries: [], detail: `${str(c['status'])}, image ${str(c['image'])}` };
    rows.push({ kind: 'container', id: name, ...row });
  }

  const labelSources = new Set(subjects.containers.flatMap((s) => strings((s.data['mesh'] as { sources?: unknown }).sources)));
  for (const { data: f } of subjects.files) {
    if (f['managed_root'] === null || !['file', 'symlink'].includes(str(f['file_kind']))) continue;
    const claimedBy = strings(f['claimed_by']);
    const referenced = strings(f['referenced_by']);
    const former = formerIds(f['formerly_claimed_by']);
    let row: Omit<InventoryRow, 'kind' | 'id'>;
    if (claimedBy.length > 1) row = { standing: 'double-claimed', entries: claimedBy, detail: `claimed by ${claimedBy.join(' and ')}` };
    else if (claimedBy.length === 1) row = { standing: origin(claimedBy).includes('found') ? 'found-recorded' : 'declared-present', entries: claimedBy, detail: str(f['file_kind']) };
    else if (former.length > 0) row = { standing: 'stale-former-target', entries: former, detail: `${former.join(', ')} moved away` };
    else if (referenced.length > 0 || labelSources.has(str(f['path']))) row = { standing: 'mesh-unclaimed', entries: referenced, detail: 'named as a source, claimed by no file entry' };
    else row = { standing: 'unknown-unrecorded', entries: [], detail: `${str(f['file_kind'])} under ${str(f['managed_root'])}` };
    rows.push({ kind: 'file', id: str(f['path']), ...row });
  }

  // Recorded files outside the managed roots are not walked: they stand on their ledger entry.
  const listed = new Set(rows.map((r) => `${r.kind} ${r.id}`));
  for (const e of ledger) {
    if (e['type'] !== 'file' || e['present'] !== true || listed.has(`file ${str(e['target'])}`)) continue;
    const found = e['origin'] === 'found';
    rows.push({ kind: 'file', id: str(e['target']), standing: found ? 'found-recorded' : 'declared-present', entries: [str(e['id'])], detail: 'outside the managed roots' });
  }

  // Declared resources that are not there have no container or file to stand on: they come from the ledger.
  for (const e of ledger) {
    if (e['present'] !== false || !['container', 'file'].includes(str(e['type']))) continue;
    const found = e['origin'] === 'found';
    rows.push({
      kind: str(e['type']) as 'container' | 'file',
      id: str(e['target']),
      standing: found ? 'found-recorded' : 'declared-missing',
      entries: [str(e['id'])],
      detail: found ? 'found, recorded, and not there now' : 'not on the host',
    });
  }

  const openBy = subjects.containers.map((s) => ({ name: str(s.data['name']), open: numbers(s.data['open_ports']) }));
  const ports: PortRow[] = subjects.containers
    .map((s) => ({ name: str(s.data['name']), holds: numbers(s.data['holds']), open: numbers(s.data['open_ports']) }))
    .filter((c) => c.holds.length > 0 || c.open.length > 0)
    .map((c) => ({
      container: c.name,
      holds: c.holds,
      open: c.open,
      alsoBoundBy: c.holds
        .map((port) => ({ port, containers: openBy.filter((o) => o.name !== c.name && o.open.includes(port)).map((o) => o.name) }))
        .filter((x) => x.containers.length > 0),
    }));

  const order = new Map(STANDINGS.map((s, i) => [s.standing, i]));
  rows.sort((a, b) => order.get(a.standing)! - order.get(b.standing)! || compareText(a.kind, b.kind) || compareText(a.id, b.id));
  const blocking: Partial<Record<Standing, number>> = {};
  for (const r of rows) if (STANDINGS.find((s) => s.standing === r.standing)!.blocking) blocking[r.standing] = (blocking[r.standing] ?? 0) + 1;
  return { rows, ports: ports.sort((a, b) => compareText(a.container, b.container)), ready: Object.keys(blocking).length === 0, blocking };
}
