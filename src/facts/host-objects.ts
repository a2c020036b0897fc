import { compareText } from '../text/compare.js';
import { endpointText } from '../text/endpoint.js';
import type {
  Container,
  HostListener,
  LedgerRecord,
  NetworkRecord,
  ServiceExecutable,
  Snapshot,
  VolumeRecord,
} from '../snapshot/types.js';
import { subjectFactory, type Subject, type UnknownFactOf } from '../policy/subject.js';
import type { ListenerData, ListenerOwner, NetworkData, ObjectMeshLabels, VolumeData } from '../policy/subject-data.js';
import { reachOf } from './containers.js';
import { objectsUnreadReason, type Joins } from './joins.js';

/**
 * The `networks`, `volumes` and `listeners` sets: what the mesh can leave on a host besides containers
 * and files (incident 097 for every kind), each with its claims and what was not read.
 */

/** The engine's own networks: never a finding (Podman names its default network `podman`). */
export const DEFAULT_NETWORKS: ReadonlySet<string> = new Set(['bridge', 'host', 'none', 'podman']);

/** Processes that hold a published port for a container: Docker's userland proxy, Podman's and rootless helpers. */
export const PORT_PROXIES: ReadonlySet<string> = new Set([
  'docker-proxy',
  'conmon',
  'rootlessport',
  'rootlesskit',
  'slirp4netns',
  'pasta',
  'pasta.avx2',
]);

const NETWORKS = subjectFactory('networks');
const VOLUMES = subjectFactory('volumes');
const LISTENERS = subjectFactory('listeners');

const ANONYMOUS_LABEL = 'com.docker.volume.anonymous';
const COMPOSE_PROJECT = 'com.docker.compose.project';

const meshOf = (identity: Record<string, string>, joins: Joins): ObjectMeshLabels => ({
  module: identity[joins.config.labels.module] ?? null,
  resource: identity[joins.config.labels.resource] ?? null,
});

const objectLogical = (kind: 'network' | 'volume' | 'listener', host: string, name: string) => ({
  kind,
  name,
  fullyQualifiedName: `${host}/${kind}s/${name}`,
});

/** The resource of a network or volume (its label, else the entry claiming it or that once did), and its module. */
function resourceOf(
  mesh: ObjectMeshLabels,
  claimedBy: readonly string[],
  formerly: readonly { id: string }[],
  joins: Joins,
): { resource: string | null; module: string | null } {
  const resource = mesh.resource ?? claimedBy[0] ?? formerly[0]?.id ?? null;
  return { resource, module: mesh.module ?? joins.moduleOfId(resource) };
}

/** Located at the ledger entries that claim it, else at those that once did. */
function ledgerLines(joins: Joins, ids: readonly string[]) {
  return [...new Set(ids)].flatMap((id) => {
    const line = joins.lineOfId(id);
    return line !== undefined ? [{ path: joins.ledgerPath, line }] : [];
  });
}

/** What stands for a set whose source should have been read and was not: one wholly unknown subject. */
const unreadParts = (kind: string, host: string) => {
  const id = `${kind}s not read`;
  return {
    id,
    data: { kind, id, host },
    locate: () => ({ physical: [], logical: [objectLogical(kind as 'network', host, id)] }),
    resource: null,
    module: null,
  };
};

const problemOf = (snapshot: Snapshot, source: 'networks' | 'volumes' | 'listeners'): string | null =>
  snapshot.problems.find((p) => p.source === source)?.message ?? null;

/** The claims-related facts of a network or volume that are unknown: the ledger's, and the container list's. */
function networkUnknowns(joins: Joins): UnknownFactOf<NetworkData>[] {
  return [
    ...(joins.ledgerUnread
      ? NETWORKS.unknown('ledger', joins.ledgerUnread, ['claimed_by', 'claimed', 'origins', 'formerly_claimed_by'])
      : []),
    ...(joins.containersIncomplete ? NETWORKS.unknown('docker', joins.containersIncomplete, ['containers']) : []),
  ];
}

