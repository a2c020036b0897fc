import type { Container, FileRecord, LedgerRecord, ScanConfig, Snapshot } from '../snapshot/types.js';
import { engineAddedKeys } from '../engine/engine-env.js';
import type { PastEnvFile } from '../snapshot/past.js';
import type { ReadingName } from './env-readings.js';
import { formerTargets, pastOfAll, type FormerTarget, type HistoryInput } from './history.js';
import type { ContainerData, FormerClaim } from '../policy/subject-data.js';
import { normalImageId } from '../snapshot/image-id.js';
import { daemonSecurityOf, imageFactsOf, restartLoopOf, type ContainerImageFacts } from './runtime.js';
import { containerNamedIn, lookupsOf, type SnapshotLookups } from './lookups.js';
import { NONE, orNone } from './none.js';
import { KeptParts } from './kept-parts.js';

/**
 * The joins between a snapshot's ledger, containers, files and history that every subject builder
 * (containers.ts, files.ts, …) asks for, and what was not read. JSON Logic has no parent scope inside
 * `all`/`some`/`map`, so each subject carries its joins ready-made.
 */
export interface Joins {
  host: string;
  /** When the snapshot was taken (ISO time): what a container's start time is measured against. */
  takenAt: string;
  /**
   * Whether a container is in a restart loop, as of the snapshot (runtime.ts, restartLoopOf): asked of the joins, so
   * that a subject depends on the answer, not on the time (src/facts/incremental-subjects.ts).
   */
  restartLoopOf(c: Container): boolean | null;
  ledgerPath: string;
  filesByPath: ReadonlyMap<string, FileRecord>;
  /** Why the ledger's facts are unknown (it was not read), or null. */
  ledgerUnread: string | null;
  /** The engine id of the container the scanner ran in (snapshot host.scannerContainer), or null. */
  scannerContainer: string | null;
  /** Why the engine's facts are unknown, or null. */
  engineUnread: string | null;
  /** Why a container not listed may still be there (not every container was listed and inspected), or null. */
  containersIncomplete: string | null;
  /** Valid entries of a type claiming any of the targets, in ledger order, each once. */
  claimsOf(type: string, ...targets: string[]): readonly LedgerRecord[];
  /** Ids of the other valid entries claiming what a valid entry claims. */
  coClaimants(record: LedgerRecord): string[];
  /** Ids of valid entries naming a path among their sources, in ledger order. */
  referencedBy(path: string): string[];
  /** Ledger ids a target was claimed by and moved away from (history). */
  formerlyOf(type: string, target: string): FormerClaim[];
  /** Targets a ledger id had before (history). */
  formerTargetsOf(id: string): readonly FormerTarget[];
  /** Line of the first valid entry of an id: where a container claimed (or once claimed) by it is located. */
  lineOfId(id: string): number | undefined;
  /** The `module` of the first valid entry of an id (a subject's resource), or null: none, or no such entry. */
  moduleOfId(id: string | null): string | null;
  /** Names of the containers bind-mounting a path, in container order. */
  mountedBy(path: string): string[];
  /**
   * The first container whose name or id is the target, as a ledger entry, a volume or a listener tells of it (narrow:
   * what else of a container changes leaves their subjects as they are).
   */
  containerNamed(target: string): NamedContainer | undefined;
  managedRootOf(path: string): string | null;
  /** Keys an env file named in an earlier snapshot of this host, under any of the readings given (env-readings.ts). */
  composedBefore(path: string, readings: readonly ReadingName[]): ReadonlySet<string>;
  /** The scan's settings the facts depend on (label keys, env file syntax). */
  config: ScanConfig;
  /** Env keys the engine writes into a container by itself (src/engine/engine-env.ts), by the engine kind. */
  engineAdded: ReadonlySet<string>;
  /** What the snapshot's images say of a container's image (snapshot@2). */
  imageFactsOf(c: Container): ContainerImageFacts;
  /** What the daemon enforces for every container; null when not all of it was read. */
  daemonSecurity: ContainerData['daemon_security'] | null;
  /** Whether the engine has a network (by name or id) or volume (by name); null when its list was not read. */
  objectPresent(type: 'network' | 'volume', target: string): boolean | null;
  /** Why a list of networks or volumes the engine should have given was not read, or null. */
  objectsUnread(type: 'network' | 'volume'): string | null;
}

