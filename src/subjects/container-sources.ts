import { MESH_LABELS, MESH_LABELS_DOC, SAFE_MAP, STRINGS } from './common.js';
import { FILE_FACTS, fileFactsDoc } from './files.js';
import {
  BOOLEAN,
  INTEGER_OR_NULL,
  listOf,
  made,
  mapOf,
  orNull,
  setSpec,
  shapeOf,
  STRING,
  STRING_OR_NULL,
  type SubjectDataOfSpec,
} from './spec.js';

/*
 * The `container_sources` set (src/subjects/spec.ts): each container paired with each file it was built
 * from. No part of the snapshot is its own: every field is made (src/facts/container-sources.ts) from
 * the container's record, its labels, the ledger, the file's record and history.
 */

const READING = orNull(SAFE_MAP);

const ENTRIES = [
  made({
    made: 'container',
    schema: shapeOf({
      name: STRING,
      container_id: STRING,
      running: BOOLEAN,
      status: STRING,
      env: SAFE_MAP,
      mesh: MESH_LABELS,
      claimed_by: STRINGS,
    }),
    doc: {
      doc: 'the container',
      fields: {
        name: 'its name',
        container_id: 'the first 12 characters of its id',
        running: 'whether it runs',
        status: 'its state',
        env: 'the env it was created with, `{KEY: {digest, shape}}`',
        mesh: MESH_LABELS_DOC,
        claimed_by: 'ids of the ledger entries claiming it',
      },
    },
    from: "the container's record, its labels and the ledger",
  }),
  made({
    made: 'source',
    schema: shapeOf({ path: STRING, ...FILE_FACTS.properties }, ['env', 'error']),
    doc: { doc: 'the file it was built from', fields: { path: 'its host path', ...fileFactsDoc('').fields } },
    from: "the file's record",
  }),
  made({
    made: 'index',
    schema: INTEGER_OR_NULL,
    doc: 'its place in the `mesh.sources` label, or null',
    from: 'the labels',
  }),
  made({
    made: 'recorded_digest',
    schema: STRING_OR_NULL,
    doc: 'the digest the `mesh.source-digests` label recorded for it, or null',
    from: 'the labels',
  }),
  made({
    made: 'named_by',
    schema: listOf({ enum: ['label', 'ledger'] }),
    doc: 'what names it as a source: `label`, `ledger`',
    from: 'the labels and the ledger',
  }),
  made({
    made: 'reading',
    schema: { enum: ['docker', 'compose', 'either'] },
    doc:
      "which consumer's reading of the file the container is judged by: `docker` (`--env-file`, literal), " +
      '`compose` (`env_file:`, dotenv-like) or `either` (nothing says)',
    from: "the labels and the scan's `envFileSyntax` (src/facts/env-readings.ts)",
  }),
  made({
    made: 'reading_evidence',
    schema: STRING,
    doc: "why: a Compose label, the `mesh.env-file-syntax` label, the config's `envFileSyntax`, or no evidence",
    from: 'as `reading`',
  }),
  made({
    made: 'readings',
    schema: shapeOf({ docker: READING, podman: READING, compose: READING }),
    doc: {
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
    from: "the file's `env` and `envLiteral`",
  }),
  made({
    made: 'dropped_keys',
    schema: STRINGS,
    doc: 'keys the container holds that no env file it was built from names any more',
    from: "the container's env, the file's readings and history",
  }),
  made({
    made: 'dropped_evidence',
    schema: mapOf(STRING),
    doc: 'for each dropped key, why it is known to have come from the file',
    from: 'as `dropped_keys`',
  }),
  made({
    made: 'inline_keys',
    schema: STRINGS,
    doc:
      "keys the container was given inline, not from a file: its Compose service's `environment:` (Compose-made) " +
      "or the claiming ledger entries' `env:` (`docker run -e`); never dropped keys",
    from: "the Compose file's record and the ledger (src/facts/inline-env.ts)",
  }),
  made({
    made: 'inline_from',
    schema: STRINGS,
    doc: 'where the inline keys are known from: `Compose file <paths>, service <name>`, `ledger entry <id>`',
    from: 'as `inline_keys`',
  }),
] as const;

export const CONTAINER_SOURCES = setSpec({
  kind: 'container-source',
  about: 'container',
  summary: 'each container paired with each file it was built from (named by its labels or the ledger)',
  entries: ENTRIES,
});

/** A `container_sources` subject's data. */
export type ContainerSourceData = SubjectDataOfSpec<typeof CONTAINER_SOURCES>;
