import { FILE_FACTS, fileFactsDoc } from './files.js';
import {
  BOOLEAN,
  INTEGER_OR_NULL,
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
 * The `mounts` set (src/subjects/spec.ts): every mount of every container. Its `read` entries are the
 * snapshot's mount records (each container's `mounts`, from its inspect's Mounts: src/collect/inspect.ts),
 * in their order; the subject's other fields are made from its container, the host file and /proc
 * (src/facts/mounts.ts). The subject's fields, and their docs, keep the order of all entries.
 */

/** The values snapshot@2 added to a mount record (src/snapshot/schema.ts leaves them out of @1's). */
export const MOUNT_SINCE_V2: readonly string[] = ['name', 'propagation', 'mode'];

const ENTRIES = [
  made({
    made: 'container',
    schema: shapeOf({ name: STRING, running: BOOLEAN, status: STRING, proc_available: BOOLEAN }),
    doc: {
      doc: 'the container',
      fields: {
        name: 'its name',
        running: 'whether it runs',
        status: 'its state',
        proc_available: 'whether /proc of its process was read',
      },
    },
    from: 'the container whose mount it is',
  }),
  read({ snapshot: 'type', schema: STRING, engine: 'Type', subject: 'type', doc: '`bind`, `volume`, `tmpfs`, …' }),
  read({
    snapshot: 'source',
    schema: STRING,
    engine: 'Source',
    subject: 'source',
    doc: 'host path (or volume name)',
  }),
  read({
    snapshot: 'destination',
    schema: STRING,
    engine: 'Destination',
    subject: 'destination',
    doc: 'path in the container',
  }),
  read({ snapshot: 'rw', schema: BOOLEAN, engine: 'RW', subject: 'rw', doc: 'whether it is writable' }),
  read({
    snapshot: 'name',
    schema: STRING,
    engine: "Name: the volume's name (volume mounts; snapshot@2)",
    subject: null,
    doc: null,
    optional: true,
  }),
  read({
    snapshot: 'propagation',
    schema: STRING,
    engine: 'Propagation: bind propagation (`rprivate`, `shared`, …; snapshot@2)',
    subject: null,
    doc: null,
    optional: true,
  }),
  read({
    snapshot: 'mode',
    schema: STRING,
    engine: 'Mode: the mode string given (`ro,Z`; snapshot@2)',
    subject: null,
    doc: null,
    optional: true,
  }),
  made({
    made: 'single_file',
    schema: BOOLEAN,
    doc: 'whether it is a bind mount of a single file',
    from: '`type`, the host file and /proc',
  }),
  made({
    made: 'host_file',
    schema: FILE_FACTS,
    doc: fileFactsDoc('the host file (`env` not shown)'),
    from: "`source` among the snapshot's files",
  }),
  made({
    made: 'seen',
    schema: orNull(shapeOf({ inode: INTEGER_OR_NULL, sha256: STRING_OR_NULL, error: STRING_OR_NULL })),
    doc: {
      doc: 'what the container sees of a single-file bind, from /proc, or null',
      fields: {
        inode: 'its inode',
        sha256: '`sha256:<hex>` of its contents',
        error: 'why it could not be read, or null',
      },
    },
    from: "the container's /proc (`proc.boundFiles`)",
  }),
] as const;

export const MOUNTS = setSpec({
  kind: 'mount',
  about: 'container',
  summary: 'every mount of every container, with what the container really sees of a single-file bind',
  entries: ENTRIES,
});

/** A container's mount as the snapshot holds it. */
export type Mount = SnapshotPartOf<typeof MOUNTS.entries>;

/** A `mounts` subject's data. */
export type MountData = SubjectDataOfSpec<typeof MOUNTS>;
