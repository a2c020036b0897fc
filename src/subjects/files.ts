import { claimed, formerlyClaimedBy, SAFE_MAP, STRINGS } from './common.js';
import {
  BOOLEAN,
  BOOLEAN_OR_NULL,
  defRef,
  INTEGER_OR_NULL,
  INTEGER,
  listOf,
  made,
  mapOf,
  orNull,
  read,
  SAFE_VALUE,
  setSpec,
  shapeOf,
  STRING,
  STRING_OR_NULL,
  type SnapshotPartOf,
  type SubjectDataOfSpec,
  type ValueOf,
} from './spec.js';

/*
 * The `files` set (src/subjects/spec.ts): each file the snapshot holds (its `files` records,
 * src/collect/files.ts; the same in snapshot@1 and @2) and the subject's fields (src/facts/files.ts).
 * A value the record may lack (`optional`) is null in the subject's field then. The records keep the
 * order of the `read` entries; the subject's fields, and their docs, the order of all entries.
 */

/** What a path is on disk (`missing`: nothing there); src/fs/file-kind.ts FileKind is the same list. */
export const FILE_KIND = {
  enum: ['file', 'directory', 'symlink', 'fifo', 'socket', 'block-device', 'char-device', 'missing', 'unknown'],
} as const;

/**
 * An env file's entries under one reading (the snapshot's `#/$defs/envEntries`): no `value` for a key
 * written without `=` (the reading tool passes its own variable through, or nothing); `caller` when the
 * value depends on the reading tool's environment (`${VAR}` of a variable the file does not set).
 */
export const ENV_ENTRIES = listOf(
  shapeOf(
    {
      key: { type: 'string', minLength: 1 },
      value: SAFE_VALUE,
      line: { type: 'integer', minimum: 1 },
      caller: { const: true },
    },
    ['value', 'caller'],
  ),
);
const ENV = defRef('envEntries', ENV_ENTRIES);

/** A Compose file's services' inline env (key names only), or why it could not be read as one. */
const COMPOSE = {
  oneOf: [
    shapeOf({
      services: mapOf(
        shapeOf(
          {
            environment: STRINGS,
            extends: shapeOf({ service: STRING, file: STRING }, ['file']),
          },
          ['extends'],
        ),
      ),
    }),
    shapeOf({ error: STRING }),
  ],
} as const;

const optional = true;

/**
 * A file as another subject sees it (a ledger entry's target, a container's source, a mount's host
 * file). `known` false: the file was not in the snapshot, and every other fact is null. `env` is absent
 * where the subject does not show it (a mount's host file); `error` when the file was not in the snapshot.
 */
export const FILE_FACTS = shapeOf(
  {
    known: BOOLEAN,
    exists: BOOLEAN_OR_NULL,
    file_kind: orNull(FILE_KIND),
    sha256: STRING_OR_NULL,
    inode: INTEGER_OR_NULL,
    is_env: BOOLEAN,
    env: orNull(SAFE_MAP),
    error: STRING_OR_NULL,
  },
  ['env', 'error'],
);

