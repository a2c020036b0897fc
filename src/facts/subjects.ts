import type { SubjectSetName } from '../policy/types.js';
import type { SafeValue } from '../secret/value.js';
import type { Container, FileRecord, LedgerRecord, Problem, Snapshot } from '../snapshot/types.js';
import { compareText } from '../compare.js';
import { formerTargets, type FormerTarget } from './history.js';

export interface PhysicalLocation {
  path: string;
  line?: number;
}

export interface LogicalLocation {
  kind: 'container' | 'ledger-entry' | 'host';
  name: string;
  fullyQualifiedName: string;
}

export interface SubjectLocations {
  physical: PhysicalLocation[];
  logical: LogicalLocation[];
}

/**
 * A fact of a subject whose source was not read: the field (a dotted path into the subject's data,
 * the whole of what lies under it) and why. A rule that reads it is not checked on the subject.
 */
export interface UnknownFact {
  field: string;
  source: Problem['source'];
  reason: string;
}

/** One thing a rule runs over: the data rules see, and how a finding about it is named and located. */
export interface Subject {
  set: SubjectSetName;
  /** What a finding is about: a container's name, a file's path, a ledger entry's id, the host. */
  about: { kind: 'container' | 'file' | 'ledger-entry' | 'host'; id: string };
  /** Prefix of the finding's discriminator when one subject of this set is one part of a thing (a mount, a source). */
  part: string | null;
  data: Record<string, unknown>;
  /** The facts of `data` that are unknown (their source was not read); none when absent. */
  unknown?: UnknownFact[];
  locate(item: unknown): SubjectLocations;
  /**
   * The mesh resource (ledger id) the subject belongs to, or null: what ties findings of one root cause
   * together (a renamed container is both unclaimed and stale: one resource).
   */
  resource: string | null;
}

const unknownFacts = (source: Problem['source'], reason: string, fields: readonly string[]): UnknownFact[] => fields.map((field) => ({ field, source, reason }));

/** Facts of a file that come from reading it. */
const FILE_READ_FIELDS = ['exists', 'file_kind', 'size', 'mode', 'uid', 'gid', 'mtime', 'inode', 'sha256', 'link_target', 'is_env', 'env'] as const;

/**
 * The facts of a file that were not read, and why (null: all were). A file read in part (too large
 * to parse, digested) keeps what was read: its kind, size, digest.
 */
function fileUnknown(file: FileRecord | undefined, path: string): { fields: string[]; reason: string } | null {
  if (!file) return { fields: [...FILE_READ_FIELDS], reason: `${path} was not read` };
  if (file.kind === 'unknown') return { fields: [...FILE_READ_FIELDS], reason: `${path} not read${file.error !== undefined ? `: ${file.error}` : ''}` };
  if (file.error === undefined || file.kind === 'missing') return null;
  const has: Record<(typeof FILE_READ_FIELDS)[number], boolean> = {
    exists: true,
    file_kind: true,
    size: file.size !== undefined,
    mode: file.mode !== undefined,
    uid: file.uid !== undefined,
    gid: file.gid !== undefined,
    mtime: file.mtime !== undefined,
    inode: file.inode !== undefined,
    sha256: file.kind !== 'file' || file.sha256 !== undefined,
    link_target: file.kind !== 'symlink' || file.linkTarget !== undefined,
    // An env file not parsed: neither its keys nor whether it is one are known.
    is_env: file.env !== undefined,
    env: file.env !== undefined,
  };
  const fields = FILE_READ_FIELDS.filter((f) => !has[f]);
  return fields.length === 0 ? null : { fields, reason: `${path} not read: ${file.error}` };
}

export type SubjectSets = Record<SubjectSetName, Subject[]>;

/**
 * Keys an engine puts into a container's Config.Env itself, whatever its image and files say (Podman
 * adds `container`, `HOME`, `HOSTNAME`, `TERM`): that the image does not set one is no evidence that a
 * composed file did. An earlier snapshot of the file naming it still is.
 */
const ENGINE_SET_KEYS = new Set(['container', 'HOME', 'HOSTNAME', 'TERM']);

const WILDCARD_ADDRESSES = new Set(['', '0.0.0.0', '::', '[::]']);

