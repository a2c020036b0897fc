import { compareText } from '../text/compare.js';
import type { Finding } from '../evaluate/finding.js';
import type { SubjectSets } from '../facts/subjects.js';
import type {
  ContainerData,
  FileData,
  LedgerEntryData,
  ListenerData,
  NetworkData,
  VolumeData,
} from '../policy/subject-data.js';
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
  {
    standing: 'declared-present',
    title: 'declared and present',
    blocking: false,
    meaning: 'the host wrote it and it is there',
  },
  {
    standing: 'declared-missing',
    title: 'declared and missing',
    blocking: true,
    meaning: 'the ledger says the host applied it, but it is not there',
  },
  {
    standing: 'found-recorded',
    title: 'found and recorded',
    blocking: false,
    meaning: 'adopted as found: it will be held and never removed',
  },
  {
    standing: 'drifted',
    title: 'drifted from what it was built from',
    blocking: true,
    meaning: 'it runs with values or files its sources no longer say; recreate it',
  },
  {
    standing: 'mesh-unclaimed',
    title: 'written by the mesh but unclaimed',
    blocking: true,
    meaning: 'mesh labels or sources name it, no ledger entry claims it',
  },
  {
    standing: 'unknown-unrecorded',
    title: 'unknown origin and unrecorded',
    blocking: true,
    meaning: 'nothing records it: after migration it would become "found" and be held for ever',
  },
  {
    standing: 'stale-former-target',
    title: 'stale at a former target',
    blocking: true,
    meaning: 'a ledger entry moved away from it and it stayed',
  },
  {
    standing: 'double-claimed',
    title: 'claimed by two entries',
    blocking: true,
    meaning: "two ledger entries claim it; removing either removes the other's",
  },
];

/**
 * The tag by which a rule puts the resource of its findings in a standing (policies/mesh-core/;
 * a custom pack may use it too). `standing:unrecorded` is resolved by a fact: `mesh-unclaimed` when
 * the mesh wrote the resource (mesh labels, or named as a container's source), else
 * `unknown-unrecorded`.
 */
export const STANDING_TAG = 'standing:';
const TAGGED = new Set<string>([...STANDINGS.map((s) => s.standing), 'unrecorded']);

/** When two rules put one resource in two standings, the one earlier here is shown (and planned). */
const PRECEDENCE: readonly Standing[] = [
  'double-claimed',
  'stale-former-target',
  'mesh-unclaimed',
  'unknown-unrecorded',
  'declared-missing',
  'drifted',
];

/**
 * What the inventory lists: containers and files, the networks and named volumes the engine has (not its own
 * default networks, not anonymous volumes), and the host's sockets listening beyond loopback that no container
 * of the engine's list holds (a container's own sockets stand with the container).
 */
export type ResourceKind = 'container' | 'file' | 'network' | 'volume' | 'listener';

/** A finding that keeps the node from being ready: an error, or one that puts a resource in a blocking standing. */
export interface Blocker {
  ruleId: string;
  ruleName: string;
  severity: Severity;
  subject: { kind: string; id: string };
  message: string;
  /** The standing the finding puts its resource in, when the rule says so. */
  standing: Standing | null;
  /** The inventory row it is about, when it is about a listed resource (a ledger entry: the target it claims). */
  resource: { kind: ResourceKind; id: string } | null;
}

export interface InventoryRow {
  kind: ResourceKind;
  /** A container's, network's or volume's name, a file's path, or a listener's endpoint (`0.0.0.0:22/tcp`). */
  id: string;
  standing: Standing;
  /**
   * `findings`: a rule of the profile put it there (tag `standing:…`); `facts`: no rule did, it stands on its claims.
   */
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
  /**
   * The findings about no resource of the inventory (the host, a ledger entry whose target is neither), in report
   * order.
   */
  unplaced: Finding[];
}

const blocks = (s: Standing): boolean => STANDINGS.find((x) => x.standing === s)!.blocking;

/** The standing a rule's tags give its findings' resources, before the `unrecorded` fact is applied. */
function taggedStanding(rule: LoadedRule | undefined): string | null {
  const tag = rule?.tags.find((t) => t.startsWith(STANDING_TAG) && TAGGED.has(t.slice(STANDING_TAG.length)));
  return tag === undefined ? null : tag.slice(STANDING_TAG.length);
}

/** A resource on its way to an inventory row: what it is, and the findings about it. */
interface Draft {
  kind: ResourceKind;
  id: string;
  container: ContainerData | null;
  file: FileData | null;
  network?: NetworkData;
  volume?: VolumeData;
  listener?: ListenerData;
  entries: string[];
  /** Facts only: what the resource is when no rule says otherwise. */
  plain: Standing;
  meshWritten: boolean;
  missing: boolean;
  findings: Finding[];
}