function volumeUnknowns(joins: Joins): UnknownFactOf<VolumeData>[] {
  return [
    ...(joins.ledgerUnread
      ? VOLUMES.unknown('ledger', joins.ledgerUnread, [
          'claimed_by',
          'claimed',
          'origins',
          'formerly_claimed_by',
          'used_by_claimed',
        ])
      : []),
    ...(joins.containersIncomplete
      ? VOLUMES.unknown('docker', joins.containersIncomplete, ['used_by', 'used_by_claimed'])
      : []),
  ];
}

export function buildNetworks(snapshot: Snapshot, joins: Joins): Subject<NetworkData>[] {
  if (snapshot.networks === undefined || snapshot.networks === null) {
    // Absent: a snapshot made before networks were read. Null: they should have been, and were not.
    const problem = snapshot.networks === null ? objectsUnreadReason(snapshot, 'networks') : null;
    return problem === null
      ? []
      : [
          NETWORKS.subject({
            ...unreadParts('network', joins.host),
            data: unreadParts('network', joins.host).data as NetworkData,
            unknown: NETWORKS.wholly('networks', problem),
          }),
        ];
  }
  const unknown = networkUnknowns(joins);
  return snapshot.networks.map((n: NetworkRecord) => {
    const claims = joins.claimsOf('network', ...(n.id !== '' ? [n.name, n.id] : [n.name]));
    const mesh = meshOf(n.identity, joins);
    const formerly = joins.formerlyOf('network', n.name);
    const claimedBy = claims.map((r) => r.entry.id!);
    const data: NetworkData = {
      kind: 'network',
      id: n.name,
      host: joins.host,
      name: n.name,
      network_id: n.id.slice(0, 12),
      driver: n.driver,
      scope: n.scope,
      internal: n.internal,
      created: n.created,
      labels: n.labels,
      mesh,
      mesh_labelled: mesh.module !== null || mesh.resource !== null,
      compose_project: n.identity[COMPOSE_PROJECT] ?? null,
      default: DEFAULT_NETWORKS.has(n.name),
      containers: n.containers,
      claimed_by: claimedBy,
      claimed: claims.length > 0,
      origins: originsOf(claims),
      formerly_claimed_by: formerly,
    };
    const entryIds = claims.length > 0 ? claimedBy : formerly.map((f) => f.id);
    return NETWORKS.subject({
      id: n.name,
      data,
      unknown,
      locate: () => ({
        physical: ledgerLines(joins, entryIds),
        logical: [objectLogical('network', joins.host, n.name)],
      }),
      ...resourceOf(mesh, claimedBy, formerly, joins),
    });
  });
}

const originsOf = (claims: readonly LedgerRecord[]): string[] => [
  ...new Set(claims.map((r) => r.entry.origin ?? 'declared')),
];

export function buildVolumes(snapshot: Snapshot, joins: Joins): Subject<VolumeData>[] {
  if (snapshot.volumes === undefined || snapshot.volumes === null) {
    const problem = snapshot.volumes === null ? objectsUnreadReason(snapshot, 'volumes') : null;
    return problem === null
      ? []
      : [
          VOLUMES.subject({
            ...unreadParts('volume', joins.host),
            data: unreadParts('volume', joins.host).data as VolumeData,
            unknown: VOLUMES.wholly('volumes', problem),
          }),
        ];
  }
  const unknown = volumeUnknowns(joins);
  const claimedContainer = (name: string): boolean => {
    const c = joins.containerNamed(name);
    return joins.claimsOf('container', name, ...(c ? [c.id] : [])).length > 0;
  };
  return snapshot.volumes.map((v: VolumeRecord) => {
    const claims = joins.claimsOf('volume', v.name);
    const mesh = meshOf(v.identity, joins);
    const formerly = joins.formerlyOf('volume', v.name);
    const claimedBy = claims.map((r) => r.entry.id!);
    const data: VolumeData = {
      kind: 'volume',
      id: v.name,
      host: joins.host,
      name: v.name,
      driver: v.driver,
      scope: v.scope,
      mountpoint: v.mountpoint,
      created: v.created,
      labels: v.labels,
      mesh,
      mesh_labelled: mesh.module !== null || mesh.resource !== null,
      compose_project: v.identity[COMPOSE_PROJECT] ?? null,
      anonymous: /^[0-9a-f]{64}$/.test(v.name) || Object.hasOwn(v.labels, ANONYMOUS_LABEL),
      used_by: v.containers,
      used_by_claimed: v.containers.filter(claimedContainer),
      claimed_by: claimedBy,
      claimed: claims.length > 0,
      origins: originsOf(claims),
      formerly_claimed_by: formerly,
    };
    const entryIds = claims.length > 0 ? claimedBy : formerly.map((f) => f.id);
    return VOLUMES.subject({
      id: v.name,
      data,
      unknown,
      locate: () => ({
        physical: ledgerLines(joins, entryIds),
        logical: [objectLogical('volume', joins.host, v.name)],
      }),
      ...resourceOf(mesh, claimedBy, formerly, joins),
    });
  });
}

