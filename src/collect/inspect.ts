import { compareText } from '../text/compare.js';
import { keptLabels } from '../secret/labels.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { Container, ContainerRuntime, Mount, ProcView, PublishedPort } from '../snapshot/types.js';

/** Config.Healthcheck of a container or an image. */
export interface HealthcheckConfig {
  Test?: string[] | null;
  Interval?: number;
  Timeout?: number;
  Retries?: number;
  StartPeriod?: number;
}

/** The part of the Engine API's `GET /containers/{id}/json` that mesh-audit reads. */
export interface ContainerInspect {
  Id: string;
  Name: string;
  Created: string;
  Image?: string;
  RestartCount?: number;
  AppArmorProfile?: string;
  State?: {
    Status?: string;
    Running?: boolean;
    Restarting?: boolean;
    OOMKilled?: boolean;
    ExitCode?: number;
    Pid?: number;
    StartedAt?: string;
    FinishedAt?: string;
    Health?: { Status?: string } | null;
  };
  Config?: {
    Image?: string;
    Env?: string[] | null;
    Labels?: Record<string, string> | null;
    User?: string;
    Cmd?: string[] | string | null;
    Entrypoint?: string[] | string | null;
    Healthcheck?: HealthcheckConfig | null;
  };
  HostConfig?: {
    NetworkMode?: string;
    PortBindings?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null;
    Privileged?: boolean;
    CapAdd?: string[] | null;
    CapDrop?: string[] | null;
    SecurityOpt?: string[] | null;
    PidMode?: string;
    IpcMode?: string;
    UTSMode?: string;
    UsernsMode?: string;
    CgroupnsMode?: string;
    ReadonlyRootfs?: boolean;
    Memory?: number;
    MemorySwap?: number;
    NanoCpus?: number;
    CpuShares?: number;
    PidsLimit?: number | null;
    RestartPolicy?: { Name?: string; MaximumRetryCount?: number } | null;
    Devices?: { PathOnHost?: string; PathInContainer?: string; CgroupPermissions?: string }[] | null;
    Ulimits?: { Name?: string; Soft?: number; Hard?: number }[] | null;
    CgroupParent?: string;
    LogConfig?: { Type?: string } | null;
  };
  Mounts?:
    | {
        Type?: string;
        Name?: string;
        Source?: string;
        Destination?: string;
        RW?: boolean;
        Mode?: string;
        Propagation?: string;
      }[]
    | null;
  NetworkSettings?: {
    Ports?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null;
    Networks?: Record<string, unknown> | null;
  };
}

/** The part of the Engine API's `GET /images/{id}/json` that mesh-audit reads. */
export interface ImageInspect {
  Id: string;
  RepoTags?: string[] | null;
  RepoDigests?: string[] | null;
  Created?: string;
  Config?: {
    Env?: string[] | null;
    User?: string;
    Labels?: Record<string, string> | null;
    Healthcheck?: HealthcheckConfig | null;
  } | null;
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

/**
 * The inspect with its mounts in one order (by destination, then source): the engine lists them in no order (Docker
 * walks a Go map, so two inspects of an unchanged container differ), and a record that moves with no change would
 * read as a change to whatever compares two reads (serve's kept files, `diff`).
 */
export function withMountsInOrder(inspect: ContainerInspect): ContainerInspect {
  const mounts = inspect.Mounts;
  if (!Array.isArray(mounts) || mounts.length < 2) return inspect;
  const key = (m: (typeof mounts)[number]) => [String(m.Destination ?? ''), String(m.Source ?? '')] as const;
  const sorted = [...mounts].sort((a, b) => {
    const [da, sa] = key(a);
    const [db, sb] = key(b);
    return compareText(da, db) || compareText(sa, sb);
  });
  return { ...inspect, Mounts: sorted };
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
    ...(m.Type === 'volume' && m.Name !== undefined && m.Name !== '' ? { name: m.Name } : {}),
    propagation: m.Propagation ?? '',
    mode: m.Mode ?? '',
  }));
}