const draftKey = (kind: string, id: string) => `${kind}\u0000${id}`;

/**
 * The inventory of a node (pure): every container, every file under the managed roots or recorded in
 * the ledger, and every declared resource that is missing, each in the standing the findings of the
 * profile's rules put it in. A resource no standing-tagged finding is about stands on its claims
 * (declared or found) or, unclaimed, on what it is — and then blocks nothing: only findings block.
 */
export function buildInventory(
  subjects: SubjectSets,
  findings: readonly Finding[],
  rules: readonly LoadedRule[],
): Inventory {
  const ruleById = new Map(rules.map((r) => [r.id, r]));
  const validLedger = subjects.ledger.map((s) => s.data).filter((d) => d.valid);
  const entryById = new Map(validLedger.map((d) => [d.id, d]));
  const drafts = draftsOf(subjects, validLedger, entryById);
  const { blockers, unplaced } = assignFindings(drafts, entryById, findings, ruleById);
  const rows: InventoryRow[] = [...drafts.values()].map((d) => rowOf(d, ruleById));
  const order = new Map(STANDINGS.map((s, i) => [s.standing, i]));
  rows.sort(
    (a, b) => order.get(a.standing)! - order.get(b.standing)! || compareText(a.kind, b.kind) || compareText(a.id, b.id),
  );
  const blocking: Partial<Record<Standing, number>> = {};
  for (const r of rows)
    if (r.blocking && r.standingFrom === 'findings' && blocks(r.standing))
      blocking[r.standing] = (blocking[r.standing] ?? 0) + 1;
  return {
    rows,
    ports: portRows(subjects.containers.map((s) => s.data)),
    ready: blockers.length === 0,
    blocking,
    blockers,
    unplaced,
  };
}

/** One draft per container, per file the inventory lists, and per declared resource that is missing. */
function draftsOf(
  subjects: SubjectSets,
  validLedger: readonly LedgerEntryData[],
  entryById: ReadonlyMap<string, LedgerEntryData>,
): Map<string, Draft> {
  const origins = (ids: string[]) => ids.map((id) => entryById.get(id)?.origin ?? 'declared');
  const labelSources = new Set(subjects.containers.flatMap((s) => s.data.mesh.sources));
  const plainOf = (claimedBy: string[], former: string[], meshWritten: boolean): Standing =>
    claimedBy.length > 1
      ? 'double-claimed'
      : claimedBy.length === 1
        ? origins(claimedBy).includes('found')
          ? 'found-recorded'
          : 'declared-present'
        : former.length > 0
          ? 'stale-former-target'
          : meshWritten
            ? 'mesh-unclaimed'
            : 'unknown-unrecorded';
  const drafts = new Map<string, Draft>();
  for (const { data: c } of subjects.containers) {
    const former = c.formerly_claimed_by.map((f) => f.id);
    drafts.set(draftKey('container', c.name), {
      kind: 'container',
      id: c.name,
      container: c,
      file: null,
      entries: c.claimed_by.length > 0 ? c.claimed_by : former,
      plain: plainOf(c.claimed_by, former, c.mesh_labelled),
      meshWritten: c.mesh_labelled,
      missing: false,
      findings: [],
    });
  }
  for (const { data: f } of subjects.files) {
    const former = f.formerly_claimed_by.map((x) => x.id);
    const underRoot = f.managed_root !== null && (f.file_kind === 'file' || f.file_kind === 'symlink');
    // Outside the managed roots only what the ledger names or named: recorded files, and stale ones at a former path.
    if (!underRoot && !((f.claimed_by.length > 0 || former.length > 0) && f.exists)) continue;
    const meshWritten = f.referenced_by.length > 0 || labelSources.has(f.path);
    drafts.set(draftKey('file', f.path), {
      kind: 'file',
      id: f.path,
      container: null,
      file: f,
      entries: f.claimed_by.length > 0 ? f.claimed_by : former.length > 0 ? former : f.referenced_by,
      plain: plainOf(f.claimed_by, former, meshWritten),
      meshWritten,
      missing: false,
      findings: [],
    });
  }
  objectDrafts(subjects, plainOf, drafts);
  // Declared resources that are not there have nothing to stand on: they come from the ledger.
  for (const e of validLedger) {
    if (e.present !== false || e.target === null) continue;
    if (e.type !== 'container' && e.type !== 'file' && e.type !== 'network' && e.type !== 'volume') continue;
    const k = draftKey(e.type, e.target);
    const draft = drafts.get(k);
    if (draft) draft.entries = [...new Set([...draft.entries, e.id])];
    else
      drafts.set(k, {
        kind: e.type,
        id: e.target,
        container: null,
        file: null,
        entries: [e.id],
        plain: e.origin === 'found' ? 'found-recorded' : 'declared-missing',
        meshWritten: false,
        missing: true,
        findings: [],
      });
  }
  return drafts;
}

