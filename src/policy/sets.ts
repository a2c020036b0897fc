import type { FieldDocs } from './field-docs.js';
import { formerlyClaimedBy } from '../subjects/common.js';
import { CONTAINER_RUNTIME } from '../subjects/containers.js';
import { DAEMON } from '../subjects/daemon.js';
import { FILES, fileFactsDoc } from '../subjects/files.js';
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
  FileFacts,
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
 * run over, with its data interface (src/policy/subject-data.ts), the kind of its subjects, what a
 * finding about one is about, and what each of its fields means. Everything that names a set is made
 * from it: the `SubjectSetName` type, the pack schema's `subject` enum (src/policy/load.ts, written
 * into policies/policy.schema.json by `npm run docs`), the field docs the loader checks rules against
 * (src/policy/fields.ts), `rules docs` and docs/subject-sets.md. The builders that fill each set are keyed by it
 * in src/facts/subjects.ts (`SUBJECT_BUILDERS`, one per set), below it in the layering.
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

/** A file as another subject shows it (src/subjects/files.ts), its fields' docs held to FileFacts. */
const fileFacts = (of: string): { doc: string; fields: FieldDocs<FileFacts> } => fileFactsDoc(of);

const MESH_LABELS = {
  doc: 'what its mesh labels say',
  fields: {
    module: 'the `mesh.module` label, or null',
    resource: 'the `mesh.resource` label (a ledger id), or null',
    sources: 'files named by the `mesh.sources` label',
    source_digests: 'digests named by the `mesh.source-digests` label, in the order of `sources`',
  },
} as const;

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
    "the scanner's own container (it mounts the host by design): the hardening rules leave it out. Told by " +
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
  container_sources: subjectSet<ContainerSourceData>({
    kind: 'container-source',
    about: 'container',
    summary: 'each container paired with each file it was built from (named by its labels or the ledger)',
    fields: {
      container: {
        doc: 'the container',
        fields: {
          name: 'its name',
          container_id: 'the first 12 characters of its id',
          running: 'whether it runs',
          status: 'its state',
          env: 'the env it was created with, `{KEY: {digest, shape}}`',
          mesh: MESH_LABELS,
          claimed_by: 'ids of the ledger entries claiming it',
        },
      },
      source: { doc: 'the file it was built from', fields: { path: 'its host path', ...fileFacts('').fields } },
      index: 'its place in the `mesh.sources` label, or null',
      recorded_digest: 'the digest the `mesh.source-digests` label recorded for it, or null',
      named_by: 'what names it as a source: `label`, `ledger`',
      reading:
        "which consumer's reading of the file the container is judged by: `docker` (`--env-file`, literal), " +
        '`compose` (`env_file:`, dotenv-like) or `either` (nothing says)',
      reading_evidence:
        "why: a Compose label, the `mesh.env-file-syntax` label, the config's `envFileSyntax`, or no evidence",
      readings: {
        doc:
          'the file as each reading the consumer may have made gives it, `{KEY: {digest, shape}}` (null: not one of ' +
          "them, or the consumer refuses the file); keys a reading takes from its tool's environment are left out",
        fields: {
          docker: '`docker run --env-file`: values literal',
          podman:
            "`podman run --env-file`: as Docker's, but a BOM stays in the first key and keys with blanks are taken",
          compose:
            "Compose's `env_file:` (docker-compose 1.29): quotes and escapes removed, inline comments cut, " +
            'values trimmed',
        },
      },
      dropped_keys: 'keys the container holds that no env file it was built from names any more',
      dropped_evidence: 'for each dropped key, why it is known to have come from the file',
      inline_keys:
        "keys the container was given inline, not from a file: its Compose service's `environment:` (Compose-made) " +
        "or the claiming ledger entries' `env:` (`docker run -e`); never dropped keys",
      inline_from: 'where the inline keys are known from: `Compose file <paths>, service <name>`, `ledger entry <id>`',
    },
  }),
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
