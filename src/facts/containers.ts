import type { Container, LabelKeys, LedgerRecord, PublishedPort } from '../snapshot/types.js';
import { normalImageId } from '../snapshot/image-id.js';
import { NOT_IN_V1 } from '../snapshot/migrate.js';
import { securityOf } from './runtime.js';
import type { Joins } from './joins.js';
import {
  buildFacts,
  derivationOrder,
  derive,
  factKinds,
  read,
  SCAN,
  type BaseFacts,
  type DerivedPlaces,
  type FactSource,
  type FactTable,
} from './derived.js';
import {
  subjectFactory,
  type Allowance,
  type LogicalLocation,
  type Subject,
  type UnknownFactOf,
} from '../policy/subject.js';
import type { ContainerData, Endpoints, Exposure, MeshLabels, Reach } from '../policy/subject-data.js';
import { NONE } from './none.js';
import { CONTAINER_RUNTIME } from '../subjects/containers.js';
import { factSourcesOf, factsWriterOf, type ReadFactsOf } from '../subjects/spec.js';

export type { Exposure, Reach } from '../policy/subject-data.js';

const WILDCARD_ADDRESSES = new Set(['', '0.0.0.0', '::', '[::]']);

export function reachOf(address: string): Reach {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (WILDCARD_ADDRESSES.has(a)) return 'all-interfaces';
  if (a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.') || a === 'localhost') return 'loopback';
  return 'address';
}

const REACH_ORDER: readonly Reach[] = ['all-interfaces', 'address', 'loopback'];
const REACH_KEY: Readonly<Record<Reach, keyof Endpoints>> = {
  'all-interfaces': 'all_interfaces',
  address: 'address',
  loopback: 'loopback',
};

export const containerLogical = (host: string, name: string): LogicalLocation => ({
  kind: 'container',
  name,
  fullyQualifiedName: `${host}/containers/${name}`,
});

const endpoint = (address: string, port: number, protocol: string): string =>
  `${address.includes(':') && !address.startsWith('[') ? `[${address}]` : address || '0.0.0.0'}:${port}/${protocol}`;

function splitList(value: string | undefined): string[] {
  return value === undefined
    ? []
    : value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
}

const meshLabelsOf = (of: Record<string, string>, labels: LabelKeys): MeshLabels => ({
  module: of[labels.module] ?? null,
  resource: of[labels.resource] ?? null,
  sources: splitList(of[labels.sources]),
  source_digests: splitList(of[labels.sourceDigests]),
});

/** What a container's derived facts are computed with besides its own facts: the configured label keys. */
interface ContainerContext {
  labels: LabelKeys;
}

const docker = read('docker');
const ledger = read('ledger');
/** A fact of snapshot@2's runtime settings: unknown in a snapshot that did not record them (a migrated @1). */
const runtime = read('snapshot');
const images = read('images');
const derived = derive<ContainerData, ContainerContext>();

const publishedOf = (ports: readonly PublishedPort[]) => ports.filter((p) => p.hostPort > 0);

/**
 * Where each fact of a container comes from (src/facts/derived.ts): the engine, the ledger (and the
 * history joined with it), /proc, or other facts. What a container exposes, its open ports and its
 * endpoints are derived from its published ports and, on the host network only, its sockets: a
 * host-network container whose /proc was not read has them all unknown (issue 24), one that is not
 * on the host network has them known from the engine.
 */
export const CONTAINER_FACTS = {
  kind: docker,
  id: docker,
  host: docker,
  name: docker,
  container_id: docker,
  image: docker,
  status: docker,
  running: docker,
  network_mode: docker,
  host_network: derived(['network_mode'], ({ network_mode }) => network_mode === 'host'),
  labels: docker,
  mesh: derived(['labels'], ({ labels }, { labels: keys }) => meshLabelsOf(labels, keys)),
  mesh_labelled: derived(['labels'], ({ labels }, { labels: keys }) =>
    Object.values(keys).some((key: string) => Object.hasOwn(labels, key)),
  ),
  claimed_by: ledger,
  claimed: derived(['claimed_by'], ({ claimed_by }) => claimed_by.length > 0),
  origins: ledger,
  holds: ledger,
  env: docker,
  ports: docker,
  published_ports: derived(['ports'], ({ ports }) => publishedOf(ports).map((p) => p.hostPort)),
  listening: read('proc'),
  open_ports: derived(['published_ports', 'host_network', 'listening'], (x) =>
    [...new Set([...x.published_ports, ...(x.host_network && x.listening ? x.listening.map((l) => l.port) : [])])].sort(
      (a, b) => a - b,
    ),
  ),
  // Every endpoint reachable from outside the container, by how far it reaches.
  endpoints: derived(['ports', 'host_network', 'listening'], (x): Endpoints => {
    const reachable = [
      ...publishedOf(x.ports).map((p) => ({
        reach: reachOf(p.hostIp),
        at: endpoint(p.hostIp, p.hostPort, p.protocol),
      })),
      ...(x.host_network && x.listening
        ? x.listening.map((l) => ({ reach: reachOf(l.address), at: endpoint(l.address, l.port, l.protocol) }))
        : []),
    ];
    const endpointsOf = (reach: Reach) => [...new Set(reachable.filter((r) => r.reach === reach).map((r) => r.at))];
    return {
      all_interfaces: endpointsOf('all-interfaces'),
      address: endpointsOf('address'),
      loopback: endpointsOf('loopback'),
    };
  }),
  exposed_endpoints: derived(['endpoints'], ({ endpoints }) => [...endpoints.all_interfaces, ...endpoints.address]),
  // Its widest reach; `unknown` (itself an unknown fact) when on the host network with sockets not read.
  exposure: derived(
    ['host_network', 'listening', 'endpoints'],
    (x): Exposure =>
      x.host_network && x.listening === null
        ? 'unknown'
        : (REACH_ORDER.find((r) => x.endpoints[REACH_KEY[r]].length > 0) ?? 'none'),
  ),
  // Reachable from beyond this host (or maybe: exposure unknown); loopback is not.
  exposed: derived(
    ['exposure'],
    ({ exposure }) => exposure === 'all-interfaces' || exposure === 'address' || exposure === 'unknown',
  ),
  proc_available: SCAN,
  proc_reason: SCAN,
  scanner_self: SCAN,
  formerly_claimed_by: ledger,
  // How it runs: read from the snapshot's runtime part, or made here (src/subjects/containers.ts).
  ...factSourcesOf(CONTAINER_RUNTIME, runtime, {
    seccomp_profile: derived(['security_opt'], (x) => securityOf(x.security_opt, '').seccomp_profile),
    apparmor_profile: runtime,
    no_new_privileges: derived(['security_opt'], (x) => securityOf(x.security_opt, '').no_new_privileges),
    selinux_labels: derived(['security_opt'], (x) => securityOf(x.security_opt, '').selinux_labels),
    mount_list: runtime,
    image_id: docker,
    has_healthcheck: runtime,
    restarting: runtime,
    restart_count: docker,
  }),
  image_tag_now: images,
  // A tag that names an image now, another than the one the container runs (045 for images).
  image_tag_moved: derived(
    ['image_tag_now', 'image_id'],
    (x) => x.image_tag_now !== null && x.image_tag_now !== x.image_id,
  ),
  image_user: read('image'),
  process_names: read('proc'),
  daemon_security: read('daemon'),
} satisfies FactTable<ContainerData, ContainerContext>;

/** The runtime facts read from the snapshot, written into a container's facts (src/subjects/spec.ts). */
const writeRuntimeFacts = factsWriterOf(CONTAINER_RUNTIME);

export const CONTAINER_KINDS = factKinds<ContainerData, ContainerContext>(CONTAINER_FACTS);
export const CONTAINER_ORDER = derivationOrder<ContainerData, ContainerContext>(CONTAINER_FACTS);

const CONTAINERS = subjectFactory('containers');

/** A container subject, with the claims it was built from (container_sources reads their sources). */
export interface BuiltContainer {
  container: Container;
  subject: Subject<ContainerData>;
  claims: readonly LedgerRecord[];
}

/** The `containers` set: every container, with its claims, exposure and history; in snapshot order. */
export function buildContainers(containers: readonly Container[], labels: LabelKeys, joins: Joins): BuiltContainer[] {
  return containers.map((c) => {
    const claims = joins.claimsOf('container', c.name, c.id);
    const { data, unknown } = containerData(c, labels, claims, joins);
    // Located at the ledger entries that claim it, else at those it was once the target of (097).
    const formerIds = data.formerly_claimed_by.map((f) => f.id);
    const entryIds = claims.length > 0 ? data.claimed_by : formerIds;
    const physical = [...new Set(entryIds)].flatMap((id) => {
      const line = joins.lineOfId(id);
      return line !== undefined ? [{ path: joins.ledgerPath, line }] : [];
    });
    const resource = data.mesh.resource ?? claims[0]?.entry.id ?? formerIds[0] ?? null;
    const subject = CONTAINERS.subject({
      id: c.name,
      data,
      unknown,
      locate: () => ({ physical, logical: [containerLogical(joins.host, c.name)] }),
      resource,
      module: data.mesh.module ?? joins.moduleOfId(resource),
      ...allowancesOf(claims, joins.ledgerPath),
    });
    return { container: c, subject, claims };
  });
}

/** The rules the entries claiming a resource allow it to break (`allow:`), each with the entry that says so. */
export function allowancesOf(claims: readonly LedgerRecord[], ledgerPath: string): { allowances?: Allowance[] } {
  const allowances = claims.flatMap((r) =>
    (r.entry.allow ?? []).map((a) => ({
      rule: a.rule,
      reason: a.reason,
      by: `${r.entry.id!} (${ledgerPath}:${r.line})`,
    })),
  );
  return allowances.length > 0 ? { allowances } : {};
}

/**
 * Sources not read for one container, with why. /proc of a container that is not running is not
 * unread: there is no process to read, so it has no socket (a restarting one, which the engine says
 * runs, between two starts, is unread).
 */
function unreadFor(c: Container, joins: Joins): Map<FactSource, string> {
  const unread = new Map<FactSource, string>();
  if (joins.ledgerUnread) unread.set('ledger', joins.ledgerUnread);
  if (!c.proc.available && c.state.running) unread.set('proc', `/proc of ${c.name} not read: ${c.proc.reason}`);
  if (c.runtime === undefined) unread.set('snapshot', NOT_IN_V1);
  const image = joins.imageFactsOf(c);
  if (image.tagsUnread !== null) unread.set('images', image.tagsUnread);
  if (image.imageUnread !== null) unread.set('image', image.imageUnread);
  if (joins.daemonSecurity === null) unread.set('daemon', "the daemon's settings were not all read");
  return unread;
}

function containerData(
  c: Container,
  labels: LabelKeys,
  claims: readonly LedgerRecord[],
  joins: Joins,
): { data: ContainerData; unknown: UnknownFactOf<ContainerData>[] } {
  const restartLoop = joins.restartLoopOf(c);
  const r = c.runtime;
  const image = joins.imageFactsOf(c);
  // Speed: one literal, with a place for each derived fact (buildFacts fills them), then the runtime
  // facts the spec maps written after it, always in one order (placeholders when the snapshot has
  // none: they are unknown). A container has ~70 facts: added to an empty object one by one, V8 turns
  // it into a dictionary, slower to build and to read; added to a literal this size, it keeps one shape.
  const given: Omit<BaseFacts<ContainerData, typeof CONTAINER_FACTS>, keyof ReadFactsOf<typeof CONTAINER_RUNTIME>> &
    DerivedPlaces<typeof CONTAINER_FACTS> = {
    kind: 'container',
    id: c.name,
    host: joins.host,
    name: c.name,
    container_id: c.id.slice(0, 12),
    image: c.image,
    status: c.state.status,
    running: c.state.running,
    network_mode: c.networkMode,
    labels: c.labels,
    claimed_by: claims.length === 0 ? NONE : claims.map((claim) => claim.entry.id!),
    origins: claims.length === 0 ? NONE : [...new Set(claims.map((claim) => claim.entry.origin ?? 'declared'))],
    holds:
      claims.length === 0
        ? NONE
        : [...new Set(claims.flatMap((claim) => claim.entry.holds ?? []))].sort((a, b) => a - b),
    env: c.env,
    ports: c.ports,
    // A stopped container has no process and no socket: none is known. Null when not read: a
    // stand-in that rules never decide on (the field is unknown).
    listening: c.proc.available ? c.proc.listening : c.state.running ? null : [],
    proc_available: c.proc.available,
    proc_reason: c.proc.available ? null : c.proc.reason,
    formerly_claimed_by: joins.formerlyOf('container', c.name),
    apparmor_profile: r === undefined ? '' : securityOf(r.securityOpt, r.appArmorProfile).apparmor_profile,
    mount_list: mountListOf(c),
    image_id: normalImageId(c.imageId ?? ''),
    has_healthcheck: r?.healthcheck ?? false,
    restarting: restartLoop ?? false,
    restart_count: c.state.restartCount,
    image_tag_now: image.tagNow,
    image_user: image.user ?? '',
    // Every process of the container, without exec; none when it is not running.
    process_names: c.proc.available ? (c.proc.processes ?? []) : [],
    daemon_security: joins.daemonSecurity ?? { apparmor: false, selinux: false, no_new_privileges: false },
    scanner_self: joins.scannerContainer !== null && c.id === joins.scannerContainer,
    host_network: undefined,
    mesh: undefined,
    mesh_labelled: undefined,
    claimed: undefined,
    published_ports: undefined,
    open_ports: undefined,
    endpoints: undefined,
    exposed_endpoints: undefined,
    exposure: undefined,
    exposed: undefined,
    seccomp_profile: undefined,
    no_new_privileges: undefined,
    selinux_labels: undefined,
    image_tag_moved: undefined,
  };
  const built = buildFacts<ContainerData, ContainerContext, typeof CONTAINER_FACTS>(
    CONTAINER_FACTS,
    CONTAINER_ORDER,
    writeRuntimeFacts(given, r),
    { labels },
    unreadFor(c, joins),
    CONTAINER_KINDS.read,
  );
  addFactsTheScanCouldNotTell(built.unknown, c, restartLoop);
  return built;
}

/** The container's mounts as facts: every field present, a missing one as null or ''. */
function mountListOf(c: Container): ContainerData['mount_list'] {
  return c.mounts.map((m) => ({
    type: m.type,
    source: m.source,
    destination: m.destination,
    rw: m.rw,
    volume_name: m.name ?? null,
    propagation: m.propagation ?? '',
    mode: m.mode ?? '',
  }));
}

/** Facts unknown although every source was read: the snapshot or the engine could not tell them. */
function addFactsTheScanCouldNotTell(
  unknown: UnknownFactOf<ContainerData>[],
  c: Container,
  restartLoop: boolean | null,
): void {
  // /proc read by a scanner that did not yet record the process names (snapshot@1): those are unknown.
  if (c.proc.available && c.proc.processes === undefined && !unknown.some((u) => u.field === 'process_names'))
    unknown.push({ field: 'process_names', source: 'snapshot', reason: NOT_IN_V1 });
  // Running again after restarts, with no start time from the engine: whether it loops is not known.
  if (restartLoop === null && !unknown.some((u) => u.field === 'restarting'))
    unknown.push({
      field: 'restarting',
      source: 'docker',
      reason: `${c.name} runs again after ${c.state.restartCount} restarts, but the engine gave no start time`,
    });
}
