import type { FieldDocs } from './field-docs.js';
import { formerlyClaimedBy, MESH_LABELS_DOC } from '../subjects/common.js';
import { CONTAINER_SOURCES } from '../subjects/container-sources.js';
import { CONTAINER_RUNTIME } from '../subjects/containers.js';
import { DAEMON } from '../subjects/daemon.js';
import { FILES } from '../subjects/files.js';
import { HOST } from '../subjects/host.js';
import { IMAGES } from '../subjects/images.js';
import { LEDGER } from '../subjects/ledger.js';
import { MOUNTS } from '../subjects/mounts.js';
import { LISTENERS } from '../subjects/listeners.js';
import { NETWORKS } from '../subjects/networks.js';
import { subjectDocsOf, type SetSpec, type Spec } from '../subjects/spec.js';
import { VOLUMES } from '../subjects/volumes.js';
import type {
  ContainerData,
  ContainerSourceData,
  DaemonData,
  FileData,
  HostData,
  ImageData,
  LedgerEntryData,
  ListenerData,
  MountData,
  NetworkData,
  VolumeData,
} from './subject-data.js';

/*
 * The registry of subject sets (ARCHITECTURE.md, "Where to add … a subject set"): each set a rule can
 * run over, with its data type (src/policy/subject-data.ts), the kind of its subjects, what a finding
 * about one is about, and what each of its fields means: an index of the sets' specs (src/subjects/,
 * `fromSpec`), but for the `containers` set's fields beside its runtime facts, written here.
 * Everything that names a set is made from it: the `SubjectSetName` type, the pack schema's `subject`
 * enum (src/policy/load.ts, written into policies/policy.schema.json by `npm run docs`), the field
 * docs the loader checks rules against (src/policy/fields.ts), `rules docs` and docs/subject-sets.md.
 * The builders that fill each set are keyed by it in src/facts/subjects.ts (`SUBJECT_BUILDERS`, one
 * per set), below it in the layering.
 */

/** The fields every subject's data has, documented once for every set. */
export interface SubjectBase {
  kind: string;
  id: string;
  host: string;
}

/** What a finding about a subject is about (its `subject.kind` in every format). */
export type AboutKind =
  | 'container'
  | 'file'
  | 'ledger-entry'
  | 'host'
  | 'image'
  | 'daemon'
  | 'network'
  | 'volume'
  | 'listener';

/** One entry of the registry: a set whose subjects' data is `D`. */
export interface SubjectSet<D extends SubjectBase = SubjectBase> {
  /** The `kind` field of its subjects' data. */
  kind: D['kind'];
  /** What a finding about one of its subjects is about (a mount's finding is about its container). */
  about: AboutKind;
  /** What the set holds, in one line. */
  summary: string;
  /** What each field means: one entry per field of `D` but the common `kind`, `id` and `host`. */
  fields: FieldDocs<Omit<D, keyof SubjectBase>>;
  /** Type only, never set: the data interface, which `SubjectDataOf` reads back. */
  readonly data?: D;
}

/** A registry entry whose data is `D`: its fields are held to `D`'s, no more, no fewer. */
export const subjectSet = <D extends SubjectBase>(set: SubjectSet<D>): SubjectSet<D> => set;

/** The registry entry of a set declared by its spec (src/subjects/): its fields' docs in the spec's order. */
const fromSpec = <const K extends string, const A extends AboutKind, const S extends Spec>(spec: SetSpec<K, A, S>) => ({
  kind: spec.kind,
  about: spec.about,
  summary: spec.summary,
  fields: subjectDocsOf(spec.entries),
});

const FORMERLY_CLAIMED_BY = formerlyClaimedBy.doc;

const MESH_LABELS = MESH_LABELS_DOC;

/**
 * What each field of the `containers` set means, those of how it runs from a spec of them
 * (src/subjects/containers.ts; a test gives one with a field added).
 */
