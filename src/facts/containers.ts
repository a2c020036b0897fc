import type { Container, LabelKeys, LedgerRecord, ListeningSocket, PublishedPort } from '../snapshot/types.js';
import type { Joins } from './joins.js';
import { unknownFacts, type LogicalLocation, type Subject } from '../policy/subject.js';
import type { ContainerData, Endpoints, Exposure, MeshLabels, Reach } from '../policy/subject-data.js';

export type { Exposure, Reach } from '../policy/subject-data.js';

const WILDCARD_ADDRESSES = new Set(['', '0.0.0.0', '::', '[::]']);

export function reachOf(address: string): Reach {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (WILDCARD_ADDRESSES.has(a)) return 'all-interfaces';
  if (a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.') || a === 'localhost') return 'loopback';
  return 'address';
}

const REACH_ORDER: readonly Reach[] = ['all-interfaces', 'address', 'loopback'];

export const containerLogical = (host: string, name: string): LogicalLocation => ({
  kind: 'container',
  name,
  fullyQualifiedName: `${host}/containers/${name}`,
});

const endpoint = (address: string, port: number, protocol: string): string =>
  `${address.includes(':') && !address.startsWith('[') ? `[${address}]` : address || '0.0.0.0'}:${port}/${protocol}`;

function splitList(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

/** What a container exposes: every endpoint reachable from outside it, by how far it reaches. */
function exposureOf(published: readonly PublishedPort[], hostNetwork: boolean, listening: readonly ListeningSocket[] | null) {
  const reachable = [
    ...published.map((p) => ({ reach: reachOf(p.hostIp), at: endpoint(p.hostIp, p.hostPort, p.protocol) })),
    ...(hostNetwork && listening ? listening.map((l) => ({ reach: reachOf(l.address), at: endpoint(l.address, l.port, l.protocol) })) : []),
  ];
  const endpointsOf = (reach: Reach) => [...new Set(reachable.filter((r) => r.reach === reach).map((r) => r.at))];
  const endpoints: Endpoints = { all_interfaces: endpointsOf('all-interfaces'), address: endpointsOf('address'), loopback: endpointsOf('loopback') };
  const exposure: Exposure = hostNetwork && listening === null ? 'unknown' : (REACH_ORDER.find((r) => reachable.some((x) => x.reach === r)) ?? 'none');
  return {
    // Reachable from beyond this host (or maybe: host network, sockets not read); loopback is not.
    exposed: exposure === 'all-interfaces' || exposure === 'address' || exposure === 'unknown',
    exposure,
    exposed_endpoints: [...endpoints.all_interfaces, ...endpoints.address],
    endpoints,
  };
}

const meshLabelsOf = (c: Container, labels: LabelKeys): MeshLabels => ({
  module: c.labels[labels.module] ?? null,
  resource: c.labels[labels.resource] ?? null,
  sources: splitList(c.labels[labels.sources]),
  source_digests: splitList(c.labels[labels.sourceDigests]),
});

/** A container subject, with the claims it was built from (container_sources reads their sources). */
export interface BuiltContainer {
  container: Container;
  subject: Subject<ContainerData>;
  claims: LedgerRecord[];
}

/** The `containers` set: every container, with its claims, exposure and history; in snapshot order. */
export function buildContainers(containers: readonly Container[], labels: LabelKeys, joins: Joins): BuiltContainer[] {
  return containers.map((c) => {
    const claims = joins.claimsOf('container', c.name, c.id);
    const data = containerData(c, labels, claims, joins);
    // Located at the ledger entries that claim it, else at those it was once the target of (097).
    const formerIds = data.formerly_claimed_by.map((f) => f.id);
    const entryIds = claims.length > 0 ? data.claimed_by : formerIds;
    const physical = [...new Set(entryIds)].flatMap((id) => {
      const line = joins.lineOfId(id);
      return line !== undefined ? [{ path: joins.ledgerPath, line }] : [];
    });
    const unknown = [
      ...(joins.ledgerUnread ? unknownFacts('ledger', joins.ledgerUnread, ['claimed_by', 'claimed', 'origins', 'holds', 'formerly_claimed_by']) : []),
      // Without /proc a host-network container's sockets are not known (published ports are, from the engine).
      ...(c.proc.available ? [] : unknownFacts('proc', `/proc of ${c.name} not read: ${c.proc.reason}`, data.host_network ? ['listening', 'open_ports', 'exposed_endpoints'] : ['listening'])),
    ];
    const subject: Subject<ContainerData> = {
      set: 'containers',
      about: { kind: 'container', id: c.name },
      part: null,
      data,
      ...(unknown.length > 0 ? { unknown } : {}),
      locate: () => ({ physical, logical: [containerLogical(joins.host, c.name)] }),
      resource: data.mesh.resource ?? claims[0]?.entry.id ?? formerIds[0] ?? null,
    };
    return { container: c, subject, claims };
  });
}

function containerData(c: Container, labels: LabelKeys, claims: readonly LedgerRecord[], joins: Joins): ContainerData {
  const hostNetwork = c.networkMode === 'host';
  const listening = c.proc.available ? c.proc.listening : null;
  const published = c.ports.filter((p) => p.hostPort > 0);
  const { exposed, exposure, exposed_endpoints, endpoints } = exposureOf(published, hostNetwork, listening);
  return {
    kind: 'container',
    id: c.name,
    host: joins.host,
    name: c.name,
    container_id: c.id.slice(0, 12),
    image: c.image,
    status: c.state.status,
    running: c.state.running,
    network_mode: c.networkMode,
    host_network: hostNetwork,
    labels: c.labels,
    mesh: meshLabelsOf(c, labels),
    mesh_labelled: Object.values(labels).some((key: string) => Object.hasOwn(c.labels, key)),
    claimed_by: claims.map((r) => r.entry.id!),
    claimed: claims.length > 0,
    origins: [...new Set(claims.map((r) => r.entry.origin ?? 'declared'))],
    holds: [...new Set(claims.flatMap((r) => r.entry.holds ?? []))].sort((a, b) => a - b),
    env: c.env,
    ports: c.ports,
    published_ports: published.map((p) => p.hostPort),
    listening,
    open_ports: [...new Set([...published.map((p) => p.hostPort), ...(hostNetwork && listening ? listening.map((l) => l.port) : [])])].sort((a, b) => a - b),
    exposed,
    exposure,
    exposed_endpoints,
    endpoints,
    proc_available: c.proc.available,
    proc_reason: c.proc.available ? null : c.proc.reason,
    formerly_claimed_by: joins.formerlyOf('container', c.name),
  };
}
