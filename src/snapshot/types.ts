import type { SafeValue } from '../secret/value.js';
import type { FileKind } from '../fs/file-kind.js';
import type { ContainerRuntime } from '../subjects/containers.js';
import type { DaemonInfo } from '../subjects/daemon.js';
import type { EnvEntry, FileRecord } from '../subjects/files.js';
import type { HostInfo } from '../subjects/host.js';
import type { ImageRecord } from '../subjects/images.js';
import type { LedgerRecord } from '../subjects/ledger.js';
import type { Mount } from '../subjects/mounts.js';
import type { HostListener } from '../subjects/listeners.js';
import type { NetworkRecord } from '../subjects/networks.js';
import type { VolumeRecord } from '../subjects/volumes.js';

/** The snapshot layout this scanner writes; it reads @1 too, migrated (src/snapshot/migrate.ts). */
export const SNAPSHOT_SCHEMA = 'mesh-audit/snapshot@2';
/** The first layout: no images, no daemon, no container runtime facts. Still read (history, saved snapshots). */
export const SNAPSHOT_SCHEMA_V1 = 'mesh-audit/snapshot@1';

/** Everything one scan saw on one host: plain JSON, secret-safe, can be saved and evaluated later. */
export interface Snapshot {
  schema: typeof SNAPSHOT_SCHEMA;
  tool: { name: string; version: string };
  /** RFC 3339 time the snapshot was taken. */
  takenAt: string;
  host: HostInfo;
  config: ScanConfig;
  /** null when the engine was not read (see problems). */
  docker: DockerInfo | null;
  containers: Container[];
  /** Every image a container uses, and which image each tag names now (snapshot@2). */
  images: ImagesView;
  /** The engine's daemon: its settings, daemon.json, its command line, its sockets and folders (snapshot@2). */
  daemon: DaemonView;
  files: FileRecord[];
  ledger: Ledger;
  /**
   * The engine's networks (`GET /networks`) and volumes (`GET /volumes`); null when the engine did not
   * answer the list (a problem says why), absent in snapshots made before they were read: unknown both.
   */
  networks?: NetworkRecord[] | null;
  volumes?: VolumeRecord[] | null;
  /** The sockets listening in the host's network namespace, with who holds each; absent: not read (older snapshots). */
  hostListeners?: HostListenerView;
  /** What could not be read while collecting; a non-empty list makes the scan incomplete. */
  problems: Problem[];
  /** Worth knowing, not a failure: a container gone between list and inspect, /proc not readable by design. */
  notes?: Problem[];
  /**
   * The scanner's memory as of this snapshot, carried forward from the snapshots before it, so that
   * pruning history never loses it. Absent in snapshots made before it existed.
   */
  memory?: Memory;
}

export interface Memory {
  /** Every target a ledger id has had and no longer has, while that target is still on the host. */
  formerTargets: RememberedTarget[];
}

/** A target an id moved away from (or left the ledger at): kept until the target is gone from the host. */
export interface RememberedTarget {
  id: string;
  type: string;
  target: string;
  /** When the move was first seen (the new entry's applied_at where the ledger has it). */
  movedAt: string;
  /** When the ledger last named this target for the id. */
  lastClaimed: string;
  /** When the target was last seen present on the host (null: never seen by the scanner). */
  lastSeenPresent: string | null;
}

/** The host the snapshot is of: declared in src/subjects/host.ts (HOST). */
export type { HostInfo };

export interface ScanConfig {
  managedRoots: string[];
  labels: LabelKeys;
  /**
   * How the mesh's own containers read their env files when no label says (docs/ledger.md, "Env files"):
   * `docker` (`--env-file`, literal), `compose` (`env_file:`, dotenv-like) or `auto` (either reading
   * is no drift). Absent in snapshots made before it existed: `auto`.
   */
  envFileSyntax?: EnvFileSyntax;
}

export type EnvFileSyntax = 'docker' | 'compose' | 'auto';

export interface LabelKeys {
  module: string;
  resource: string;
  sources: string;
  sourceDigests: string;
  /**
   * The label saying which reading made a container's env (`docker` or `compose`); absent in older snapshots: the
   * default.
   */
  envFileSyntax?: string;
}

export const DEFAULT_LABEL_KEYS: LabelKeys = {
  module: 'mesh.module',
  resource: 'mesh.resource',
  sources: 'mesh.sources',
  sourceDigests: 'mesh.source-digests',
  envFileSyntax: 'mesh.env-file-syntax',
};

