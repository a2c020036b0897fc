import { STRINGS } from './common.js';
import { FILE_FACTS, fileFactsDoc } from './files.js';
import {
  BOOLEAN,
  BOOLEAN_OR_NULL,
  INTEGER,
  listOf,
  made,
  orNull,
  read,
  setSpec,
  shapeOf,
  STRING,
  STRING_OR_NULL,
  type SnapshotPartOf,
  type SubjectDataOfSpec,
} from './spec.js';

/*
 * The `ledger` set (src/subjects/spec.ts): every ledger entry, valid or not. Its `read` entries are the
 * snapshot's ledger records (`ledger.entries`, src/collect/ledger.ts), in their order; the subject's
 * other fields are made from the record's `entry` and the rest of the snapshot (src/facts/ledger.ts).
 * What a ledger file's entry must look like is src/snapshot/ledger-schema.ts; the snapshot keeps of it
 * what is safe to show. The subject's fields, and their docs, keep the order of all entries.
 */

const ORIGIN = { enum: ['declared', 'found'] } as const;

/** A ledger entry as the snapshot keeps it: complete when valid, else only the fields read safely. */
const ENTRY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: STRING,
    type: STRING,
    target: STRING,
    origin: ORIGIN,
    module: STRING,
    holds: listOf({ type: 'integer', minimum: 0, maximum: 65535 }),
    digest: STRING,
    sources: STRINGS,
    applied_at: STRING,
    // Rules (id or name) the resource is allowed to break, with why (docs/ledger.md, "Exceptions in the ledger").
    allow: listOf(shapeOf({ rule: STRING, reason: STRING })),
    // Env keys a container entry gives inline (`docker run -e`), names only (docs/ledger.md).
    env: STRINGS,
    // Fields the scanner does not know. Every string in it a safe value: checked in src/snapshot/load.ts
    // (walked without recursion: it may nest deep).
    extra: { type: 'object' },
  },
} as const;

/** Made from the record's `entry`. */
const fromEntry = <const F extends string, const S extends Parameters<typeof made>[0]['schema']>(
  field: F,
  schema: S,
  doc: string,
) => made({ made: field, schema, doc, from: '`entry`' });

const ENTRIES = [
  made({
    made: 'adopted',
    schema: BOOLEAN,
    doc: 'whether the ledger says the node was adopted',
    from: "the snapshot's `ledger.adopted`",
  }),
  read({
    snapshot: 'line',
    schema: { type: 'integer', minimum: 1 },
    engine: 'the line of the ledger file the entry starts on (1-based)',
    subject: 'line',
    doc: 'the line the entry starts on',
  }),
  read({
    snapshot: 'valid',
    schema: BOOLEAN,
    engine: 'the ledger schema',
    subject: 'valid',
    doc: 'whether the entry is valid',
  }),
  read({ snapshot: 'errors', schema: STRINGS, engine: 'the ledger schema', subject: 'errors', doc: 'why it is not' }),
  read({
    snapshot: 'entry',
    schema: ENTRY,
    engine: 'the entry; an invalid one keeps only the fields that could be read safely',
    subject: null,
    doc: null,
  }),
  fromEntry('entry_id', STRING_OR_NULL, "the entry's `id`, or null"),
  fromEntry('type', STRING_OR_NULL, '`container`, `file`, …, or null'),
  fromEntry('target', STRING_OR_NULL, 'the container name or id, or the path, it claims'),
  fromEntry('origin', orNull(ORIGIN), '`declared` or `found`, or null'),
  fromEntry('module', STRING_OR_NULL, 'the module that wrote it, or null'),
  fromEntry('holds', listOf(INTEGER), 'ports it holds'),
  fromEntry('digest', STRING_OR_NULL, 'the digest it recorded, or null'),
  fromEntry('sources', STRINGS, 'files it was built from'),
  fromEntry('applied_at', STRING_OR_NULL, 'when it was applied, or null'),
  fromEntry('extra', { type: 'object' }, 'fields the scanner does not know (text made secret-safe)'),
  made({
    made: 'present',
    schema: BOOLEAN_OR_NULL,
    doc: 'whether its target is there: a container, file, network or volume (null: not known, or another type)',
    from: "`entry` and the snapshot's containers, files, networks and volumes",
  }),
  made({
    made: 'target_container',
    schema: orNull(shapeOf({ name: STRING, status: STRING, running: BOOLEAN })),
    doc: {
      doc: 'the container it claims, or null',
      fields: { name: 'its name', status: 'its state', running: 'whether it runs' },
    },
    from: "`entry` and the snapshot's containers",
  }),
  made({
    made: 'target_file',
    schema: orNull(FILE_FACTS),
    doc: fileFactsDoc('the file it claims (null: not a file entry)'),
    from: "`entry` and the snapshot's files",
  }),
  made({
    made: 'co_claimants',
    schema: STRINGS,
    doc: 'ids of the other valid entries claiming the same target',
    from: 'the ledger',
  }),
  made({
    made: 'former_targets',
    schema: listOf(shapeOf({ target: STRING, last_seen: STRING, changed_at: STRING })),
    doc: 'targets it had before, from history (`{target, last_seen, changed_at}`)',
    from: 'the history of the ledger (src/facts/history.ts)',
  }),
] as const;

export const LEDGER = setSpec({
  kind: 'ledger-entry',
  about: 'ledger-entry',
  summary: 'every ledger entry, valid or not, with whether its target is there and who else claims it',
  entries: ENTRIES,
});

/** One entry as read from the ledger, valid or not, as the snapshot holds it. */
export type LedgerRecord = SnapshotPartOf<typeof LEDGER.entries>;

/** A `ledger` subject's data. */
export type LedgerEntryData = SubjectDataOfSpec<typeof LEDGER>;