/** A container as what names it sees it. */
export interface NamedContainer {
  id: string;
  name: string;
  status: string;
  running: boolean;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** What could not be read: each subject lists the facts that came from it as unknown. */
function unread(snapshot: Snapshot): Pick<Joins, 'ledgerUnread' | 'engineUnread' | 'containersIncomplete'> {
  const ledgerUnread = snapshot.ledger.available ? null : `the ledger ${snapshot.ledger.path} was not read`;
  const engineUnread = snapshot.docker === null ? 'the Docker engine was not read' : null;
  const dockerProblems = snapshot.problems.filter((p) => p.source === 'docker');
  // A container not listed is gone only when every container was listed and inspected.
  const containersIncomplete =
    engineUnread ??
    (dockerProblems.length > 0
      ? `not every container was read (${dockerProblems.map((p) => p.subject ?? p.message).join(', ')})`
      : null);
  return { ledgerUnread, engineUnread, containersIncomplete };
}

/**
 * Speed: every join below is a map built once per snapshot. Each was a scan of the whole ledger,
 * container list or history per subject: quadratic in the size of the host (BENCHMARKS.md, evaluate,
 * measures up to 50,000 containers). `kept`: the parts kept from the snapshot before (serve's reads,
 * kept-parts.ts: a part made from the same inputs is the same object); a new one makes them all.
 */
export function joinsOf(snapshot: Snapshot, history: HistoryInput, kept: KeptParts = new KeptParts()): Joins {
  const lookups = lookupsOf(snapshot, kept);
  return {
    host: snapshot.host.hostname,
    takenAt: snapshot.takenAt,
    restartLoopOf: restartLoopJoin(snapshot, kept),
    config: snapshot.config,
    ledgerPath: snapshot.ledger.path,
    scannerContainer: snapshot.host.scannerContainer ?? null,
    filesByPath: lookups.filesByPath,
    engineAdded: kept.fromValue('engineAdded', engineAddedKeys(snapshot.docker?.kind), (keys) => keys),
    ...unread(snapshot),
    ...kept.fromSame('ledger', [snapshot.ledger.entries], () => ledgerJoins(snapshot.ledger.entries)),
    ...historyJoins(snapshot, history, lookups, kept),
    ...containerJoins(snapshot, lookups, kept),
    ...runtimeJoins(snapshot, kept),
    ...objectJoins(snapshot, lookups, kept),
  };
}

/**
 * Whether a container is in a restart loop as of the snapshot's time. Kept while the containers are the same values and
 * each one's answer is the same at this time as at the last (most reads: nothing restarting), so that asking again is
 * not needed; its answers are its own time's.
 */
function restartLoopJoin(snapshot: Snapshot, kept: KeptParts): Joins['restartLoopOf'] {
  const { containers, takenAt } = snapshot;
  const answers = containers.map((c) => restartLoopOf(c, takenAt));
  return kept.fromValue('restartLoopOf', { containers, answers }, () => (c: Container) => restartLoopOf(c, takenAt));
}

function runtimeJoins(snapshot: Snapshot, kept: KeptParts): Pick<Joins, 'imageFactsOf' | 'daemonSecurity'> {
  return {
    imageFactsOf: kept.fromValue('images', snapshot.images, (images) => {
      const byId = new Map(images.available ? images.images.map((i) => [normalImageId(i.id), i]) : []);
      return (c: Container) => imageFactsOf(c, images, byId);
    }),
    daemonSecurity: kept.fromValue('daemonSecurity', daemonSecurityOf(snapshot), (security) => security),
  };
}

/**
 * Why a list the engine should have given (null: not read) is unknown: its own problem, else the engine's (an engine
 * not reached, or whose container list failed, is asked for no list: src/collect/docker.ts). Never none: a null list
 * with no problem of its own is still unknown, not empty.
 */
export const objectsUnreadReason = (snapshot: Snapshot, source: 'networks' | 'volumes'): string =>
  snapshot.problems.find((p) => p.source === source)?.message ??
  snapshot.problems.find((p) => p.source === 'docker')?.message ??
  `the engine's ${source} were not read`;

function objectJoins(
  snapshot: Snapshot,
  lookups: SnapshotLookups,
  kept: KeptParts,
): Pick<Joins, 'objectPresent' | 'objectsUnread'> {
  // A list not read (null) leaves each entry's presence unknown, whichever problem says why.
  const unreadOf = (source: 'networks' | 'volumes'): string | null =>
    snapshot[source] === null ? objectsUnreadReason(snapshot, source) : null;
  const from = {
    names: { network: lookups.networkNames, volume: lookups.volumeNames },
    unread: { network: unreadOf('networks'), volume: unreadOf('volumes') },
  };
  return kept.fromValue('objects', from, ({ names, unread }) => ({
    objectPresent: (type, target) => names[type]?.has(target) ?? null,
    objectsUnread: (type) => (names[type] === null ? unread[type] : null),
  }));
}

type LedgerJoins = Pick<Joins, 'claimsOf' | 'coClaimants' | 'referencedBy' | 'lineOfId' | 'moduleOfId'>;

function ledgerJoins(entries: readonly LedgerRecord[]): LedgerJoins {
  const valid = entries.filter((r) => r.valid && r.entry.id !== undefined && r.entry.target !== undefined);
  /** valid entries by type, then target, in ledger order. */
  const byTypeTarget = new Map<string | undefined, Map<string, LedgerRecord[]>>();
  const referencedBy = new Map<string, string[]>();
  const lineOfId = new Map<string, number>();
  const moduleOfId = new Map<string, string | null>();
  for (const r of valid) {
    let byTarget = byTypeTarget.get(r.entry.type);
    if (!byTarget) byTypeTarget.set(r.entry.type, (byTarget = new Map<string, LedgerRecord[]>()));
    push(byTarget, r.entry.target!, r);
    const sources = r.entry.sources;
    // Speed: a set only where there are two sources or more to tell apart (most entries have one or none).
    if (sources !== undefined)
      for (const source of sources.length < 2 ? sources : new Set(sources)) push(referencedBy, source, r.entry.id!);
    if (!lineOfId.has(r.entry.id!)) {
      lineOfId.set(r.entry.id!, r.line);
      moduleOfId.set(r.entry.id!, r.entry.module ?? null);
    }
  }
  /** Each valid entry's position in the ledger, made the first time claims of two targets are merged (rare). */
  let positions: Map<LedgerRecord, number> | undefined;
  const positionOf = (r: LedgerRecord): number => (positions ??= new Map(valid.map((v, at) => [v, at]))).get(r)!;
  // Speed: the lists are the joins' own (read-only to callers), not a copy per question.
  const claimsOf = (type: string, ...targets: string[]): readonly LedgerRecord[] => {
    const byTarget = byTypeTarget.get(type);
    if (!byTarget) return NONE;
    if (targets.length === 1) return byTarget.get(targets[0]!) ?? NONE;
    // Speed: a container by name and id: most have no claim, or claims by one of them only.
    if (targets.length === 2) {
      const a = byTarget.get(targets[0]!);
      const b = targets[1] === targets[0] ? undefined : byTarget.get(targets[1]!);
      if (!b) return a ?? NONE;
      if (!a) return b;
    }
    const lists = [...new Set(targets)].map((t) => byTarget.get(t) ?? NONE).filter((l) => l.length > 0);
    if (lists.length === 0) return NONE;
    if (lists.length === 1) return lists[0]!;
    return [...new Set(lists.flat())].sort((a, b) => positionOf(a) - positionOf(b));
  };
  return {
    claimsOf,
    coClaimants: (r) => {
      if (!r.valid || r.entry.type === undefined || r.entry.target === undefined) return NONE;
      const all = byTypeTarget.get(r.entry.type)?.get(r.entry.target);
      // Speed: most entries are their target's only claimant.
      return all === undefined || all.length < 2 ? NONE : all.filter((o) => o !== r).map((o) => o.entry.id!);
    },
    referencedBy: (path) => referencedBy.get(path) ?? NONE,
    lineOfId: (id) => lineOfId.get(id),
    moduleOfId: (id) => (id === null ? null : (moduleOfId.get(id) ?? null)),
  };
}

function historyJoins(
  snapshot: Snapshot,
  history: HistoryInput,
  lookups: SnapshotLookups,
  kept: KeptParts,
): Pick<Joins, 'formerlyOf' | 'formerTargetsOf' | 'composedBefore'> {
  return {
    ...kept.fromValue('formerTargets', formerTargets(snapshot, history, lookups), formerJoins),
    composedBefore: kept.fromSame('composedBefore', [history, snapshot.host.hostname], () =>
      composedBeforeOf(snapshot.host.hostname, history),
    ),
  };
}

function formerJoins(targets: readonly FormerTarget[]): Pick<Joins, 'formerlyOf' | 'formerTargetsOf'> {
  const formerByTypeTarget = new Map<string, Map<string, FormerTarget[]>>();
  const formerById = new Map<string, FormerTarget[]>();
  for (const f of targets) {
    let byTarget = formerByTypeTarget.get(f.type);
    if (!byTarget) formerByTypeTarget.set(f.type, (byTarget = new Map<string, FormerTarget[]>()));
    push(byTarget, f.target, f);
    push(formerById, f.id, f);
  }
  return {
    formerlyOf: (type, target) =>
      orNone(
        (formerByTypeTarget.get(type)?.get(target) ?? NONE).map((f) => ({
          id: f.id,
          current_target: f.current_target,
          changed_at: f.changed_at,
          last_seen: f.last_seen,
        })),
      ),
    formerTargetsOf: (id) => formerById.get(id) ?? NONE,
  };
}

function composedBeforeOf(hostname: string, history: HistoryInput): Joins['composedBefore'] {
  // Each env file as earlier snapshots of this host recorded it: a key one of them named is evidence
  // that a key the container holds came from its composed file, once the file no longer names it.
  // (The history's index shares one record among the snapshots that read a file alike, and one list among the
  // snapshots whose env files all read alike: each counted once.)
  const earlierFiles = new Map<string, Set<PastEnvFile>>();
  const listsMet = new Set<readonly PastEnvFile[]>();
  for (const earlier of pastOfAll(history)) {
    if (earlier.hostname !== hostname || listsMet.has(earlier.envFiles)) continue;
    listsMet.add(earlier.envFiles);
    for (const f of earlier.envFiles) {
      let records = earlierFiles.get(f.path);
      if (!records) earlierFiles.set(f.path, (records = new Set()));
      records.add(f);
    }
  }
  return (path: string, names: readonly ReadingName[]): ReadonlySet<string> => {
    const keys = new Set<string>();
    for (const f of earlierFiles.get(path) ?? []) {
      // A snapshot from before the literal reading was kept: its (Compose) keys stand for every reading.
      const chosen = f.composeOnly ? [f.compose] : names.map((n) => f[n]);
      for (const named of chosen) for (const k of named ?? []) keys.add(k);
    }
    return keys;
  };
}

/** The names of the containers bind-mounting each path, in container order. */
function mountedByOf(containers: readonly Container[]): Map<string, string[]> {
  const mountedBy = new Map<string, string[]>();
  for (const c of containers)
    for (const source of new Set(c.mounts.filter((m) => m.type === 'bind').map((m) => m.source)))
      push(mountedBy, source, c.name);
  return mountedBy;
}

function containerJoins(
  snapshot: Snapshot,
  lookups: SnapshotLookups,
  kept: KeptParts,
): Pick<Joins, 'mountedBy' | 'containerNamed' | 'managedRootOf'> {
  const { containers } = snapshot;
  // Each kept while the containers are the very same records; made again, kept while what it is made of is the same.
  return {
    mountedBy: kept.fromSame('mountedBy.containers', containers, () =>
      kept.fromValue('mountedBy', mountedByOf(containers), (byPath) => (path: string) => byPath.get(path) ?? NONE),
    ),
    containerNamed: kept.fromSame('containerNamed.containers', containers, () =>
      kept.fromValue(
        'containerNamed',
        containers.map(
          (c): NamedContainer => ({ id: c.id, name: c.name, status: c.state.status, running: c.state.running }),
        ),
        (named) => containerNamedIn(named),
      ),
    ),
    managedRootOf: kept.fromValue('managedRoots', snapshot.config.managedRoots, (roots) => {
      const prefixed = roots.map((root) => ({ root, prefix: root.endsWith('/') ? root : `${root}/` }));
      return (path: string) =>
        prefixed.find(({ root, prefix }) => path === root || path.startsWith(prefix))?.root ?? null;
    }),
  };
}