/** What the facts of a file another subject shows mean (`of`: the file, as that subject has it). */
export const fileFactsDoc = (of: string) => ({
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

const ENTRIES = [
  read({
    snapshot: 'path',
    schema: { type: 'string', pattern: '^/' },
    engine: 'host path',
    subject: 'path',
    doc: 'host path',
  }),
  made({ made: 'exists', schema: BOOLEAN, doc: 'whether it is there', from: '`kind` is not `missing`' }),
  read({
    snapshot: 'kind',
    schema: FILE_KIND,
    engine: 'lstat',
    subject: 'file_kind',
    doc: '`file`, `directory`, `symlink`, `missing`, `unknown`, …',
  }),
  read({
    snapshot: 'size',
    schema: { type: 'integer', minimum: 0 },
    engine: 'lstat',
    subject: 'size',
    doc: 'size in bytes',
    optional,
  }),
  read({
    snapshot: 'mode',
    schema: { type: 'string', pattern: '^0[0-7]{3,4}$' },
    engine: 'lstat: the permission bits as octal text',
    subject: 'mode',
    doc: 'permission bits as octal text (`0640`)',
    optional,
  }),
  read({ snapshot: 'uid', schema: INTEGER, engine: 'lstat', subject: 'uid', doc: 'owner user id', optional }),
  read({ snapshot: 'gid', schema: INTEGER, engine: 'lstat', subject: 'gid', doc: 'owner group id', optional }),
  read({
    snapshot: 'mtime',
    schema: STRING,
    engine: 'lstat',
    subject: 'mtime',
    doc: 'last modified (RFC 3339)',
    optional,
  }),
  read({ snapshot: 'inode', schema: INTEGER, engine: 'lstat', subject: 'inode', doc: 'inode number', optional }),
  read({
    snapshot: 'sha256',
    schema: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
    engine: 'its contents (regular files)',
    subject: 'sha256',
    doc: '`sha256:<hex>` of its contents (regular files)',
    optional,
  }),
  read({
    snapshot: 'linkTarget',
    schema: STRING,
    engine: 'readlink; never followed out of a root',
    subject: 'link_target',
    doc: 'where a symlink points',
    optional,
  }),
  made({
    made: 'error',
    schema: STRING_OR_NULL,
    doc: 'why it could not be read in full, or null',
    from: '`error`',
  }),
  made({ made: 'is_env', schema: BOOLEAN, doc: 'whether it was read as an env file', from: '`env`' }),
  made({
    made: 'env',
    schema: orNull(SAFE_MAP),
    doc: "its env entries as Compose's `env_file:` reads them, `{KEY: {digest, shape}}` (later lines win), or null",
    from: '`env`',
  }),
  read({
    snapshot: 'env',
    schema: ENV,
    engine: "an env file: its entries as Compose's `env_file:` reads them (dotenv-like; src/collect/envfile.ts)",
    subject: null,
    doc: null,
    optional,
  }),
  read({
    snapshot: 'envLiteral',
    schema: shapeOf({ entries: ENV, bom: { const: true }, dockerRefuses: STRING }, ['bom', 'dockerRefuses']),
    engine:
      'an env file: its entries as `docker run --env-file` and `podman run --env-file` read them (values ' +
      "literal; Podman's CLI keeps a BOM, Docker's drops it), and why Docker's CLI refuses it",
    subject: null,
    doc: null,
    optional,
  }),
  read({
    snapshot: 'compose',
    schema: COMPOSE,
    engine: "a container's Compose file: what its services give inline (src/collect/compose-file.ts), names only",
    subject: null,
    doc: null,
    optional,
  }),
  read({ snapshot: 'error', schema: STRING, engine: 'why it could not be read', subject: null, doc: null, optional }),
  made({
    made: 'managed_root',
    schema: STRING_OR_NULL,
    doc: 'the managed root it lies under, or null',
    from: "the scan's managed roots",
  }),
  made({
    made: 'claimed_by',
    schema: STRINGS,
    doc: 'ids of the valid ledger entries whose target it is',
    from: 'the ledger',
  }),
  claimed,
  made({
    made: 'referenced_by',
    schema: STRINGS,
    doc: 'ids of the valid ledger entries naming it among their sources',
    from: 'the ledger',
  }),
  made({
    made: 'mounted_by',
    schema: STRINGS,
    doc: 'names of the containers bind-mounting it',
    from: "the containers' mounts",
  }),
  formerlyClaimedBy,
] as const;

export const FILES = setSpec({
  kind: 'file',
  about: 'file',
  summary: 'every file the snapshot holds, with what claims, names and mounts it',
  entries: ENTRIES,
});

/** A file as the snapshot holds it. */
export type FileRecord = SnapshotPartOf<typeof FILES.entries>;

/** One entry of an env file under one reading. */
export type EnvEntry = ValueOf<typeof ENV_ENTRIES>[number];

/** A `files` subject's data. */
export type FileData = SubjectDataOfSpec<typeof FILES>;