/**
 * What answered the Docker Engine API: Docker (moby) or Podman's compatible service, as the engine
 * names itself among the Components of `GET /version`; `unknown` when it names neither.
 */
export type EngineKind = 'docker' | 'podman' | 'unknown';

export interface DockerInfo {
  endpoint: string;
  serverVersion: string;
  apiVersion: string;
  /**
   * Which engine it is (it decides which env keys the engine writes into a container by itself:
   * src/engine/engine-env.ts). Absent in snapshots made before it was recorded: read as `unknown`.
   */
  kind?: EngineKind;
  /** Whether /proc of the containers' processes could be read from here (local engine, root, same pid namespace). */
  local: boolean;
}

export interface Container {
  id: string;
  /** Without the leading slash Docker puts in front of it. */
  name: string;
  image: string;
  imageId?: string;
  created: string;
  labels: Record<string, string>;
  state: ContainerState;
  /** Config.Env: what the container was created with. */
  env: Record<string, SafeValue>;
  /**
   * The image's Config.Env, under the same HMAC key as `env`: present when the image was read, absent
   * when not (then a key the container holds and its composed file no longer names is unknown drift).
   */
  imageEnv?: Record<string, SafeValue>;
  /** HostConfig.NetworkMode: `host`, `none`, `bridge`, `container:<id>`, a network name. */
  networkMode: string;
  mounts: Mount[];
  /** Published ports (NetworkSettings.Ports, or HostConfig.PortBindings when not running). */
  ports: PublishedPort[];
  proc: ProcView;
  /**
   * What HostConfig, Config and State say of how it runs (snapshot@2). Absent in a snapshot made before
   * it was recorded (a migrated snapshot@1): then every fact read from it is unknown, never false.
   */
  runtime?: ContainerRuntime;
}

/**
 * A container's security and runtime settings and its health, from the one inspect already made:
 * declared, with where each comes from, in src/subjects/containers.ts (CONTAINER_RUNTIME).
 */
export type { ContainerRuntime };

/**
 * Labels of a network or volume: every value secret-safe (a label may carry anything), and beside them
 * the few that name things kept as written (`identity`): the configured mesh module and resource
 * labels, and Compose's project, network and volume labels.
 */
export interface ObjectLabels {
  labels: Record<string, SafeValue>;
  identity: Record<string, string>;
}

/**
 * A network (`GET /networks`) or a volume (`GET /volumes`) as the snapshot holds it: declared, with where
 * each value comes from, in src/subjects/networks.ts (NETWORKS) and volumes.ts (VOLUMES).
 */
export type { NetworkRecord, VolumeRecord };

/** The host's listening sockets; unavailable (with the reason) rather than guessed. */
export type HostListenerView =
  | { available: false; reason: string }
  | {
      available: true;
      /** `net:[inode]` of the host's network namespace; `unknown` when init's namespace link is closed to the scan. */
      netns: string;
      sockets: HostListener[];
      /**
       * The executable paths `service` entries name, each with its symlinks followed under the root
       * (src/collect/host-path.ts): `resolved`, or `unread` (not known), neither when nothing is there. Absent in
       * older snapshots: entries are then matched by the path as written.
       */
      executables?: ServiceExecutable[];
    };

/** A `service` entry's executable path as the host resolves it (HostListenerView.executables). */
export interface ServiceExecutable {
  path: string;
  resolved?: string;
  unread?: string;
}

/**
 * A socket listening in the host's network namespace, with the process holding it (null: none seen):
 * declared, with where each value comes from, in src/subjects/listeners.ts (LISTENERS).
 */
export type { HostListener };

/** The process holding a host socket. */
export type ListenerHolder = NonNullable<HostListener['holder']>;

export interface ContainerState {
  status: string;
  running: boolean;
  pid: number;
  startedAt: string | null;
  finishedAt: string | null;
  restartCount: number;
}

/** A container's mount: declared, with where each value comes from, in src/subjects/mounts.ts (MOUNTS). */
export type { Mount };

/** A part of the host read as a whole: what it holds, or why it was not read. */
export type Collected<T> = ({ available: true } & T) | { available: false; reason: string };

/** Images in use, by id, and which image each tag of the engine names (`GET /images/json`, read once). */
export type ImagesView = Collected<{
  images: ImageRecord[];
  /** Every tag the engine knows, as it lists them (`busybox:latest`, `localhost/app:1`), to the image id it names. */
  tags: Record<string, string>;
}>;

