import { createHash } from 'node:crypto';
import { containerFromInspect, type ContainerInspect } from '../../src/collect/inspect.js';
import { envReadings } from '../../src/collect/files.js';
import { composeFacts } from '../../src/collect/compose-file.js';
import { ledgerRecord } from '../../src/collect/ledger-entries.js';
import { objectLabels } from '../../src/collect/engine-objects.js';
import { createSafeValueMaker, type SafeValueMaker } from '../../src/secret/value.js';
import {
  DEFAULT_LABEL_KEYS,
  SNAPSHOT_SCHEMA,
  type BoundFile,
  type Container,
  type DaemonInfo,
  type DaemonView,
  type ImageRecord,
  type ImagesView,
  type FileRecord,
  type HostListener,
  type HostListenerView,
  type LedgerRecord,
  type NetworkRecord,
  type VolumeRecord,
  type ListeningSocket,
  type Problem,
  type Snapshot,
} from '../../src/snapshot/types.js';

/**
 * A host described in plain terms (raw values, file texts), turned into a secret-safe snapshot the
 * way the collectors do it: one in-memory HMAC key per snapshot, env files parsed, files digested.
 * Used by the tests and by scripts/build-examples.ts.
 */
export const sha256 = (text: string): string => 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');

/** `GET /info` of Debian's docker.io on a stock host: the daemon a modelled (or benchmarked) host runs. */
export const DEBIAN_DAEMON_INFO: Readonly<DaemonInfo> = Object.freeze({
  serverVersion: '26.1.5',
  apiVersion: '1.45',
  os: 'Debian GNU/Linux 12 (bookworm)',
  kernelVersion: '6.1.0',
  securityOptions: Object.freeze(['name=apparmor', 'name=seccomp,profile=builtin', 'name=cgroupns']) as string[],
  loggingDriver: 'json-file',
  cgroupDriver: 'systemd',
  cgroupVersion: '2',
  storageDriver: 'overlay2',
  liveRestore: false,
  swarmState: 'inactive',
  experimental: false,
});

const DEFAULT_IMAGE = 'registry.example.invalid/busybox:1';

export interface ContainerSpec {
  name: string;
  /** The engine's id; by default one derived from host, name and order. */
  id?: string;
  image?: string;
  labels?: Record<string, string>;
  env?: Record<string, string>;
  /** The image's own env (Container.imageEnv); absent: the image was not read. */
  imageEnv?: Record<string, string>;
  network?: string;
  running?: boolean;
  /** The engine's state; default `running` or `exited` from `running`. A `restarting` container runs without a process (pid 0). */
  status?: 'running' | 'exited' | 'restarting' | 'created' | 'paused';
  restartCount?: number;
  /** Named volumes: `/var/lib/docker/volumes/NAME/_data` mounted at `destination`. */
  volumes?: { name: string; destination: string; rw?: boolean }[];
  created?: string;
  binds?: { source: string; destination: string; rw?: boolean }[];
  /** Published ports as `HOSTIP:HOSTPORT:CONTAINERPORT/PROTO`. */
  publish?: string[];
  /** Inspect fields merged over the defaults (snapshot@2 runtime facts: privileged, caps, health, …). */
  hostConfig?: Partial<NonNullable<ContainerInspect['HostConfig']>>;
  state?: Partial<NonNullable<ContainerInspect['State']>>;
  config?: Partial<NonNullable<ContainerInspect['Config']>>;
  /** The image's own facts (its record in `images`); its id is made from `image`. */
  imageFacts?: Partial<Omit<ImageRecord, 'id' | 'env'>>;
  /** /proc view; a string is the reason it was unavailable. */
  proc?:
    | {
        env?: Record<string, string>;
        listening?: ListeningSocket[];
        /** Names of its processes (default: its main process, `sh`). */
        processes?: string[];
        bound?: { destination: string; text: string; inode: number }[];
      }
    | string;
}