/** `CAP_SYS_ADMIN`, `sys_admin` and `SYS_ADMIN` are one capability (Podman writes the prefix, Docker not). */
const capabilityName = (cap: string): string => cap.trim().toUpperCase().replace(/^CAP_/, '');

/** Cmd and Entrypoint are lists (Podman may give a string): each element secret-safe, null when unset. */
function safeArgs(value: string[] | string | null | undefined, safe: SafeValueMaker): ContainerRuntime['command'] {
  if (value === undefined || value === null) return null;
  return (typeof value === 'string' ? [value] : value).map((arg) => safe(String(arg)));
}

/** A healthcheck that runs: a test other than `NONE` (which switches off the image's). */
export const hasHealthcheck = (check: HealthcheckConfig | null | undefined): boolean =>
  Array.isArray(check?.Test) && check.Test.length > 0 && check.Test[0] !== 'NONE';

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

/** How the container runs, from the inspect already made: each value of the spec (src/subjects/containers.ts). */
function runtimeOf(inspect: ContainerInspect, safe: SafeValueMaker): ContainerRuntime {
  const host = inspect.HostConfig ?? {};
  const state = inspect.State ?? {};
  const config = inspect.Config ?? {};
  const pids = host.PidsLimit;
  return {
    privileged: host.Privileged ?? false,
    capAdd: (host.CapAdd ?? []).map(capabilityName).sort(compareText),
    capDrop: (host.CapDrop ?? []).map(capabilityName).sort(compareText),
    securityOpt: [...(host.SecurityOpt ?? [])],
    appArmorProfile: inspect.AppArmorProfile ?? '',
    pidMode: host.PidMode ?? '',
    ipcMode: host.IpcMode ?? '',
    utsMode: host.UTSMode ?? '',
    usernsMode: host.UsernsMode ?? '',
    cgroupnsMode: host.CgroupnsMode ?? '',
    readonlyRootfs: host.ReadonlyRootfs ?? false,
    memory: numberOr(host.Memory, 0),
    memorySwap: numberOr(host.MemorySwap, 0),
    nanoCpus: numberOr(host.NanoCpus, 0),
    cpuShares: numberOr(host.CpuShares, 0),
    // 0 and -1 are "no limit" as much as null is (Docker writes null, Podman 0 or 2048-like defaults).
    pidsLimit: typeof pids === 'number' && pids > 0 ? pids : null,
    restartPolicy: {
      name: host.RestartPolicy?.Name ?? '',
      maxRetries: numberOr(host.RestartPolicy?.MaximumRetryCount, 0),
    },
    devices: (host.Devices ?? []).map((d) => ({
      pathOnHost: d.PathOnHost ?? '',
      pathInContainer: d.PathInContainer ?? '',
      cgroupPermissions: d.CgroupPermissions ?? '',
    })),
    ulimits: (host.Ulimits ?? []).map((u) => ({
      name: u.Name ?? '',
      soft: numberOr(u.Soft, 0),
      hard: numberOr(u.Hard, 0),
    })),
    cgroupParent: host.CgroupParent ?? '',
    user: config.User ?? '',
    logDriver: host.LogConfig?.Type ?? '',
    networks: Object.keys(inspect.NetworkSettings?.Networks ?? {}).sort(compareText),
    health: typeof state.Health?.Status === 'string' && state.Health.Status !== '' ? state.Health.Status : 'none',
    restarting: state.Restarting ?? false,
    oomKilled: state.OOMKilled ?? false,
    exitCode: numberOr(state.ExitCode, 0),
    command: safeArgs(config.Cmd, safe),
    entrypoint: safeArgs(config.Entrypoint, safe),
    healthcheck: hasHealthcheck(config.Healthcheck),
  };
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
    labels: keptLabels(inspect.Config?.Labels),
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
    runtime: runtimeOf(inspect, safe),
  };
}