const baseProtocol = (p: string): string => p.replace(/6$/, '');

/** A `service` entry's executable path as the scan resolved it on the host (HostListenerView.executables). */
type ExecutableOf = (path: string) => ServiceExecutable | undefined;

/**
 * Whether a `service` entry's target names the process: its comm, its executable's path (as written, or with its
 * symlinks followed on the host: /proc/PID/exe is resolved, `/bin/x` of a merged-/usr host is `/usr/bin/x`), or that
 * path's last part. `unknown` when the path as written does not match and the scan could not resolve it.
 */
function servesAs(
  target: string,
  process: { name: string | null; exe: string | null },
  executableOf: ExecutableOf,
): boolean | 'unknown' {
  if (process.name !== null && target === process.name) return true;
  if (process.exe === null) return false;
  if (target === process.exe || (!target.includes('/') && process.exe.split('/').at(-1) === target)) return true;
  const resolved = target.startsWith('/') ? executableOf(target) : undefined;
  if (resolved?.unread !== undefined) return 'unknown';
  return resolved?.resolved === process.exe;
}

/**
 * The `listeners` set: every socket listening in the host's network namespace (with the process or
 * container holding it), and in each container's own namespace (from its /proc). A socket is claimed
 * when a claimed container owns it (or it is a published port of one), or a `service` entry declares
 * its process and port.
 */
