import { compareText } from '../compare.js';
import type { Finding } from '../evaluate/finding.js';
import type { SubjectSets } from '../facts/subjects.js';
import type { LoadedRule, Severity } from '../policy/types.js';

/**
 * Where each resource stands before a node is handed to the mesh (ADR 0100): what the host wrote,
 * what it found and will hold for ever, and what no record claims.
 */
export type Standing =
  | 'declared-present'
  | 'declared-missing'
  | 'found-recorded'
  | 'drifted'
  | 'mesh-unclaimed'
  | 'unknown-unrecorded'
  | 'stale-former-target'
  | 'double-claimed';

/** In the order a person reads them, with what each means and whether a finding putting a resource there blocks. */
export const STANDINGS: readonly { standing: Standing; title: string; blocking: boolean; meaning: string }[] = [
  { standing: 'declared-present', title: 'declared and present', blocking: false, meaning: 'the host wrote it and it is there' },
  { standing: 'declared-missing', title: 'declared and missing', blocking: true, meaning: 'the ledger says the host applied it, but it is not there' },
  { standing: 'found-recorded', title: 'found and recorded', blocking: false, meaning: 'adopted as found: it will be held and never removed' },
  { standing: 'drifted', title: 'drifted from what it was built from', blocking: true, meaning: 'it runs with values or files its sources no longer say; recreate it' },
  { standing: 'mesh-unclaimed', title: 'written by the mesh but unclaimed', blocking: true, meaning: 'mesh labels or sources name it, no ledger entry claims it' },
  { standing: 'unknown-unrecorded', title: 'unknown origin and unrecorded', blocking: true, meaning: 'nothing records it: after migration it would become "found" and be held for ever' },
  { standing: 'stale-former-target', title: 'stale at a former target', blocking: true, meaning: 'a ledger entry moved away from it and it stayed' },
  { standing: 'double-claimed', title: 'claimed by two entries', blocking: true, meaning: 'two ledger entries claim it; removing either removes the other\'s' },
];

/**
 * The tag by which a rule puts the resource of its findings in a standing (policies/mesh-core.yaml;
 * a custom pack may use it too). `standing:unrecorded` is resolved by a fact: `mesh-unclaimed` when
 * the mesh wrote the resource (mesh labels, or named as a container's source), else
 * `unknown-unrecorded`.
 */
export const STANDING_TAG = 'standing:';
const TAGGED = new Set<string>([...STANDINGS.map((s) => s.standing), 'unrecorded']);

/** When two rules put one resource in two standings, the one earlier here is shown (and planned). */
const PRECEDENCE: readonly Standing[] = ['double-claimed', 'stale-former-target', 'mesh-unclaimed', 'unknown-unrecorded', 'declared-missing', 'drifted'];

/** A finding that keeps the node from being ready: an error, or one that puts a resource in a blocking standing. */
export interface Blocker {
  ruleId: string;
  ruleName: string;
  severity: Severity;
  subject: { kind: string; id: string };
  message: string;
  /** The standing the finding puts its resource in, when the rule says so. */
  standing: Standing | null;
  /** The inventory row it is about, when it is about a container or file (a ledger entry: the target it claims). */
  resource: { kind: 'container' | 'file'; id: string } | null;
}

export interface InventoryRow {
  kind: 'container' | 'file';
  /** A container's name or a file's path. */
  id: string;
  standing: Standing;
  /** `findings`: a rule of the profile put it there (tag `standing:…`); `facts`: no rule did, it stands on its claims. */
  standingFrom: 'findings' | 'facts';
  /** True when a finding about it blocks the migration (see `blockers`). */
  blocking: boolean;
  /** Ledger entries that claim it now (or claimed it, for a stale one). */
  entries: string[];
  detail: string;
  /** The findings about it, in report order (their messages are secret-safe). */
  findings: { ruleId: string; severity: Severity; message: string }[];
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
  /** Nothing blocks: no error finding and no finding putting a resource in a blocking standing. */
  ready: boolean;
  /** Blocking resources per blocking standing (a resource blocked by another finding is named in `blockers`). */
  blocking: Partial<Record<Standing, number>>;
  /** Every finding that blocks, in report order. */
  blockers: Blocker[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const numbers = (v: unknown): number[] => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : []);
const formerIds = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => str((x as { id?: unknown }).id)).filter((x) => x !== '') : []);
const blocks = (s: Standing): boolean => STANDINGS.find((x) => x.standing === s)!.blocking;

