import { BOOLEAN, listOf, made, mapOf, read, SAFE_VALUE, shapeOf, STRING, STRING_OR_NULL } from './spec.js';

/*
 * Forms and entries more than one spec has (src/subjects/*.ts): written once, so that the sets' types
 * and docs cannot drift apart.
 */

/** Labels whose values are safe values (a label may carry anything), `{key: {digest, shape}}`. */
export const SAFE_MAP = mapOf(SAFE_VALUE);
/** Text to text: the few labels kept as written (names). */
export const STRING_MAP = mapOf(STRING);
export const STRINGS = listOf(STRING);

/** A ledger id that once claimed the resource and moved away (src/facts/history.ts). */
export const FORMER_CLAIM = shapeOf({
  id: STRING,
  /** The id's target now, or null when the id is gone from the ledger. */
  current_target: STRING_OR_NULL,
  changed_at: STRING,
  last_seen: STRING,
});

export const formerlyClaimedBy = made({
  made: 'formerly_claimed_by',
  schema: listOf(FORMER_CLAIM),
  doc:
    'ledger ids that once claimed it and moved to another target ' +
    '(each `{id, current_target, changed_at, last_seen}`), from history',
  from: 'the history of the ledger (src/facts/history.ts)',
});

/** What the configured mesh module and resource labels of a network or volume say. */
export const objectMesh = made({
  made: 'mesh',
  schema: shapeOf({ module: STRING_OR_NULL, resource: STRING_OR_NULL }),
  doc: {
    doc: 'what its mesh labels say',
    fields: {
      module: 'the `mesh.module` label, or null',
      resource: 'the `mesh.resource` label (a ledger id), or null',
    },
  },
  from: '`identity`, under the configured label keys',
});

export const claimed = made({
  made: 'claimed',
  schema: BOOLEAN,
  doc: 'whether any ledger entry claims it',
  from: 'the ledger',
});

export const origins = made({
  made: 'origins',
  schema: STRINGS,
  doc: 'origins of the entries claiming it (`declared`, `found`)',
  from: 'the ledger',
});

/** What the mesh labels of a container say (the configured label keys). */
export const MESH_LABELS = shapeOf({
  module: STRING_OR_NULL,
  resource: STRING_OR_NULL,
  sources: STRINGS,
  source_digests: STRINGS,
});

export const MESH_LABELS_DOC = {
  doc: 'what its mesh labels say',
  fields: {
    module: 'the `mesh.module` label, or null',
    resource: 'the `mesh.resource` label (a ledger id), or null',
    sources: 'files named by the `mesh.sources` label',
    source_digests: 'digests named by the `mesh.source-digests` label, in the order of `sources`',
  },
} as const;

/**
 * The labels of a network or a volume, as both sets read them: every value secret-safe, the naming ones as written,
 * and what the mesh and Compose labels among them say.
 */
export const OBJECT_LABELS = [
  read({
    snapshot: 'labels',
    schema: SAFE_MAP,
    engine: 'Labels, every value secret-safe',
    subject: 'labels',
    doc: 'its labels, `{key: {digest, shape}}` (values secret-safe)',
  }),
  read({
    snapshot: 'identity',
    schema: STRING_MAP,
    engine: "Labels that name things, as written: the configured mesh module and resource labels, Compose's",
    subject: null,
    doc: null,
  }),
  objectMesh,
  made({
    made: 'mesh_labelled',
    schema: BOOLEAN,
    doc: 'whether it carries the mesh module or resource label',
    from: '`mesh`',
  }),
  made({
    made: 'compose_project',
    schema: STRING_OR_NULL,
    doc: 'its `com.docker.compose.project` label, or null',
    from: '`identity`',
  }),
] as const;
