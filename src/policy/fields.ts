import type { SubjectSetName } from './types.js';
import type { SubjectDataOf } from './subject.js';
import type { FileFacts } from './subject-data.js';

/**
 * The fields each subject set offers to rules and message templates, with what each means: the one
 * list the policy loader checks rules against (src/policy/load.ts), `mesh-audit rules docs` prints
 * and the README's "Subjects and their fields" shows. Its type is made from the interfaces in
 * subject-data.ts, so a field added to (or removed from) an interface and not here fails `tsc`; the
 * builders are held to the same interfaces.
 *
 * Data and one lookup only: the policy loader's field check (src/policy/field-check.ts) imports it,
 * the one import from policy/ into facts/.
 */

/**
 * What a field means. An object of fixed shape may also say what each of its fields means: then a
 * rule's path into it is checked too (`container.name`); a map (`labels`, `env`) or a list is not.
 */
export type FieldDoc = string | { doc: string; fields: Readonly<Record<string, FieldDoc>> };

type DocOf<V> =
  NonNullable<V> extends readonly unknown[]
    ? string
    : NonNullable<V> extends object
      ? string extends keyof NonNullable<V>
        ? string
        : string | { doc: string; fields: FieldDocs<NonNullable<V>> }
      : string;

/** One entry per field of T, no more, no fewer. */
export type FieldDocs<T> = { readonly [K in keyof T]-?: DocOf<T[K]> };

const COMMON = {
  kind: 'the kind of subject (`container`, `file`, `ledger-entry`, `container-source`, `mount`, `host`)',
  id: 'what findings about it are named by',
  host: "the host's name",
} as const;

const FORMERLY_CLAIMED_BY =
  'ledger ids that once claimed it and moved to another target (each `{id, current_target, changed_at, last_seen}`), ' +
  'from history';

const fileFacts = (of: string): { doc: string; fields: FieldDocs<FileFacts> } => ({
  doc: `${of}, as the snapshot has it`,
  fields: {
    known: 'whether the file is in the snapshot (false: every other fact is null)',
    exists: 'whether it is there (null: not read)',
    file_kind: '`file`, `directory`, `symlink`, `missing`, `unknown`, …',
    sha256: '`sha256:<hex>` of its contents',
    inode: 'its inode number',
    is_env: 'whether it was read as an env file',
    env: "its env entries as Compose's `env_file:` reads them, `{KEY: {digest, shape}}` (later lines win)",
    error: 'why it could not be read in full, or null',
  },
});

const MESH_LABELS = {
  doc: 'what its mesh labels say',
  fields: {
    module: 'the `mesh.module` label, or null',
    resource: 'the `mesh.resource` label (a ledger id), or null',
    sources: 'files named by the `mesh.sources` label',
    source_digests: 'digests named by the `mesh.source-digests` label, in the order of `sources`',
  },
} as const;