/** The standing a rule's tags give its findings' resources, before the `unrecorded` fact is applied. */
function taggedStanding(rule: LoadedRule | undefined): string | null {
  const tag = rule?.tags.find((t) => t.startsWith(STANDING_TAG) && TAGGED.has(t.slice(STANDING_TAG.length)));
  return tag === undefined ? null : tag.slice(STANDING_TAG.length);
}

/**
 * The inventory of a node (pure): every container, every file under the managed roots or recorded in
 * the ledger, and every declared resource that is missing, each in the standing the findings of the
 * profile's rules put it in. A resource no standing-tagged finding is about stands on its claims
 * (declared or found) or, unclaimed, on what it is — and then blocks nothing: only findings block.
 */
export function buildInventory(subjects: SubjectSets, findings: readonly Finding[], rules: readonly LoadedRule[]): Inventory {
  const ruleById = new Map(rules.map((r) => [r.id, r]));
  const ledger = subjects.ledger.map((s) => s.data);
  const validLedger = ledger.filter((d) => d['valid'] === true);
  const entryById = new Map(validLedger.map((d) => [str(d['id']), d]));
  const origins = (ids: string[]) => ids.map((id) => entryById.get(id)?.['origin'] ?? 'declared');
  const labelSources = new Set(subjects.containers.flatMap((s) => strings((s.data['mesh'] as { sources?: unknown }).sources)));

  interface Draft {
    kind: 'container' | 'file';
    id: string;
    data: Record<string, unknown> | null;
    entries: string[];
    /** Facts only: what the resource is when no rule says otherwise. */
    plain: Standing;
    meshWritten: boolean;
    missing: boolean;
    findings: Finding[];
  }
  const drafts = new Map<string, Draft>();
  const key = (kind: string, id: string) => `${kind}\u0000${id}`;
  const plainOf = (claimedBy: string[], former: string[], meshWritten: boolean): Standing =>
    claimedBy.length > 1 ? 'double-claimed'
    : claimedBy.length === 1 ? (origins(claimedBy).includes('found') ? 'found-recorded' : 'declared-present')
    : former.length > 0 ? 'stale-former-target'
    : meshWritten ? 'mesh-unclaimed'
    : 'unknown-unrecorded';

  for (const { data: c } of subjects.containers) {
    const claimedBy = strings(c['claimed_by']);
    const former = formerIds(c['formerly_claimed_by']);
    const meshWritten = c['mesh_labelled'] === true;
    const name = str(c['name']);
    drafts.set(key('container', name), {
      kind: 'container', id: name, data: c, entries: claimedBy.length > 0 ? claimedBy : former,
      plain: plainOf(claimedBy, former, meshWritten), meshWritten, missing: false, findings: [],
    });
  }
  for (const { data: f } of subjects.files) {
    const claimedBy = strings(f['claimed_by']);
    const former = formerIds(f['formerly_claimed_by']);
    const underRoot = f['managed_root'] !== null && ['file', 'symlink'].includes(str(f['file_kind']));
    // Outside the managed roots only what the ledger names or named: recorded files, and stale ones at a former path.
    if (!underRoot && !((claimedBy.length > 0 || former.length > 0) && f['exists'] === true)) continue;
    const referenced = strings(f['referenced_by']);
    const meshWritten = referenced.length > 0 || labelSources.has(str(f['path']));
    drafts.set(key('file', str(f['path'])), {
      kind: 'file', id: str(f['path']), data: f, entries: claimedBy.length > 0 ? claimedBy : former.length > 0 ? former : referenced,
      plain: plainOf(claimedBy, former, meshWritten), meshWritten, missing: false, findings: [],
    });
  }
  // Declared resources that are not there have no container or file to stand on: they come from the ledger.
  for (const e of validLedger) {
    const type = str(e['type']);
    if (e['present'] !== false || (type !== 'container' && type !== 'file')) continue;
    const k = key(type, str(e['target']));
    const found = e['origin'] === 'found';
    const draft = drafts.get(k);
    if (draft) draft.entries = [...new Set([...draft.entries, str(e['id'])])];
    else drafts.set(k, { kind: type, id: str(e['target']), data: null, entries: [str(e['id'])], plain: found ? 'found-recorded' : 'declared-missing', meshWritten: false, missing: true, findings: [] });
  }

  /** The resource a finding is about: its container or file, or for a ledger entry the target it claims. */
  const resourceOf = (f: Finding): Draft | undefined => {
    if (f.subject.kind === 'container' || f.subject.kind === 'file') return drafts.get(key(f.subject.kind, f.subject.id));
    if (f.subject.kind !== 'ledger-entry') return undefined;
    const e = entryById.get(f.subject.id);
    if (!e) return undefined;
    const type = str(e['type']);
    return drafts.get(key(type, str(e['target']))) ?? [...drafts.values()].find((d) => d.kind === type && d.entries.includes(f.subject.id));
  };
  const blockers: Blocker[] = [];
  for (const f of findings) {
    const draft = resourceOf(f);
    draft?.findings.push(f);
    const tagged = taggedStanding(ruleById.get(f.ruleId));
    const standing = tagged === null ? null : resolveTag(tagged, draft);
    if (f.severity === 'error' || (standing !== null && blocks(standing))) {
      blockers.push({ ruleId: f.ruleId, ruleName: f.ruleName, severity: f.severity, subject: f.subject, message: f.message, standing, resource: draft ? { kind: draft.kind, id: draft.id } : null });
    }
  }

  const rows: InventoryRow[] = [...drafts.values()].map((d) => {
    const taggedStandings = d.findings.map((f) => taggedStanding(ruleById.get(f.ruleId))).filter((t): t is string => t !== null).map((t) => resolveTag(t, d));
    const ruled = PRECEDENCE.find((s) => taggedStandings.includes(s));
    const standing = ruled ?? d.plain;
    const blocking = d.findings.some((f) => f.severity === 'error') || (ruled !== undefined && blocks(ruled));
    return { kind: d.kind, id: d.id, standing, standingFrom: ruled !== undefined ? ('findings' as const) : ('facts' as const), blocking, entries: d.entries, detail: detailOf(d, standing, ruled !== undefined), findings: d.findings.map((f) => ({ ruleId: f.ruleId, severity: f.severity, message: f.message })) };
  });

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
  for (const r of rows) if (r.blocking && r.standingFrom === 'findings' && blocks(r.standing)) blocking[r.standing] = (blocking[r.standing] ?? 0) + 1;
  return { rows, ports: ports.sort((a, b) => compareText(a.container, b.container)), ready: blockers.length === 0, blocking, blockers };
}

