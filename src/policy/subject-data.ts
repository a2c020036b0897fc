import type { SafeValue } from '../secret/value.js';
import type { ListeningSocket, PublishedPort } from '../snapshot/types.js';
import type { ContainerRuntimeFacts } from '../subjects/containers.js';
import type { FORMER_CLAIM, MESH_LABELS } from '../subjects/common.js';
import type { ContainerSourceData } from '../subjects/container-sources.js';
import type { DaemonData } from '../subjects/daemon.js';
import type { FILE_FACTS, FileData } from '../subjects/files.js';
import type { HostData } from '../subjects/host.js';
import type { ImageData } from '../subjects/images.js';
import type { LedgerEntryData } from '../subjects/ledger.js';
import type { MountData } from '../subjects/mounts.js';
import type { ListenerData } from '../subjects/listeners.js';
import type { NetworkData } from '../subjects/networks.js';
import type { ValueOf } from '../subjects/spec.js';
import type { VolumeData } from '../subjects/volumes.js';

/**
 * The data of each subject set: what a rule's `var` reads and a message's `{placeholder}` shows.
 * What each field means is written once, in the registry of subject sets (src/policy/sets.ts), which
 * the compiler holds to these interfaces (a field added here and not there fails the build); the
 * policy loader refuses a rule reading a field its set does not have, and `mesh-audit rules docs` and
 * docs/subject-sets.md list them.
 */

/** How far a listening address reaches: every interface, one address, or this host only (src/subjects/listeners.ts). */
export type Reach = ListenerData['reach'];
/**
 * What a container exposes, its widest reach: `none` when nothing listens beyond the container, and
 * `unknown` when it is on the host network and its sockets could not be read (then it may be exposed).
 */
export type Exposure = Reach | 'none' | 'unknown';

/** A ledger id that once claimed the resource and moved away (facts/history.ts): src/subjects/common.ts. */
export type FormerClaim = ValueOf<typeof FORMER_CLAIM>;

/** What the mesh labels of a container say (src/subjects/common.ts). */
export type MeshLabels = ValueOf<typeof MESH_LABELS>;

export interface Endpoints {
  all_interfaces: string[];
  address: string[];
  loopback: string[];
}

/**
 * A container's facts. How it runs (snapshot@2: HostConfig, Config, State, from the inspect), from
 * `privileged` to `entrypoint`, is declared in src/subjects/containers.ts (ContainerRuntimeFacts).
 */
export interface ContainerData extends ContainerRuntimeFacts {
  kind: 'container';
  id: string;
  host: string;
  name: string;
  container_id: string;
  image: string;
  status: string;
  running: boolean;
  network_mode: string;
  host_network: boolean;
  labels: Record<string, string>;
  mesh: MeshLabels;
  mesh_labelled: boolean;
  claimed_by: string[];
  claimed: boolean;
  origins: string[];
  holds: number[];
  env: Record<string, SafeValue>;
  ports: PublishedPort[];
  published_ports: number[];
  listening: ListeningSocket[] | null;
  open_ports: number[];
  exposed: boolean;
  exposure: Exposure;
  exposed_endpoints: string[];
  endpoints: Endpoints;
  proc_available: boolean;
  proc_reason: string | null;
  formerly_claimed_by: FormerClaim[];
  scanner_self: boolean;
  // snapshot@2: from the image list and the image, from /proc, from the daemon.
  image_tag_now: string | null;
  image_tag_moved: boolean;
  image_user: string;
  process_names: string[];
  daemon_security: { apparmor: boolean; selinux: boolean; no_new_privileges: boolean };
}

/** A mount as a container's `mount_list` shows it. */
export type ContainerMount = ContainerData['mount_list'][number];

/** An image a container uses (snapshot@2): declared in src/subjects/images.ts. */
export type { ImageData };

/** A path of the daemon's (socket, folder, file) with its owner and mode. */
export type DaemonPathFacts = DaemonData['registry_certs'][number];

/** The engine's daemon (snapshot@2), one subject per host: declared in src/subjects/daemon.ts. */
export type { DaemonData };

/** A file the snapshot holds: declared in src/subjects/files.ts. */
export type { FileData };

/**
 * A file as another subject sees it (a ledger entry's target, a container's source, a mount's host
 * file): src/subjects/files.ts FILE_FACTS.
 */
export type FileFacts = ValueOf<typeof FILE_FACTS>;

/** A ledger entry, valid or not: declared in src/subjects/ledger.ts. */
export type { LedgerEntryData };

/** The container of a container_sources subject: what a rule needs of it beside the source. */
export type SourcedContainer = ContainerSourceData['container'];

/** A container paired with a file it was built from: declared in src/subjects/container-sources.ts. */
export type { ContainerSourceData };

/** A mount of a container: declared in src/subjects/mounts.ts. */
export type { MountData };

/** The one host the snapshot is of: declared in src/subjects/host.ts. */
export type { HostData };

/** What the mesh labels of a network or volume say (the configured module and resource keys). */
export type ObjectMeshLabels = NetworkData['mesh'];

/** The `networks` and `volumes` sets' data: declared in src/subjects/networks.ts and volumes.ts. */
export type { NetworkData, VolumeData };

/** Who holds a listening socket: a container, a published port's proxy, a host process, or no process (the kernel). */
export type ListenerOwner = ListenerData['owner'];

/** A listening socket's data: declared in src/subjects/listeners.ts. */
export type { ListenerData };