export function buildListeners(snapshot: Snapshot, joins: Joins): Subject<ListenerData>[] {
  const services = snapshot.ledger.entries.filter(
    (r) => r.valid && r.entry.type === 'service' && r.entry.id !== undefined && r.entry.target !== undefined,
  );
  const view = snapshot.hostListeners;
  const executables = new Map((view?.available === true ? (view.executables ?? []) : []).map((x) => [x.path, x]));
  const executableOf: ExecutableOf = (path) => executables.get(path);
  const declaredBy: DeclaredBy = (process, port) => {
    if (process === null) return { ids: [], unresolved: [] };
    const holding = services.filter(
      (r) => r.entry.holds === undefined || r.entry.holds.length === 0 || r.entry.holds.includes(port),
    );
    const serves = holding.map((r) => ({ r, serves: servesAs(r.entry.target!, process, executableOf) }));
    return {
      ids: serves.filter((x) => x.serves === true).map((x) => x.r.entry.id!),
      unresolved: serves.filter((x) => x.serves === 'unknown').map((x) => x.r.entry.target!),
    };
  };
  const containerClaimed = (name: string): boolean => {
    const c = joins.containerNamed(name);
    return joins.claimsOf('container', name, ...(c ? [c.id] : [])).length > 0;
  };
  const subjects: Subject<ListenerData>[] = [];
  if (view !== undefined && !view.available) {
    // Not read, for whatever reason (a read error, or out of reach by the scan's setup: not root, a remote
    // engine, another pid namespace): unknown, never none. Every rule on listeners is then not checked on this
    // stand-in, unless the scope puts every listener out (`listener:*`, src/scope.ts).
    const reason = problemOf(snapshot, 'listeners') ?? view.reason;
    subjects.push(
      LISTENERS.subject({
        ...unreadParts('listener', joins.host),
        data: unreadParts('listener', joins.host).data as ListenerData,
        unknown: LISTENERS.wholly('listeners', reason),
      }),
    );
  }
  if (view?.available) {
    for (const s of view.sockets) subjects.push(hostListener(s, joins, declaredBy, containerClaimed, snapshot));
  }
  // Each container's own namespace (not the host's: those sockets are above, with their holder).
  for (const c of snapshot.containers) {
    if (c.networkMode === 'host') continue;
    if (!c.proc.available) {
      // A running container whose /proc was not read: its sockets are unknown, never none (one that is not running
      // has none). One stand-in with what is known of it (its container, its claim); the socket's own facts unknown.
      if (c.state.running) subjects.push(containerSocketsUnread(c, c.proc.reason, joins, containerClaimed));
      continue;
    }
    for (const l of c.proc.listening) {
      const endpoint = endpointText(l.address, l.port, l.protocol);
      const claimed = containerClaimed(c.name);
      const data: ListenerData = {
        kind: 'listener',
        id: `${c.name}/${endpoint}`,
        host: joins.host,
        namespace: 'container',
        protocol: l.protocol,
        address: l.address,
        port: l.port,
        endpoint,
        reach: reachOf(l.address),
        owner: 'container',
        process: null,
        container: c.name,
        container_claimed: claimed,
        declared_by: [],
        declared: false,
        claimed,
      };
      const unknown = joins.ledgerUnread
        ? LISTENERS.unknown('ledger', joins.ledgerUnread, ['container_claimed', 'declared_by', 'declared', 'claimed'])
        : [];
      subjects.push(listenerSubject(data, unknown, joins));
    }
  }
  return subjects.sort((a, b) => compareText(a.data.id, b.data.id));
}

/** What stands for the sockets of a running container whose /proc was not read (buildListeners). */
function containerSocketsUnread(
  c: Container,
  reason: string,
  joins: Joins,
  containerClaimed: (name: string) => boolean,
): Subject<ListenerData> {
  const claimed = containerClaimed(c.name);
  const data: ListenerData = {
    kind: 'listener',
    id: `${c.name}/sockets not read`,
    host: joins.host,
    namespace: 'container',
    // Placeholders for facts that are unknown (below): no rule decides on them.
    protocol: 'tcp',
    address: '',
    port: 0,
    endpoint: '',
    reach: 'all-interfaces',
    owner: 'container',
    process: null,
    container: c.name,
    container_claimed: claimed,
    declared_by: [],
    declared: false,
    claimed,
  };
  const unknown = [
    ...LISTENERS.unknown('proc', `/proc of ${c.name} not read: ${reason}`, [
      'protocol',
      'address',
      'port',
      'endpoint',
      'reach',
    ]),
    ...(joins.ledgerUnread
      ? LISTENERS.unknown('ledger', joins.ledgerUnread, ['container_claimed', 'declared_by', 'declared', 'claimed'])
      : []),
  ];
  return listenerSubject(data, unknown, joins);
}

/** The service entries declaring a process's socket on a port, and the paths of those not known to (unresolved). */
type DeclaredBy = (
  process: { name: string | null; exe: string | null } | null,
  port: number,
) => { ids: string[]; unresolved: string[] };

/** Why a service entry's executable path was not resolved (HostListenerView.executables). */
function unreadReason(snapshot: Snapshot, path: string): string {
  const view = snapshot.hostListeners;
  return (view?.available === true ? view.executables?.find((x) => x.path === path)?.unread : undefined) ?? 'unknown';
}

