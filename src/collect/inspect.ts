import { compareText } from '../compare.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { Container, Mount, ProcView, PublishedPort } from '../snapshot/types.js';

/** The part of the Engine API's `GET /containers/{id}/json` that mesh-audit reads. */
export interface ContainerInspect {
  Id: string;
  Name: string;
  Created: string;
  Image?: string;
  RestartCount?: number;
  State?: { Status?: string; Running?: boolean; Pid?: number; StartedAt?: string; FinishedAt?: string };
  Config?: { Image?: string; Env?: string[] | null; Labels?: Record<string, string> | null };
  HostConfig?: {
    NetworkMode?: string;
    PortBindings?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null;
  };
  Mounts?: { Type?: string; Source?: string; Destination?: string; RW?: boolean }[] | null;
  NetworkSettings?: { Ports?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null };
}

/** The part of the Engine API's `GET /images/{id}/json` that mesh-audit reads. */
export interface ImageInspect {
  Id: string;
  Config?: { Env?: string[] | null } | null;
}

// The engine writes the zero time for "never".
const ZERO_TIME = '0001-01-01T00:00:00Z';
const timeOrNull = (t: string | undefined): string | null =>
  t === undefined || t === '' || t === ZERO_TIME ? null : t;

/** `KEY=value` lines into secret-safe values; a line without `=` is a key with an empty value. */
export function envFromList(list: readonly string[] | null | undefined, safe: SafeValueMaker): Container['env'] {
  const env: Container['env'] = {};
  for (const line of list ?? []) {
    const eq = line.indexOf('=');
    const key = eq < 0 ? line : line.slice(0, eq);
    if (key.length > 0) env[key] = safe(eq < 0 ? '' : line.slice(eq + 1));
  }
  return env;
}

function portsOf(inspect: ContainerInspect): PublishedPort[] {
  // A running container's NetworkSettings.Ports has what was really bound; a stopped one's is empty,
  // so fall back to what it asked for.
  const live = inspect.NetworkSettings?.Ports ?? {};
  const source =
    inspect.State?.Running && Object.keys(live).length > 0 ? live : (inspect.HostConfig?.PortBindings ?? {});
  const out: PublishedPort[] = [];
  for (const [spec, bindings] of Object.entries(source)) {
    const [port, proto] = spec.split('/');
    const protocol = proto === 'udp' || proto === 'sctp' ? proto : 'tcp';
    for (const b of bindings ?? []) {
      const hostPort = Number(b.HostPort);
      if (!Number.isInteger(hostPort) || hostPort <= 0) continue;
      out.push({ containerPort: Number(port), protocol, hostIp: b.HostIp ?? '', hostPort });
    }
  }
  return out.sort(
    (a, b) => a.hostPort - b.hostPort || compareText(a.hostIp, b.hostIp) || compareText(a.protocol, b.protocol),
  );
}

function mountsOf(inspect: ContainerInspect): Mount[] {
  return (inspect.Mounts ?? []).map((m) => ({
    type: m.Type ?? 'unknown',
    source: m.Source ?? '',
    destination: m.Destination ?? '',
    rw: m.RW ?? false,
  }));
}

/** A container as the snapshot holds it; /proc facts are added by the proc collector. */
export function containerFromInspect(
  inspect: ContainerInspect,
  safe: SafeValueMaker,
  proc: ProcView = { available: false, reason: 'not read' },
): Container {
  const state = inspect.State ?? {};
  return {
    id: inspect.Id,
    name: inspect.Name.replace(/^\//, ''),
    image: inspect.Config?.Image ?? inspect.Image ?? '',
    ...(inspect.Image !== undefined ? { imageId: inspect.Image } : {}),
    created: inspect.Created,
    labels: { ...(inspect.Config?.Labels ?? {}) },
    state: {
      status: state.Status ?? 'unknown',
      running: state.Running ?? false,
      pid: state.Pid ?? 0,
      startedAt: timeOrNull(state.StartedAt),
      finishedAt: timeOrNull(state.FinishedAt),
      restartCount: inspect.RestartCount ?? 0,
    },
    env: envFromList(inspect.Config?.Env, safe),
    networkMode: inspect.HostConfig?.NetworkMode ?? 'default',
    mounts: mountsOf(inspect),
    ports: portsOf(inspect),
    proc,
  };
}
