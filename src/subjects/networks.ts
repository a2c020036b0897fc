import { claimed, formerlyClaimedBy, OBJECT_LABELS, origins, STRINGS } from './common.js';
import {
  BOOLEAN,
  made,
  read,
  setSpec,
  STRING,
  STRING_OR_NULL,
  type SnapshotPartOf,
  type SubjectDataOfSpec,
} from './spec.js';

/*
 * The `networks` set (src/subjects/spec.ts): each network the engine lists (`GET /networks`), the
 * snapshot's `networks` records (src/collect/engine-objects.ts) and the subject's fields
 * (src/facts/host-objects.ts buildNetworks). The records keep the order of the `read` entries; the
 * subject's fields, and their docs, the order of all entries.
 */

const ENTRIES = [
  read({ snapshot: 'id', schema: STRING, engine: 'Id', subject: null, doc: null }),
  read({
    snapshot: 'name',
    schema: { type: 'string', minLength: 1 },
    engine: 'Name',
    subject: 'name',
    doc: 'the network name (what findings are named by)',
  }),
  made({
    made: 'network_id',
    schema: STRING,
    doc: 'the first 12 characters of its id',
    from: '`id`',
  }),
  read({
    snapshot: 'driver',
    schema: STRING,
    engine: 'Driver',
    subject: 'driver',
    doc: '`bridge`, `host`, `null`, `macvlan`, `overlay`, …',
  }),
  read({ snapshot: 'scope', schema: STRING, engine: 'Scope', subject: 'scope', doc: '`local`, `swarm`, `global`' }),
  read({
    snapshot: 'internal',
    schema: BOOLEAN,
    engine: 'Internal',
    subject: 'internal',
    doc: 'whether it was created `--internal` (no route out)',
  }),
  read({
    snapshot: 'created',
    schema: STRING_OR_NULL,
    engine: 'Created; null when the engine gives none',
    subject: 'created',
    doc: 'when the engine created it (RFC 3339), or null',
  }),
  ...OBJECT_LABELS,
  made({
    made: 'default',
    schema: BOOLEAN,
    doc:
      "whether it is one of the engine's own networks (`bridge`, `host`, `none`, Podman's `podman`), " +
      'never a finding',
    from: '`name`',
  }),
  read({
    snapshot: 'containers',
    schema: STRINGS,
    engine: "the containers' inspects: names of those attached to it, running or not",
    subject: 'containers',
    doc: 'names of the containers attached to it, running or not',
  }),
  made({
    made: 'claimed_by',
    schema: STRINGS,
    doc: 'ids of the valid `network` ledger entries whose target is its name or id',
    from: 'the ledger',
  }),
  claimed,
  origins,
  formerlyClaimedBy,
] as const;

export const NETWORKS = setSpec({
  kind: 'network',
  about: 'network',
  summary: 'every network the engine lists, with its claims and history',
  entries: ENTRIES,
});

/** A network as the snapshot holds it. */
export type NetworkRecord = SnapshotPartOf<typeof NETWORKS.entries>;

/** A `networks` subject's data. */
export type NetworkData = SubjectDataOfSpec<typeof NETWORKS>;