/**
 * Networks (not the engine's defaults), named volumes (an anonymous one belongs to its container), and host
 * listeners beyond loopback that no listed container holds. A set that was not read stands as one wholly unknown
 * subject with no name: it lists nothing here (the node is then incomplete, and has no verdict).
 */
function objectDrafts(
  subjects: SubjectSets,
  plainOf: (claimedBy: string[], former: string[], meshWritten: boolean) => Standing,
  drafts: Map<string, Draft>,
): void {
  // A function, not a constant: each draft gathers its own findings.
  const base = () => ({ container: null, file: null, missing: false, findings: [] as Finding[] });
  for (const { data: n } of subjects.networks) {
    if (typeof n.name !== 'string' || n.default) continue;
    const former = n.formerly_claimed_by.map((f) => f.id);
    drafts.set(draftKey('network', n.name), {
      ...base(),
      kind: 'network',
      id: n.name,
      network: n,
      entries: n.claimed_by.length > 0 ? n.claimed_by : former,
      plain: plainOf(n.claimed_by, former, n.mesh_labelled),
      meshWritten: n.mesh_labelled,
    });
  }
  for (const { data: v } of subjects.volumes) {
    if (typeof v.name !== 'string' || v.anonymous) continue;
    const former = v.formerly_claimed_by.map((f) => f.id);
    drafts.set(draftKey('volume', v.name), {
      ...base(),
      kind: 'volume',
      id: v.name,
      volume: v,
      entries: v.claimed_by.length > 0 ? v.claimed_by : former,
      plain: plainOf(v.claimed_by, former, v.mesh_labelled),
      meshWritten: v.mesh_labelled,
    });
  }
  for (const { data: l } of subjects.listeners) {
    if (l.namespace !== 'host' || l.reach === 'loopback') continue;
    // Held by a container of the engine's list (or as its published port): it stands with that container.
    if ((l.owner === 'container' || l.owner === 'published-port') && l.container !== null) continue;
    drafts.set(draftKey('listener', l.id), {
      ...base(),
      kind: 'listener',
      id: l.id,
      listener: l,
      entries: l.declared_by,
      plain: l.declared_by.length > 0 ? plainOf(l.declared_by, [], false) : 'unknown-unrecorded',
      meshWritten: false,
    });
  }
}

/** Each finding to the draft of the resource it is about; the findings that block, in report order. */
function assignFindings(
  drafts: Map<string, Draft>,
  entryById: ReadonlyMap<string, LedgerEntryData>,
  findings: readonly Finding[],
  ruleById: ReadonlyMap<string, LoadedRule>,
): { blockers: Blocker[]; unplaced: Finding[] } {
  /** The resource a finding is about: its container or file, or for a ledger entry the target it claims. */
  const resourceOf = (f: Finding): Draft | undefined => {
    if (f.subject.kind !== 'ledger-entry') return drafts.get(draftKey(f.subject.kind, f.subject.id));
    const e = entryById.get(f.subject.id);
    if (!e) return undefined;
    return (
      drafts.get(draftKey(e.type ?? '', e.target ?? '')) ??
      [...drafts.values()].find((d) => d.kind === e.type && d.entries.includes(f.subject.id))
    );
  };
  const blockers: Blocker[] = [];
  const unplaced: Finding[] = [];
  for (const f of findings) {
    const draft = resourceOf(f);
    if (draft) draft.findings.push(f);
    else unplaced.push(f);
    const tagged = taggedStanding(ruleById.get(f.ruleId));
    const standing = tagged === null ? null : resolveTag(tagged, draft);
    if (f.severity === 'error' || (standing !== null && blocks(standing))) {
      blockers.push({
        ruleId: f.ruleId,
        ruleName: f.ruleName,
        severity: f.severity,
        subject: f.subject,
        message: f.message,
        standing,
        resource: draft ? { kind: draft.kind, id: draft.id } : null,
      });
    }
  }
  return { blockers, unplaced };
}

function rowOf(d: Draft, ruleById: ReadonlyMap<string, LoadedRule>): InventoryRow {
  const taggedStandings = d.findings
    .map((f) => taggedStanding(ruleById.get(f.ruleId)))
    .filter((t): t is string => t !== null)
    .map((t) => resolveTag(t, d));
  const ruled = PRECEDENCE.find((s) => taggedStandings.includes(s));
  const standing = ruled ?? d.plain;
  const blocking = d.findings.some((f) => f.severity === 'error') || (ruled !== undefined && blocks(ruled));
  return {
    kind: d.kind,
    id: d.id,
    standing,
    standingFrom: ruled !== undefined ? 'findings' : 'facts',
    blocking,
    entries: d.entries,
    detail: detailOf(d, standing, ruled !== undefined),
    findings: d.findings.map((f) => ({ ruleId: f.ruleId, severity: f.severity, message: f.message })),
  };
}