/** How far a listening address reaches: every interface, one address, or this host only. */
export type Reach = 'all-interfaces' | 'address' | 'loopback';
/**
 * What a container exposes, its widest reach: `none` when nothing listens beyond the container, and
 * `unknown` when it is on the host network and its sockets could not be read (then it may be exposed).
 */
export type Exposure = Reach | 'none' | 'unknown';

export function reachOf(address: string): Reach {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (WILDCARD_ADDRESSES.has(a)) return 'all-interfaces';
  if (a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.') || a === 'localhost') return 'loopback';
  return 'address';
}

const REACH_ORDER: readonly Reach[] = ['all-interfaces', 'address', 'loopback'];

const containerLogical = (host: string, name: string): LogicalLocation => ({
  kind: 'container',
  name,
  fullyQualifiedName: `${host}/containers/${name}`,
});

/** One env map per file, shared by every subject that shows it (rules never write to their data). */
const envMaps = new WeakMap<FileRecord, Record<string, SafeValue>>();
function envMap(file: FileRecord | undefined): Record<string, SafeValue> | null {
  if (!file?.env) return null;
  let map = envMaps.get(file);
  if (!map) {
    map = {};
    for (const e of file.env) map[e.key] = e.value; // later lines win, as with `docker --env-file`
    envMaps.set(file, map);
  }
  return map;
}

function envLine(file: FileRecord | undefined, key: unknown): number | undefined {
  if (typeof key !== 'string' || !file?.env) return undefined;
  return file.env.filter((e) => e.key === key).at(-1)?.line;
}

function splitList(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

const endpoint = (address: string, port: number, protocol: string): string =>
  `${address.includes(':') && !address.startsWith('[') ? `[${address}]` : address || '0.0.0.0'}:${port}/${protocol}`;

function fileFacts(file: FileRecord | undefined, withEnv = true) {
  if (!file) return { known: false, exists: null, file_kind: null, sha256: null, inode: null, is_env: false, env: withEnv ? null : undefined };
  return {
    known: true,
    exists: file.kind !== 'missing',
    file_kind: file.kind,
    sha256: file.sha256 ?? null,
    inode: file.inode ?? null,
    is_env: file.env !== undefined,
    env: withEnv ? envMap(file) : undefined,
    error: file.error ?? null,
  };
}

/** Builds every subject set (ARCHITECTURE.md, `src/facts/`) from a snapshot and the earlier snapshots of its host (pure). */
export function buildSubjects(snapshot: Snapshot, history: readonly Snapshot[] = []): SubjectSets {
  const host = snapshot.host.hostname;
  const labels = snapshot.config.labels;
  const ledgerPath = snapshot.ledger.path;
  const valid = snapshot.ledger.entries.filter((r) => r.valid && r.entry.id !== undefined && r.entry.target !== undefined);
  const filesByPath = new Map(snapshot.files.map((f) => [f.path, f]));
  const former = formerTargets(snapshot, history);
  // What was not read: each subject lists the facts that came from it as unknown.
  const ledgerUnread = snapshot.ledger.available ? null : `the ledger ${ledgerPath} was not read`;
  const engineUnread = snapshot.docker === null ? 'the Docker engine was not read' : null;
  // A container not listed is gone only when every container was listed and inspected.
  const containersIncomplete =
    engineUnread ?? (snapshot.problems.some((p) => p.source === 'docker') ? `not every container was read (${snapshot.problems.filter((p) => p.source === 'docker').map((p) => p.subject ?? p.message).join(', ')})` : null);

  // Indexes for the joins below (each was a scan of the whole ledger, container list or history per subject).
  const push = <K, V>(map: Map<K, V[]>, key: K, value: V) => {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  };
  /** valid entries by type, then target, in ledger order; with each entry's position in `valid`. */
  const validByTypeTarget = new Map<string | undefined, Map<string, { r: LedgerRecord; at: number }[]>>();
  /** ids of valid entries naming a path among their sources, in ledger order (once per entry). */
  const referencedBy = new Map<string, string[]>();
  valid.forEach((r, at) => {
    let byTarget = validByTypeTarget.get(r.entry.type);
    if (!byTarget) validByTypeTarget.set(r.entry.type, (byTarget = new Map<string, { r: LedgerRecord; at: number }[]>()));
    push(byTarget, r.entry.target!, { r, at });
    for (const source of new Set(r.entry.sources ?? [])) push(referencedBy, source, r.entry.id!);
  });
  const claimsOf = (type: string, ...targets: string[]): LedgerRecord[] => {
    const byTarget = validByTypeTarget.get(type);
    if (!byTarget) return [];
    if (targets.length === 1) return byTarget.get(targets[0]!)?.map((x) => x.r) ?? [];
    // A container by name and id: most have no claim, or claims by one of them only.
    if (targets.length === 2) {
      const a = byTarget.get(targets[0]!);
      const b = targets[1] === targets[0] ? undefined : byTarget.get(targets[1]!);
      if (!b) return a?.map((x) => x.r) ?? [];
      if (!a) return b.map((x) => x.r);
    }
    const lists = [...new Set(targets)].map((t) => byTarget.get(t) ?? []).filter((l) => l.length > 0);
    if (lists.length === 0) return [];
    if (lists.length === 1) return lists[0]!.map((x) => x.r);
    const seen = new Set<LedgerRecord>();
    return lists
      .flat()
      .sort((a, b) => a.at - b.at)
      .filter((x) => (seen.has(x.r) ? false : (seen.add(x.r), true)))
      .map((x) => x.r);
  };
  const formerByTypeTarget = new Map<string, Map<string, FormerTarget[]>>();
  const formerById = new Map<string, FormerTarget[]>();
  for (const f of former) {
    let byTarget = formerByTypeTarget.get(f.type);
    if (!byTarget) formerByTypeTarget.set(f.type, (byTarget = new Map<string, FormerTarget[]>()));
    push(byTarget, f.target, f);
    push(formerById, f.id, f);
  }
  /** Line of the first valid entry of each id: where a container claimed (or once claimed) by it is located. */
  const lineOfId = new Map<string, number>();
  for (const r of valid) if (!lineOfId.has(r.entry.id!)) lineOfId.set(r.entry.id!, r.line);
  const formerlyOf = (type: string, target: string) =>
    (formerByTypeTarget.get(type)?.get(target) ?? []).map((f: FormerTarget) => ({ id: f.id, current_target: f.current_target, changed_at: f.changed_at, last_seen: f.last_seen }));
  /** containers by name and by id: the position of the first one with it. */
  const containerByName = new Map<string, number>();
  const containerById = new Map<string, number>();
  /** names of the containers bind-mounting a path, in container order (once per container). */
  const mountedBy = new Map<string, string[]>();
  snapshot.containers.forEach((c, at) => {
    if (!containerByName.has(c.name)) containerByName.set(c.name, at);
    if (!containerById.has(c.id)) containerById.set(c.id, at);
    for (const source of new Set(c.mounts.filter((m) => m.type === 'bind').map((m) => m.source))) push(mountedBy, source, c.name);
  });
  const containerNamed = (target: string): Container | undefined => {
    const a = containerByName.get(target);
    const b = containerById.get(target);
    const at = a === undefined ? b : b === undefined ? a : Math.min(a, b);
    return at === undefined ? undefined : snapshot.containers[at];
  };
  const managedRoots = snapshot.config.managedRoots.map((root) => ({ root, prefix: root.endsWith('/') ? root : `${root}/` }));
  const managedRootOf = (path: string): string | null =>
    managedRoots.find(({ root, prefix }) => path === root || path.startsWith(prefix))?.root ?? null;

  // containers
  const containerData = new Map<Container, Record<string, unknown>>();
  const containerClaims = new Map<Container, LedgerRecord[]>();
  const containerResource = new Map<Container, string | null>();
  const containers: Subject[] = snapshot.containers.map((c) => {
    const claims = claimsOf('container', c.name, c.id);
    containerClaims.set(c, claims);
    const hostNetwork = c.networkMode === 'host';
    const listening = c.proc.available ? c.proc.listening : null;
    const published = c.ports.filter((p) => p.hostPort > 0);
    // Every endpoint reachable from outside the container, by how far it reaches.
    const reachable = [
      ...published.map((p) => ({ reach: reachOf(p.hostIp), at: endpoint(p.hostIp, p.hostPort, p.protocol) })),
      ...(hostNetwork && listening ? listening.map((l) => ({ reach: reachOf(l.address), at: endpoint(l.address, l.port, l.protocol) })) : []),
    ];
    const endpointsOf = (reach: Reach) => [...new Set(reachable.filter((r) => r.reach === reach).map((r) => r.at))];
    const endpoints = { all_interfaces: endpointsOf('all-interfaces'), address: endpointsOf('address'), loopback: endpointsOf('loopback') };
    const exposure: Exposure =
      hostNetwork && listening === null
        ? 'unknown'
        : REACH_ORDER.find((r) => reachable.some((x) => x.reach === r)) ?? 'none';
    const openPorts = [...new Set([...published.map((p) => p.hostPort), ...(hostNetwork && listening ? listening.map((l) => l.port) : [])])].sort((a, b) => a - b);
    const mesh = {
      module: c.labels[labels.module] ?? null,
      resource: c.labels[labels.resource] ?? null,
      sources: splitList(c.labels[labels.sources]),
      source_digests: splitList(c.labels[labels.sourceDigests]),
    };
    const data = {
      kind: 'container',
      id: c.name,
      host,
      name: c.name,
      container_id: c.id.slice(0, 12),
      image: c.image,
      status: c.state.status,
      running: c.state.running,
      network_mode: c.networkMode,
      host_network: hostNetwork,
      labels: c.labels,
      mesh,
      mesh_labelled: Object.values(labels).some((key: string) => Object.hasOwn(c.labels, key)),
      claimed_by: claims.map((r) => r.entry.id!),
      claimed: claims.length > 0,
      origins: [...new Set(claims.map((r) => r.entry.origin ?? 'declared'))],
      holds: [...new Set(claims.flatMap((r) => r.entry.holds ?? []))].sort((a, b) => a - b),
      env: c.env,
      ports: c.ports,
      published_ports: published.map((p) => p.hostPort),
      listening,
      open_ports: openPorts,
      // Reachable from beyond this host (or maybe: host network, sockets not read); loopback is not.
      exposed: exposure === 'all-interfaces' || exposure === 'address' || exposure === 'unknown',
      exposure,
      exposed_endpoints: [...endpoints.all_interfaces, ...endpoints.address],
      endpoints,
      proc_available: c.proc.available,
      proc_reason: c.proc.available ? null : c.proc.reason,
      formerly_claimed_by: formerlyOf('container', c.name),
    };
    containerData.set(c, data);
    // Located at the ledger entries that claim it, else at those it was once the target of (097).
    const formerIds = (data.formerly_claimed_by as { id: string }[]).map((f) => f.id);
    const entryIds = claims.length > 0 ? claims.map((r) => r.entry.id!) : formerIds;
    const physical = [...new Set(entryIds)].flatMap((id) => (lineOfId.has(id) ? [{ path: ledgerPath, line: lineOfId.get(id)! }] : []));
    const resource = mesh.resource ?? claims[0]?.entry.id ?? formerIds[0] ?? null;
    containerResource.set(c, resource);
    const unknown = [
      ...(ledgerUnread ? unknownFacts('ledger', ledgerUnread, ['claimed_by', 'claimed', 'origins', 'holds', 'formerly_claimed_by']) : []),
      // Without /proc a host-network container's sockets are not known (published ports are, from the engine).
      ...(c.proc.available ? [] : unknownFacts('proc', `/proc of ${c.name} not read: ${c.proc.reason}`, hostNetwork ? ['listening', 'open_ports', 'exposed_endpoints'] : ['listening'])),
    ];
    return {
      set: 'containers',
      about: { kind: 'container', id: c.name },
      part: null,
      data,
      ...(unknown.length > 0 ? { unknown } : {}),
      locate: () => ({ physical, logical: [containerLogical(host, c.name)] }),
      resource,
    };
  });

  // files: every file the snapshot holds
  const files: Subject[] = snapshot.files.map((f) => {
    const claims = claimsOf('file', f.path);
    const data = {
      kind: 'file',
      id: f.path,
      host,
      path: f.path,
      exists: f.kind !== 'missing',
      file_kind: f.kind,
      size: f.size ?? null,
      mode: f.mode ?? null,
      uid: f.uid ?? null,
      gid: f.gid ?? null,
      mtime: f.mtime ?? null,
      inode: f.inode ?? null,
      sha256: f.sha256 ?? null,
      link_target: f.linkTarget ?? null,
      error: f.error ?? null,
      is_env: f.env !== undefined,
      env: envMap(f),
      managed_root: managedRootOf(f.path),
      claimed_by: claims.map((r) => r.entry.id!),
      claimed: claims.length > 0,
      referenced_by: referencedBy.get(f.path) ?? [],
      mounted_by: mountedBy.get(f.path) ?? [],
      formerly_claimed_by: formerlyOf('file', f.path),
    };
    const unreadable = fileUnknown(f, f.path);
    const unknown = [
      ...(ledgerUnread ? unknownFacts('ledger', ledgerUnread, ['claimed_by', 'claimed', 'referenced_by', 'formerly_claimed_by']) : []),
      ...(containersIncomplete ? unknownFacts('docker', containersIncomplete, ['mounted_by']) : []),
      ...(unreadable ? unknownFacts('files', unreadable.reason, unreadable.fields) : []),
    ];
    return {
      set: 'files',
      about: { kind: 'file', id: f.path },
      part: null,
      data,
      ...(unknown.length > 0 ? { unknown } : {}),
      locate: () => ({ physical: [{ path: f.path }], logical: [] }),
      resource: claims[0]?.entry.id ?? (data.formerly_claimed_by as { id: string }[])[0]?.id ?? null,
    };
  });

  // ledger entries, valid or not
  const ledger: Subject[] = snapshot.ledger.entries.map((r) => {
    const e = r.entry;
    const id = e.id ?? `line ${r.line}`;
    const type = e.type ?? null;
    const target = e.target ?? null;
    const targetContainer = type === 'container' && target !== null ? containerNamed(target) : undefined;
    const targetFile = type === 'file' && target !== null ? filesByPath.get(target) : undefined;
    const present =
      type === 'container' ? targetContainer !== undefined : type === 'file' ? (targetFile ? targetFile.kind !== 'missing' : null) : null;
    const data = {
      kind: 'ledger-entry',
      id,
      host,
      adopted: snapshot.ledger.adopted ?? false,
      line: r.line,
      valid: r.valid,
      errors: r.errors,
      entry_id: e.id ?? null,
      type,
      target,
      origin: e.origin ?? null,
      module: e.module ?? null,
      holds: e.holds ?? [],
      digest: e.digest ?? null,
      sources: e.sources ?? [],
      applied_at: e.applied_at ?? null,
      extra: e.extra ?? {},
      present,
      target_container: targetContainer ? { name: targetContainer.name, status: targetContainer.state.status, running: targetContainer.state.running } : null,
      target_file: type === 'file' ? fileFacts(targetFile) : null,
      co_claimants: r.valid && type !== null && target !== null ? (validByTypeTarget.get(type)?.get(target) ?? []).filter((o) => o.r !== r).map((o) => o.r.entry.id!) : [],
      former_targets: (e.id === undefined ? [] : (formerById.get(e.id) ?? [])).map((f) => ({ target: f.target, last_seen: f.last_seen, changed_at: f.changed_at })),
    };
    const fileUnread = type === 'file' && target !== null ? fileUnknown(targetFile, target) : null;
    const unknown = [
      ...(type === 'container' && !targetContainer && containersIncomplete ? unknownFacts('docker', containersIncomplete, ['present', 'target_container']) : []),
      ...(fileUnread
        ? unknownFacts('files', fileUnread.reason, [...(fileUnread.fields.includes('exists') ? ['present'] : []), ...fileUnread.fields.map((f) => `target_file.${f}`)])
        : []),
    ];
    return {
      set: 'ledger',
      about: { kind: 'ledger-entry', id },
      part: null,
      data,
      ...(unknown.length > 0 ? { unknown } : {}),
      locate: () => ({
        physical: [{ path: ledgerPath, line: r.line }, ...(targetFile && targetFile.kind !== 'missing' ? [{ path: targetFile.path }] : [])],
        logical: [{ kind: 'ledger-entry', name: id, fullyQualifiedName: `${host}/ledger/${id}` }],
      }),
      resource: e.id ?? null,
    };
  });

  // Keys each env file named in an earlier snapshot of this host: evidence that a key the container
  // holds came from its composed file, once the file no longer names it.
  const composedBefore = new Map<string, Set<string>>();
  for (const earlier of history) {
    if (earlier.host.hostname !== host) continue;
    for (const f of earlier.files) {
      if (!f.env) continue;
      const keys = composedBefore.get(f.path) ?? new Set<string>();
      for (const e of f.env) keys.add(e.key);
      composedBefore.set(f.path, keys);
    }
  }
  /**
   * Keys the container holds that no env file it was composed from names any more, with the evidence
   * that they came from the file: the image does not set them (or sets another value), or an earlier
   * snapshot's file named them. A key with neither (the image not read, no history) is not listed.
   */
  const droppedKeys = (c: Container, path: string, allPaths: readonly string[]): { keys: string[]; evidence: Record<string, string> } => {
    const file = envMap(filesByPath.get(path));
    if (!file) return { keys: [], evidence: {} };
    const namedElsewhere = new Set(allPaths.filter((p) => p !== path).flatMap((p) => Object.keys(envMap(filesByPath.get(p)) ?? {})));
    const evidence: Record<string, string> = {};
    for (const key of Object.keys(c.env).sort()) {
      if (Object.hasOwn(file, key) || namedElsewhere.has(key)) continue;
      if (c.imageEnv !== undefined && !ENGINE_SET_KEYS.has(key)) {
        const fromImage = Object.hasOwn(c.imageEnv, key) ? c.imageEnv[key] : undefined;
        if (fromImage === undefined) evidence[key] = 'the image does not set it';
        else if (fromImage.digest !== c.env[key]!.digest) evidence[key] = 'the image sets another value';
      } else if (composedBefore.get(path)?.has(key)) {
        evidence[key] = 'an earlier snapshot of the file named it';
      }
    }
    return { keys: Object.keys(evidence), evidence };
  };

  // container_sources: a container paired with each file it was built from (labels and ledger)
  const container_sources: Subject[] = snapshot.containers.flatMap((c) => {
    const data = containerData.get(c)!;
    const mesh = data['mesh'] as { sources: string[]; source_digests: string[] };
    const fromLedger = containerClaims.get(c)!.flatMap((r) => r.entry.sources ?? []);
    const paths = [...new Set([...mesh.sources, ...fromLedger])];
    return paths.map((path): Subject => {
      const file = filesByPath.get(path);
      const index = mesh.sources.indexOf(path);
      const namedBy = [index >= 0 ? 'label' : null, fromLedger.includes(path) ? 'ledger' : null].filter((s) => s !== null);
      const unreadable = fileUnknown(file, path);
      // Keys named by any of the container's env files; one of them not read leaves them unknown.
      const otherUnread = paths.filter((p) => p !== path).map((p) => fileUnknown(filesByPath.get(p), p)).find((u) => u !== null && u.fields.includes('env'));
      const dropped = droppedKeys(c, path, paths);
      const unknown = [
        ...(ledgerUnread ? unknownFacts('ledger', ledgerUnread, ['container.claimed_by', 'named_by']) : []),
        ...(unreadable ? unknownFacts('files', unreadable.reason, unreadable.fields.map((f) => `source.${f}`)) : []),
        ...(unreadable?.fields.includes('env') || otherUnread ? unknownFacts('files', (unreadable ?? otherUnread)!.reason, ['dropped_keys', 'dropped_evidence']) : []),
      ];
      return {
        set: 'container_sources',
        about: { kind: 'container', id: c.name },
        part: path,
        ...(unknown.length > 0 ? { unknown } : {}),
        data: {
          kind: 'container-source',
          id: `${c.name} <- ${path}`,
          host,
          container: {
            name: c.name,
            container_id: data['container_id'],
            running: c.state.running,
            status: c.state.status,
            env: c.env,
            mesh: data['mesh'],
            claimed_by: data['claimed_by'],
          },
          source: { path, ...fileFacts(file) },
          index: index >= 0 ? index : null,
          recorded_digest: index >= 0 ? (mesh.source_digests[index] ?? null) : null,
          named_by: namedBy,
          dropped_keys: dropped.keys,
          dropped_evidence: dropped.evidence,
        },
        locate: (item) => {
          const line = envLine(file, item);
          return {
            physical: file ? [{ path, ...(line !== undefined ? { line } : {}) }] : [],
            logical: [containerLogical(host, c.name)],
          };
        },
        resource: containerResource.get(c) ?? null,
      };
    });
  });

  // mounts: every mount of every container, with what the container really sees of a single-file bind
  const mounts: Subject[] = snapshot.containers.flatMap((c) =>
    c.mounts.map((m): Subject => {
      const hostFile = filesByPath.get(m.source);
      const bound = c.proc.available ? c.proc.boundFiles.find((b) => b.destination === m.destination) : undefined;
      const unreadable = m.type === 'bind' ? fileUnknown(hostFile, m.source) : null;
      const unknown = [
        // What the container sees is read from /proc for single-file binds only.
        ...(c.proc.available || !(m.type === 'bind' && hostFile?.kind === 'file') ? [] : unknownFacts('proc', `/proc of ${c.name} not read: ${c.proc.reason}`, ['seen'])),
        ...(unreadable
          ? unknownFacts('files', unreadable.reason, [...(unreadable.fields.includes('file_kind') ? ['single_file'] : []), ...unreadable.fields.filter((f) => f !== 'env').map((f) => `host_file.${f}`)])
          : []),
      ];
      return {
        set: 'mounts',
        about: { kind: 'container', id: c.name },
        part: m.destination,
        ...(unknown.length > 0 ? { unknown } : {}),
        data: {
          kind: 'mount',
          id: `${c.name}:${m.destination}`,
          host,
          container: { name: c.name, running: c.state.running, status: c.state.status, proc_available: c.proc.available },
          type: m.type,
          source: m.source,
          destination: m.destination,
          rw: m.rw,
          single_file: m.type === 'bind' && (hostFile?.kind === 'file' || bound !== undefined),
          host_file: fileFacts(hostFile, false),
          seen: bound ? { inode: bound.inode, sha256: bound.sha256, error: bound.error ?? null } : null,
        },
        locate: () => ({
          physical: m.type === 'bind' && hostFile ? [{ path: m.source }] : [],
          logical: [containerLogical(host, c.name)],
        }),
        resource: containerResource.get(c) ?? null,
      };
    }),
  );

  const hostSubject: Subject = {
    set: 'host',
    about: { kind: 'host', id: host },
    part: null,
    data: {
      kind: 'host',
      id: host,
      host,
      hostname: host,
      node: snapshot.ledger.node ?? null,
      adopted: snapshot.ledger.adopted ?? false,
      complete: snapshot.problems.length === 0,
      problems: snapshot.problems.length,
      docker_available: snapshot.docker !== null,
      ledger_available: snapshot.ledger.available,
      container_count: snapshot.containers.length,
      file_count: snapshot.files.length,
      ledger_count: snapshot.ledger.entries.length,
    },
    ...(engineUnread || ledgerUnread
      ? {
          unknown: [
            ...(engineUnread ? unknownFacts('docker', engineUnread, ['container_count']) : []),
            ...(ledgerUnread ? unknownFacts('ledger', ledgerUnread, ['ledger_count', 'node', 'adopted']) : []),
          ],
        }
      : {}),
    locate: () => ({ physical: [], logical: [{ kind: 'host', name: host, fullyQualifiedName: host }] }),
    resource: null,
  };

  const byId = (a: Subject, b: Subject) => compareText(String(a.data['id']), String(b.data['id']));
  return {
    containers: containers.sort(byId),
    files: files.sort(byId),
    ledger: ledger.sort((a, b) => (a.data['line'] as number) - (b.data['line'] as number)),
    container_sources: container_sources.sort(byId),
    mounts: mounts.sort(byId),
    host: [hostSubject],
  };
}