export class HostModel {
  private readonly safe: SafeValueMaker;
  private readonly files = new Map<string, FileRecord>();
  private readonly containers: Container[] = [];
  private ledgerEntries: { entry: Record<string, unknown> }[] = [];
  private ledgerMeta: { path: string; node?: string; adopted?: boolean; available: boolean } = {
    path: '/var/lib/mesh-host/ledger.json',
    available: true,
  };
  private readonly problems: Problem[] = [];
  /** Networks, volumes and the host's listeners: absent from the snapshot until one is described (not read). */
  private networks: NetworkRecord[] | null | undefined;
  private volumes: VolumeRecord[] | null | undefined;
  private listeners: HostListenerView | undefined;
  private readonly images = new Map<string, ImageRecord>();
  private readonly tags: Record<string, string> = {};
  private imagesView: ImagesView | undefined;
  private daemonView: DaemonView = {
    info: { available: true, ...DEBIAN_DAEMON_INFO },
    config: { available: true, exists: false, settings: {} },
    process: { available: true, running: true, args: [], flags: {} },
    paths: [],
  };
  private nextInode = 1000;
  private seq = 0;

  constructor(
    private readonly hostname: string,
    private readonly takenAt: string,
    private readonly managedRoots: string[] = ['/etc/mesh'],
  ) {
    this.safe = createSafeValueMaker();
  }

  /**
   * A regular file; `.env` files (or `env: true`) are parsed into secret-safe entries, a Compose file (`compose: true`)
   * into the env keys its services give inline, as the scan does (src/collect/compose-file.ts).
   */
  file(
    path: string,
    text: string,
    options: { env?: boolean; compose?: boolean; inode?: number; mtime?: string; mode?: string } = {},
  ): this {
    const isEnv = options.env ?? /\.env$/.test(path);
    this.files.set(path, {
      path,
      kind: 'file',
      size: Buffer.byteLength(text),
      mode: options.mode ?? '0640',
      uid: 0,
      gid: 0,
      mtime: options.mtime ?? this.takenAt,
      inode: options.inode ?? this.nextInode++,
      sha256: sha256(text),
      ...(isEnv ? envReadings(Buffer.from(text, 'utf8'), this.safe) : {}),
      ...(options.compose === true ? { compose: composeFacts(Buffer.from(text, 'utf8')) } : {}),
    });
    return this;
  }

  missing(path: string): this {
    this.files.set(path, { path, kind: 'missing' });
    return this;
  }

  record(record: FileRecord): this {
    this.files.set(record.path, record);
    return this;
  }

  inodeOf(path: string): number {
    return this.files.get(path)?.inode ?? -1;
  }