/** Containers that hold ports or have ports open, with the other containers that have a held port open. */
function portRows(containers: readonly ContainerData[]): PortRow[] {
  return containers
    .filter((c) => c.holds.length > 0 || c.open_ports.length > 0)
    .map((c) => ({
      container: c.name,
      holds: c.holds,
      open: c.open_ports,
      alsoBoundBy: c.holds
        .map((port) => ({
          port,
          containers: containers.filter((o) => o.name !== c.name && o.open_ports.includes(port)).map((o) => o.name),
        }))
        .filter((x) => x.containers.length > 0),
    }))
    .sort((a, b) => compareText(a.container, b.container));
}

function resolveTag(tagged: string, draft: { meshWritten: boolean } | undefined): Standing {
  if (tagged !== 'unrecorded') return tagged as Standing;
  return draft?.meshWritten === true ? 'mesh-unclaimed' : 'unknown-unrecorded';
}

/** What a network, volume or listener is, in a few words: the detail of its row whatever its standing. */
function objectDetail(d: Draft, standing: Standing): string | null {
  const labels = (m: { module: string | null; resource: string | null }) =>
    `labels: module ${m.module ?? '-'}, resource ${m.resource ?? '-'}`;
  const moved = standing === 'stale-former-target' ? `${d.entries.join(', ')} moved away; ` : '';
  if (d.network) {
    const n = d.network;
    const attached = n.containers.length > 0 ? `attached: ${n.containers.join(', ')}` : 'no container attached';
    const what = `${n.driver}${n.internal ? ' internal' : ''} network, ${attached}`;
    return moved + (standing === 'mesh-unclaimed' ? `${labels(n.mesh)}; ${what}` : what);
  }
  if (d.volume) {
    const v = d.volume;
    const users = v.used_by.length > 0 ? `mounted by ${v.used_by.join(', ')}` : 'mounted by no container';
    const what = `${v.driver} volume holding data at ${v.mountpoint}, ${users}`;
    return moved + (standing === 'mesh-unclaimed' ? `${labels(v.mesh)}; ${what}` : what);
  }
  if (d.listener) {
    const l = d.listener;
    const reach = l.reach === 'all-interfaces' ? 'on every interface' : 'on one address';
    const holder =
      l.process !== null
        ? `host process ${l.process.name ?? '?'} (pid ${l.process.pid}, ${l.process.exe ?? 'executable not read'})`
        : l.owner === 'kernel'
          ? 'no process (a kernel service)'
          : l.owner === 'process'
            ? 'a process not known (not every process could be read)'
            : 'a container the engine does not list';
    return `${reach}, held by ${holder}`;
  }
  return null;
}

function detailOf(d: Draft, standing: Standing, ruled: boolean): string {
  const c = d.container;
  const f = d.file;
  const object = d.missing ? null : objectDetail(d, standing);
  const base =
    object ??
    (d.missing
      ? standing === 'found-recorded'
        ? 'found, recorded, and not there now'
        : 'not on the host'
      : standing === 'double-claimed'
        ? `claimed by ${d.entries.join(' and ')}`
        : standing === 'stale-former-target'
          ? `${d.entries.join(', ')} moved away${c ? `; ${c.status}` : ''}`
          : standing === 'drifted'
            ? `${d.findings.length} drift finding${d.findings.length === 1 ? '' : 's'} ` +
              `(${[...new Set(d.findings.map((x) => x.ruleId))].sort(compareText).join(', ')})`
            : standing === 'mesh-unclaimed' && c
              ? `labels: module ${c.mesh.module || '-'}, resource ${c.mesh.resource || '-'}`
              : standing === 'mesh-unclaimed'
                ? 'named as a source, claimed by no file entry'
                : standing === 'unknown-unrecorded'
                  ? c
                    ? `${c.status}, image ${c.image}`
                    : `${f?.file_kind ?? ''} under ${f?.managed_root ?? ''}`
                  : c
                    ? `${c.status}, ${c.network_mode} network`
                    : f?.managed_root === null
                      ? 'outside the managed roots'
                      : (f?.file_kind ?? ''));
  // A blocking standing no rule of the profile objects to (a custom pack without that rule) does not block.
  return !ruled && blocks(standing) ? `${base}; no rule of the profile objects` : base;
}