/** Who holds a host socket, and the container behind it when a container (or its published port) does. */
function ownerOf(
  s: HostListener,
  joins: Joins,
  snapshot: Snapshot,
): { owner: ListenerOwner; container: string | null } {
  const holder = s.holder;
  // Held by no process: the kernel's, unless a process the scan could not read may hold it (then a
  // process not known: its owner is an unknown fact (hostListener), and premigrate says who it could not name).
  if (holder === null) return { owner: s.holderUnknown === undefined ? 'kernel' : 'process', container: null };
  if (holder.containerId !== null)
    return { owner: 'container', container: joins.containerNamed(holder.containerId)?.name ?? null };
  if (holder.name !== null && PORT_PROXIES.has(holder.name)) {
    const published = snapshot.containers.find((c) =>
      c.ports.some(
        (p) =>
          p.hostPort === s.port &&
          p.protocol === baseProtocol(s.protocol) &&
          (reachOf(p.hostIp) === 'all-interfaces' || p.hostIp === s.address),
      ),
    );
    return { owner: 'published-port', container: published?.name ?? null };
  }
  return { owner: 'process', container: null };
}

function hostListener(
  s: HostListener,
  joins: Joins,
  declaredBy: DeclaredBy,
  containerClaimed: (name: string) => boolean,
  snapshot: Snapshot,
): Subject<ListenerData> {
  const holder = s.holder;
  const process = holder === null ? null : { pid: holder.pid, name: holder.name, exe: holder.exe };
  const { owner, container } = ownerOf(s, joins, snapshot);
  const unknown: UnknownFactOf<ListenerData>[] = [];
  const byContainer = owner === 'container' || owner === 'published-port';
  // A container is named from the engine's list: not read (or not whole), a container's socket has no name.
  if (byContainer && container === null && joins.containersIncomplete !== null)
    unknown.push(
      ...LISTENERS.unknown('docker', joins.containersIncomplete, ['container', 'container_claimed', 'claimed']),
    );
  const claimedContainer = container === null ? null : containerClaimed(container);
  const { ids: declared, unresolved } = declaredBy(process, s.port);
  // Declared by no entry, but an entry's executable path could not be resolved: it may declare it (not a mismatch).
  if (declared.length === 0 && unresolved.length > 0 && claimedContainer !== true)
    unknown.push(
      ...LISTENERS.unknown(
        'listeners',
        `a service entry's executable path ${unresolved[0]!} not resolved: ${unreadReason(snapshot, unresolved[0]!)}`,
        ['declared_by', 'declared', 'claimed'],
      ),
    );
  if (joins.ledgerUnread)
    unknown.push(
      ...LISTENERS.unknown('ledger', joins.ledgerUnread, ['container_claimed', 'declared_by', 'declared', 'claimed']),
    );
  const endpoint = endpointText(s.address, s.port, s.protocol);
  const data: ListenerData = {
    kind: 'listener',
    id: endpoint,
    host: joins.host,
    namespace: 'host',
    protocol: s.protocol,
    address: s.address,
    port: s.port,
    endpoint,
    reach: reachOf(s.address),
    owner,
    process,
    container,
    container_claimed: claimedContainer,
    declared_by: declared,
    declared: declared.length > 0,
    claimed: claimedContainer === true || declared.length > 0,
  };
  // No readable process holds it, and some processes' fds are closed to the scan: one of them may. Who owns
  // it is not known (never "the kernel"), so nothing that turns on its owner is decided.
  if (holder === null && s.holderUnknown !== undefined)
    unknown.push(
      ...LISTENERS.unknown('listeners', `its holder not found: ${s.holderUnknown}`, [
        'owner',
        'process',
        'container',
        'container_claimed',
        'declared_by',
        'declared',
        'claimed',
      ]),
    );
  const seen = new Set<string>();
  return listenerSubject(
    data,
    unknown.filter((u) => (seen.has(u.field) ? false : (seen.add(u.field), true))),
    joins,
  );
}

function listenerSubject(
  data: ListenerData,
  unknown: UnknownFactOf<ListenerData>[],
  joins: Joins,
): Subject<ListenerData> {
  return LISTENERS.subject({
    id: data.id,
    data,
    unknown,
    locate: () => ({
      physical: ledgerLines(joins, data.declared_by),
      logical: [objectLogical('listener', joins.host, data.id)],
    }),
    resource: data.declared_by[0] ?? null,
    module: joins.moduleOfId(data.declared_by[0] ?? null),
  });
}