  container(spec: ContainerSpec): this {
    const status = spec.status ?? ((spec.running ?? true) ? 'running' : 'exited');
    // Docker says Running for a restarting container, whose process is not there between restarts.
    const running = status === 'running' || status === 'restarting' || status === 'paused';
    const hasProcess = status === 'running' || status === 'paused';
    const id = spec.id ?? createHash('sha256').update(`${this.hostname}/${spec.name}/${this.seq++}`).digest('hex');
    const portBindings: NonNullable<ContainerInspect['NetworkSettings']>['Ports'] = {};
    for (const p of spec.publish ?? []) {
      const m = /^(.*):(\d+):(\d+)\/(tcp|udp)$/.exec(p);
      if (!m) throw new Error(`bad publish spec ${p}`);
      (portBindings[`${m[3]}/${m[4]}`] ??= []).push({ HostIp: m[1]!, HostPort: m[2]! });
    }
    const inspect: ContainerInspect = {
      Id: id,
      Name: `/${spec.name}`,
      Created: spec.created ?? '2026-09-01T10:00:00Z',
      // One image per reference: containers made from one tag run one image (until moveTag).
      Image:
        'sha256:' +
        createHash('sha256')
          .update(spec.image ?? DEFAULT_IMAGE)
          .digest('hex'),
      RestartCount: spec.restartCount ?? (status === 'restarting' ? 7 : 0),
      State: {
        Status: status,
        Running: running,
        Restarting: status === 'restarting',
        Pid: hasProcess ? 4000 + this.seq : 0,
        StartedAt: '2026-09-01T10:00:01Z',
        FinishedAt: running ? '0001-01-01T00:00:00Z' : '2026-09-02T10:00:00Z',
        ...spec.state,
      },
      Config: {
        Image: spec.image ?? DEFAULT_IMAGE,
        Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
        Labels: spec.labels ?? {},
        ...spec.config,
      },
      HostConfig: {
        NetworkMode: spec.network ?? 'none',
        PortBindings: portBindings,
        RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
        LogConfig: { Type: 'json-file' },
        ...spec.hostConfig,
      },
      Mounts: [
        ...(spec.binds ?? []).map((b) => ({
          Type: 'bind',
          Source: b.source,
          Destination: b.destination,
          RW: b.rw ?? false,
        })),
        ...(spec.volumes ?? []).map((v) => ({
          Type: 'volume',
          Source: `/var/lib/docker/volumes/${v.name}/_data`,
          Destination: v.destination,
          RW: v.rw ?? true,
        })),
      ],
      NetworkSettings: { Ports: running ? portBindings : {} },
    };
    const proc = spec.proc;
    const view: Container['proc'] =
      typeof proc === 'string'
        ? { available: false, reason: proc }
        : !hasProcess
          ? { available: false, reason: 'container is not running' }
          : {
              available: true,
              env: Object.fromEntries(Object.entries(proc?.env ?? spec.env ?? {}).map(([k, v]) => [k, this.safe(v)])),
              listening: proc?.listening ?? [],
              processes: proc?.processes ?? ['sh'],
              boundFiles: (spec.binds ?? [])
                .filter((b) => this.files.get(b.source)?.kind === 'file')
                .map((b): BoundFile => {
                  const pinned = proc?.bound?.find((x) => x.destination === b.destination);
                  const host = this.files.get(b.source)!;
                  return pinned
                    ? { destination: b.destination, source: b.source, inode: pinned.inode, sha256: sha256(pinned.text) }
                    : {
                        destination: b.destination,
                        source: b.source,
                        inode: host.inode ?? null,
                        sha256: host.sha256 ?? null,
                      };
                }),
            };
    const container = containerFromInspect(inspect, this.safe, view);
    const imageId = inspect.Image!;
    const tag = inspect.Config!.Image!;
    if (!this.images.has(imageId))
      this.images.set(imageId, {
        id: imageId,
        tags: [tag],
        digests: [],
        created: '2026-08-01T00:00:00Z',
        labels: {},
        env: Object.fromEntries(Object.entries(spec.imageEnv ?? {}).map(([k, v]) => [k, this.safe(v)])),
        user: '',
        healthcheck: null,
        ...spec.imageFacts,
      });
    this.tags[tag] ??= imageId;
    if (spec.imageEnv)
      container.imageEnv = Object.fromEntries(Object.entries(spec.imageEnv).map(([k, v]) => [k, this.safe(v)]));
    this.containers.push(container);
    return this;
  }

  ledger(entries: Record<string, unknown>[], meta: { path?: string; node?: string; adopted?: boolean } = {}): this {
    this.ledgerEntries = entries.map((entry) => ({ entry }));
    this.ledgerMeta = { ...this.ledgerMeta, ...meta };
    return this;
  }

  ledgerUnavailable(message: string): this {
    this.ledgerMeta.available = false;
    this.problems.push({ source: 'ledger', subject: this.ledgerMeta.path, message });
    return this;
  }

  /** The tag now names the image made from `imageName` (a tag moved after containers were made from it). */
  moveTag(tag: string, imageName: string): this {
    this.tags[tag] = 'sha256:' + createHash('sha256').update(imageName).digest('hex');
    return this;
  }

  /** Images as not read (the list failed), with why. */
  imagesUnavailable(reason: string): this {
    this.imagesView = { available: false, reason };
    return this;
  }

