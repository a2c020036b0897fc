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
 * The `volumes` set (src/subjects/spec.ts): each volume the engine lists (`GET /volumes`), the
 * snapshot's `volumes` records (src/collect/engine-objects.ts) and the subject's fields
 * (src/facts/host-objects.ts buildVolumes). The records keep the order of the `read` entries; the
 * subject's fields, and their docs, the order of all entries.
 */

const ENTRIES = [
  read({
    snapshot: 'name',
    schema: { type: 'string', minLength: 1 },
    engine: 'Name',
    subject: 'name',
    doc: 'the volume name (what findings are named by)',
  }),
  read({ snapshot: 'driver', schema: STRING, engine: 'Driver', subject: 'driver', doc: '`local`, or a plugin' }),
  read({ snapshot: 'scope', schema: STRING, engine: 'Scope', subject: 'scope', doc: '`local` or `global`' }),
  read({
    snapshot: 'mountpoint',
    schema: STRING,
    engine: 'Mountpoint',
    subject: 'mountpoint',
    doc: 'where its data lives on the host',
  }),
  read({
    snapshot: 'created',
    schema: STRING_OR_NULL,
    engine: 'CreatedAt; null when the engine gives none',
    subject: 'created',
    doc: 'when the engine created it (RFC 3339), or null',
  }),
  ...OBJECT_LABELS,
  made({
    made: 'anonymous',
    schema: BOOLEAN,
    doc:
      "whether it is anonymous (a 64-hex name, or Docker's `com.docker.volume.anonymous` label): made for a " +
      'container, never claimed by name, never a finding',
    from: '`name` and `labels`',
  }),
  read({
    snapshot: 'containers',
    schema: STRINGS,
    engine: "the containers' inspects: names of those that mount it, running or not",
    subject: 'used_by',
    doc: 'names of the containers that mount it, running or not',
  }),
  made({
    made: 'used_by_claimed',
    schema: STRINGS,
    doc: 'those of them a ledger entry claims',
    from: '`used_by` and the ledger',
  }),
  made({
    made: 'claimed_by',
    schema: STRINGS,
    doc: 'ids of the valid `volume` ledger entries whose target is its name',
    from: 'the ledger',
  }),
  claimed,
  origins,
  formerlyClaimedBy,
] as const;

export const VOLUMES = setSpec({
  kind: 'volume',
  about: 'volume',
  summary: 'every volume the engine lists, with the containers mounting it, its claims and history',
  entries: ENTRIES,
});

/** A volume as the snapshot holds it. */
export type VolumeRecord = SnapshotPartOf<typeof VOLUMES.entries>;

/** A `volumes` subject's data. */
export type VolumeData = SubjectDataOfSpec<typeof VOLUMES>;