export const SUBJECT_FIELD_DOCS: { readonly [S in SubjectSetName]: FieldDocs<SubjectDataOf[S]> } = {
  containers: {
    ...COMMON,
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
  },
  files: {
    ...COMMON,
    path: 'host path',
    exists: 'whether it is there',
    file_kind: '`file`, `directory`, `symlink`, `missing`, `unknown`, …',
    size: 'size in bytes',
    mode: 'permission bits as octal text (`0640`)',
    uid: 'owner user id',
    gid: 'owner group id',
    mtime: 'last modified (RFC 3339)',
    inode: 'inode number',
    sha256: '`sha256:<hex>` of its contents (regular files)',
    link_target: 'where a symlink points',
    error: 'why it could not be read in full, or null',
    is_env: 'whether it was read as an env file',
    env: "its env entries as Compose's `env_file:` reads them, `{KEY: {digest, shape}}` (later lines win), or null",
    managed_root: 'the managed root it lies under, or null',
    claimed_by: 'ids of the valid ledger entries whose target it is',
    claimed: 'whether any ledger entry claims it',
    referenced_by: 'ids of the valid ledger entries naming it among their sources',
    mounted_by: 'names of the containers bind-mounting it',
    formerly_claimed_by: FORMERLY_CLAIMED_BY,
  },
  ledger: {
    ...COMMON,
    adopted: 'whether the ledger says the node was adopted',
    line: 'the line the entry starts on',
    valid: 'whether the entry is valid',
    errors: 'why it is not',
    entry_id: "the entry's `id`, or null",
    type: '`container`, `file`, …, or null',
    target: 'the container name or id, or the path, it claims',
    origin: '`declared` or `found`, or null',
    module: 'the module that wrote it, or null',
    holds: 'ports it holds',
    digest: 'the digest it recorded, or null',
    sources: 'files it was built from',
    applied_at: 'when it was applied, or null',
    extra: 'fields the scanner does not know (text made secret-safe)',
    present: 'whether its target is there (null: not known or not a container or file)',
    target_container: {
      doc: 'the container it claims, or null',
      fields: { name: 'its name', status: 'its state', running: 'whether it runs' },
    },
    target_file: fileFacts('the file it claims (null: not a file entry)'),
    co_claimants: 'ids of the other valid entries claiming the same target',
    former_targets: 'targets it had before, from history (`{target, last_seen, changed_at}`)',
  },
  container_sources: {
    ...COMMON,
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
      "which consumer's reading of the file the container is judged by: `docker` (`--env-file`, literal), `compose` " +
      '(`env_file:`, dotenv-like) or `either` (nothing says)',
    reading_evidence:
      "why: a Compose label, the `mesh.env-file-syntax` label, the config's `envFileSyntax`, or no evidence",
    readings: {
      doc:
        'the file as each reading the consumer may have made gives it, `{KEY: {digest, shape}}` (null: not one of ' +
        "them, or the consumer refuses the file); keys a reading takes from its tool's environment are left out",
      fields: {
        docker: '`docker run --env-file`: values literal',
        podman: "`podman run --env-file`: as Docker's, but a BOM stays in the first key and keys with blanks are taken",
        compose:
          "Compose's `env_file:` (docker-compose 1.29): quotes and escapes removed, inline comments cut, " +
          'values trimmed',
      },
    },
    dropped_keys: 'keys the container holds that no env file it was built from names any more',
    dropped_evidence: 'for each dropped key, why it is known to have come from the file',
  },
  mounts: {
    ...COMMON,
    container: {
      doc: 'the container',
      fields: {
        name: 'its name',
        running: 'whether it runs',
        status: 'its state',
        proc_available: 'whether /proc of its process was read',
      },
    },
    type: '`bind`, `volume`, `tmpfs`, …',
    source: 'host path (or volume name)',
    destination: 'path in the container',
    rw: 'whether it is writable',
    single_file: 'whether it is a bind mount of a single file',
    host_file: fileFacts('the host file (`env` not shown)'),
    seen: {
      doc: 'what the container sees of a single-file bind, from /proc, or null',
      fields: {
        inode: 'its inode',
        sha256: '`sha256:<hex>` of its contents',
        error: 'why it could not be read, or null',
      },
    },
  },
  host: {
    ...COMMON,
    hostname: "the host's name",
    node: 'the node the ledger names, or null',
    adopted: 'whether the ledger says the node was adopted',
    complete: 'whether everything was read',
    problems: 'how many things were not read',
    docker_available: 'whether the engine was read',
    ledger_available: 'whether the ledger was read',
    container_count: 'containers listed',
    file_count: 'files read',
    ledger_count: 'ledger entries',
  },
};

/** The top-level field names of each set, in the order above. */
export const SUBJECT_FIELDS: { readonly [S in SubjectSetName]: readonly string[] } = {
  containers: Object.keys(SUBJECT_FIELD_DOCS.containers),
  files: Object.keys(SUBJECT_FIELD_DOCS.files),
  ledger: Object.keys(SUBJECT_FIELD_DOCS.ledger),
  container_sources: Object.keys(SUBJECT_FIELD_DOCS.container_sources),
  mounts: Object.keys(SUBJECT_FIELD_DOCS.mounts),
  host: Object.keys(SUBJECT_FIELD_DOCS.host),
};

export const docText = (doc: FieldDoc): string => (typeof doc === 'string' ? doc : doc.doc);

/**
 * Why a path (`container.name`: ['container', 'name']) names no field of a set, or null when it does
 * (as far as the fields are known: into a map, a list or a value, any further step is allowed).
 * `heads` are names the scope has beside the fields (`let` names, `item`).
 */
export function unknownFieldOf(
  set: SubjectSetName,
  parts: readonly string[],
  heads: ReadonlySet<string> = new Set(),
): string | null {
  if (heads.has(parts[0]!)) return null;
  let fields: Readonly<Record<string, FieldDoc>> = SUBJECT_FIELD_DOCS[set];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!Object.hasOwn(fields, part)) {
      const within = i === 0 ? `subject set ${set}` : `${parts.slice(0, i).join('.')} (${set})`;
      const known = [...(i === 0 ? heads : []), ...Object.keys(fields)].sort();
      return `${within} has no field '${part}' (known: ${known.join(', ')})`;
    }
    const doc = fields[part]!;
    if (typeof doc === 'string') return null;
    fields = doc.fields;
  }
  return null;
}