  daemon(view: Partial<DaemonView>): this {
    this.daemonView = { ...this.daemonView, ...view };
    return this;
  }

  /** A network as `GET /networks` lists it, with raw labels (made secret-safe here) and the containers attached. */
  network(n: {
    name: string;
    driver?: string;
    internal?: boolean;
    labels?: Record<string, string>;
    containers?: string[];
  }): this {
    const id = createHash('sha256').update(`network ${n.name}`).digest('hex');
    (this.networks ??= []).push({
      id,
      name: n.name,
      driver: n.driver ?? 'bridge',
      scope: 'local',
      internal: n.internal ?? false,
      created: this.takenAt,
      ...objectLabels(n.labels, this.safe, DEFAULT_LABEL_KEYS),
      containers: n.containers ?? [],
    });
    return this;
  }

  /** A volume as `GET /volumes` lists it, with raw labels and the containers mounting it. */
  volume(v: { name: string; labels?: Record<string, string>; containers?: string[] }): this {
    (this.volumes ??= []).push({
      name: v.name,
      driver: 'local',
      scope: 'local',
      mountpoint: `/var/lib/docker/volumes/${v.name}/_data`,
      created: this.takenAt,
      ...objectLabels(v.labels, this.safe, DEFAULT_LABEL_KEYS),
      containers: v.containers ?? [],
    });
    return this;
  }

  /** The engine's network or volume list could not be read. */
  objectsUnavailable(which: 'networks' | 'volumes', message: string): this {
    if (which === 'networks') this.networks = null;
    else this.volumes = null;
    this.problems.push({ source: which, message });
    return this;
  }

  /** A socket listening in the host's network namespace, with who holds it. */
  hostListener(s: HostListener): this {
    if (this.listeners === undefined || !this.listeners.available)
      this.listeners = { available: true, netns: 'net:[4026531840]', sockets: [] };
    this.listeners.sockets.push(s);
    return this;
  }

  /** The host's sockets could not be read (a problem says so when `problem`, else it is out of reach by setup). */
  hostListenersUnavailable(reason: string, problem = true): this {
    this.listeners = { available: false, reason };
    if (problem)
      this.problems.push({ source: 'listeners', message: `the host's listening sockets not read: ${reason}` });
    return this;
  }

  problem(problem: Problem): this {
    this.problems.push(problem);
    return this;
  }

  /** Entries as the ledger reader sees them: a JSON array written one entry a line, from line 2. */
  private ledgerRecords(): LedgerRecord[] {
    return this.ledgerEntries.map(({ entry }, i) => ledgerRecord(entry, i + 2, this.safe));
  }

  build(): Snapshot {
    return {
      schema: SNAPSHOT_SCHEMA,
      tool: { name: 'mesh-audit', version: '0.1.0' },
      takenAt: this.takenAt,
      host: { hostname: this.hostname },
      config: { managedRoots: this.managedRoots, labels: DEFAULT_LABEL_KEYS },
      docker: { endpoint: 'unix:///var/run/docker.sock', serverVersion: '26.1.5', apiVersion: '1.45', local: true },
      containers: [...this.containers].sort((a, b) => (a.name < b.name ? -1 : 1)),
      images: this.imagesView ?? {
        available: true,
        images: [...this.images.values()]
          .map((image) => ({ ...image, tags: Object.keys(this.tags).filter((t) => this.tags[t] === image.id) }))
          .sort((a, b) => (a.id < b.id ? -1 : 1)),
        tags: { ...this.tags },
      },
      daemon: this.daemonView,
      ...(this.networks !== undefined ? { networks: this.networks } : {}),
      ...(this.volumes !== undefined ? { volumes: this.volumes } : {}),
      ...(this.listeners !== undefined ? { hostListeners: this.listeners } : {}),
      files: [...this.files.values()].sort((a, b) => (a.path < b.path ? -1 : 1)),
      ledger: { ...this.ledgerMeta, entries: this.ledgerMeta.available ? this.ledgerRecords() : [] },
      problems: this.problems,
    };
  }
}