function resolveTag(tagged: string, draft: { meshWritten: boolean } | undefined): Standing {
  if (tagged !== 'unrecorded') return tagged as Standing;
  return draft?.meshWritten === true ? 'mesh-unclaimed' : 'unknown-unrecorded';
}

function detailOf(d: { kind: string; data: Record<string, unknown> | null; entries: string[]; missing: boolean; findings: Finding[] }, standing: Standing, ruled: boolean): string {
  const c = d.data ?? {};
  const base =
    d.missing ? (standing === 'found-recorded' ? 'found, recorded, and not there now' : 'not on the host')
    : standing === 'double-claimed' ? `claimed by ${d.entries.join(' and ')}`
    : standing === 'stale-former-target' ? `${d.entries.join(', ')} moved away${d.kind === 'container' ? `; ${str(c['status'])}` : ''}`
    : standing === 'drifted' ? `${d.findings.length} drift finding${d.findings.length === 1 ? '' : 's'} (${[...new Set(d.findings.map((f) => f.ruleId))].sort(compareText).join(', ')})`
    : standing === 'mesh-unclaimed' && d.kind === 'container' ? `labels: module ${str((c['mesh'] as { module?: unknown } | undefined)?.module) || '-'}, resource ${str((c['mesh'] as { resource?: unknown } | undefined)?.resource) || '-'}`
    : standing === 'mesh-unclaimed' ? 'named as a source, claimed by no file entry'
    : standing === 'unknown-unrecorded' ? (d.kind === 'container' ? `${str(c['status'])}, image ${str(c['image'])}` : `${str(c['file_kind'])} under ${str(c['managed_root'])}`)
    : d.kind === 'container' ? `${str(c['status'])}, ${str(c['network_mode'])} network`
    : c['managed_root'] === null ? 'outside the managed roots'
    : str(c['file_kind']);
  // A blocking standing no rule of the profile objects to (a custom pack without that rule) does not block.
  return !ruled && blocks(standing) ? `${base}; no rule of the profile objects` : base;
}