/** An image in use as the snapshot holds it: declared, with where each value comes from, in src/subjects/images.ts. */
export type { ImageRecord };

/** Config.Healthcheck of an image. */
export type ImageHealthcheck = NonNullable<ImageRecord['healthcheck']>;

/** The daemon, each part read on its own (one may be read when another is not). */
export interface DaemonView {
  /** `GET /info` and `/version`. */
  info: Collected<DaemonInfo>;
  /** `/etc/docker/daemon.json` (under --root); `exists: false` and `{}` when there is none. */
  config: Collected<{ exists: boolean; settings: Record<string, unknown> }>;
  /** dockerd's command line, from /proc (not running: `running: false`). */
  process: Collected<{ running: boolean; args: SafeValue[]; flags: Record<string, DaemonSettingValue[]> }>;
  /** Owner and mode of the daemon's sockets, folders and files (stat, never read). */
  paths: DaemonPath[];
}

/** A setting's value: booleans, numbers and known harmless text as they are, any other text secret-safe. */
export type DaemonSettingValue = string | number | boolean | SafeValue;

/** What `GET /info` and `/version` say of the daemon: declared in src/subjects/daemon.ts (DAEMON). */
export type { DaemonInfo };

export interface DaemonPath {
  /** What it is: `docker_socket`, `containerd_socket`, `etc_docker`, `daemon_json`, … */
  role: string;
  /** Host path. */
  path: string;
  /** null: it could not be looked at (`error` says why). */
  exists: boolean | null;
  kind?: FileKind;
  mode?: string;
  uid?: number;
  gid?: number;
  /** The owner's and group's names on the host (its /etc/passwd and /etc/group), when they have one. */
  user?: string;
  group?: string;
  error?: string;
}

export interface PublishedPort {
  containerPort: number;
  protocol: 'tcp' | 'udp' | 'sctp';
  hostIp: string;
  hostPort: number;
}

/** What /proc shows of the container's main process; unavailable (with the reason) rather than guessed. */
export type ProcView =
  | { available: false; reason: string }
  | {
      available: true;
      env: Record<string, SafeValue>;
      listening: ListeningSocket[];
      boundFiles: BoundFile[];
      /**
       * The names (comm) of its main process and every descendant, each once: what runs in it, read
       * without exec (snapshot@2; absent before).
       */
      processes?: string[];
    };

export interface ListeningSocket {
  protocol: 'tcp' | 'tcp6' | 'udp' | 'udp6';
  address: string;
  port: number;
}

/** A single-file bind mount as the container sees it against the host path. */
export interface BoundFile {
  destination: string;
  source: string;
  inode: number | null;
  sha256: string | null;
  error?: string;
}

export type { FileKind };

/**
 * A file as the snapshot holds it (host path, what lstat says, its contents' digest, and, for an env
 * file, its entries under each reading; for a Compose file, what its services give inline): declared,
 * with where each value comes from, in src/subjects/files.ts (FILES).
 */
export type { EnvEntry, FileRecord };

/** The literal (`--env-file`) reading of an env file. */
export type LiteralEnv = NonNullable<FileRecord['envLiteral']>;

/** What a Compose file says of its services' inline env, or why it could not be read as one. */
export type ComposeFacts = NonNullable<FileRecord['compose']>;

/** A Compose service's inline env keys and the service it `extends:`. */
export type ComposeService = Extract<ComposeFacts, { services: unknown }>['services'][string];

export interface Ledger {
  path: string;
  available: boolean;
  node?: string;
  adopted?: boolean;
  entries: LedgerRecord[];
}

/**
 * One entry as read from the ledger, valid or not; invalid ones keep only what is safe to show: declared,
 * with where each value comes from, in src/subjects/ledger.ts (LEDGER).
 */
export type { LedgerRecord };

/** A ledger entry as the snapshot keeps a valid one: its `id`, `type` and `target` there. */
export type LedgerEntry = LedgerRecord['entry'] & { id: string; type: string; target: string };

/** A rule a ledger entry's resource is allowed to break, and why. */
export type LedgerAllowance = NonNullable<LedgerEntry['allow']>[number];

export interface Problem {
  source:
    | 'docker'
    | 'proc'
    | 'files'
    | 'ledger'
    | 'history'
    | 'config'
    | 'images'
    | 'daemon'
    | 'networks'
    | 'volumes'
    | 'listeners';
  /** What was not read: a container name, a path. */
  subject?: string;
  message: string;
}