export const containerFieldDocs = <const S extends Spec>(runtime: S) => ({
  name: 'container name (without the leading slash)',
  container_id: 'the first 12 characters of its id',
  image: 'the image it was created from',
  status: "the engine's state (`running`, `exited`, …)",
  running: 'whether it runs',
  network_mode: '`host`, `none`, `bridge`, a network name, …',
  host_network: 'whether it shares the host network',
  labels: 'its labels, `{key: value}`',
  mesh: MESH_LABELS,
  mesh_labelled: 'whether it carries any mesh label',
  claimed_by: 'ids of the valid ledger entries whose target is its name or id',
  claimed: 'whether any ledger entry claims it',
  origins: 'origins of the entries claiming it (`declared`, `found`)',
  holds: 'ports the entries claiming it hold',
  env: 'the env it was created with, `{KEY: {digest, shape}}`',
  ports: 'published ports (`{containerPort, protocol, hostIp, hostPort}`)',
  published_ports: 'host ports published',
  listening: 'sockets listening in it, from /proc (null: /proc not read; none when it is not running)',
  open_ports: 'ports open beyond the container: published, or listening on the host network',
  exposed: 'whether it is reachable from beyond this host (or may be: `exposure` unknown)',
  exposure: 'its widest reach: `all-interfaces`, `address`, `loopback`, `none`, `unknown`',
  exposed_endpoints: 'endpoints reachable from beyond this host (`address:port/protocol`)',
  endpoints: {
    doc: 'endpoints by reach',
    fields: { all_interfaces: 'on every interface', address: 'on one address', loopback: 'on this host only' },
  },
  proc_available: 'whether /proc of its process was read',
  proc_reason: 'why /proc was not read, or null',
  formerly_claimed_by: FORMERLY_CLAIMED_BY,
  ...subjectDocsOf(runtime),
  image_tag_now: 'the image id its image reference (a tag) names now, null when it is no tag or names no image',
  image_tag_moved: 'whether its tag now names another image than the one it runs (recreate it to run the new one)',
  image_user: 'the user its image names, `` for root',
  process_names:
    'names of its processes (its main process and every descendant), from /proc: none when it does not run',
  daemon_security: {
    doc: 'what the daemon enforces for every container',
    fields: {
      apparmor: "AppArmor is on (the daemon's security options)",
      selinux: 'SELinux is on',
      no_new_privileges: 'no-new-privileges for every container (daemon.json or `--no-new-privileges`)',
    },
  },
  scanner_self:
    "the scanner's own container (it mounts the host by design): the ownership rules (MA2001, MA2003) and " +
    'the hardening rules leave it out. Told by ' +
    'the engine id in its own /proc/self/mountinfo, never by a label another container could carry',
});

/** Every subject set, in the order `rules docs`, docs/subject-sets.md and the schema list them. */
export const SUBJECT_SETS = {
  containers: subjectSet<ContainerData>({
    kind: 'container',
    about: 'container',
    summary: 'every container, with its claims, exposure and history',
    fields: containerFieldDocs(CONTAINER_RUNTIME),
  }),
  files: subjectSet<FileData>(fromSpec(FILES)),
  ledger: subjectSet<LedgerEntryData>(fromSpec(LEDGER)),
  container_sources: subjectSet<ContainerSourceData>(fromSpec(CONTAINER_SOURCES)),
  mounts: subjectSet<MountData>(fromSpec(MOUNTS)),
  host: subjectSet<HostData>(fromSpec(HOST)),
  images: subjectSet<ImageData>(fromSpec(IMAGES)),
  daemon: subjectSet<DaemonData>(fromSpec(DAEMON)),
  networks: subjectSet<NetworkData>(fromSpec(NETWORKS)),
  volumes: subjectSet<VolumeData>(fromSpec(VOLUMES)),
  listeners: subjectSet<ListenerData>(fromSpec(LISTENERS)),
};

export type SubjectSetName = keyof typeof SUBJECT_SETS;

/** The data interface of each subject set, read back from the registry. */
export type SubjectDataOf = { [S in SubjectSetName]: DataOf<(typeof SUBJECT_SETS)[S]> };

/** The data of a registry entry. */
export type DataOf<E> = E extends SubjectSet<infer D> ? D : never;

/** Every set's name, in registry order. */
export const SUBJECT_SET_NAMES = Object.keys(SUBJECT_SETS) as readonly SubjectSetName[];

/** A table with one value per set, in registry order. */
export const bySet = <T>(of: (set: SubjectSetName) => T): Record<SubjectSetName, T> =>
  Object.fromEntries(SUBJECT_SET_NAMES.map((set) => [set, of(set)])) as Record<SubjectSetName, T>;
