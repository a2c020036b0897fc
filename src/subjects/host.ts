import {
  BOOLEAN,
  INTEGER,
  made,
  read,
  setSpec,
  STRING,
  STRING_OR_NULL,
  type SnapshotPartOf,
  type SubjectDataOfSpec,
} from './spec.js';

/*
 * The `host` set (src/subjects/spec.ts): the one host the snapshot is of. Its `read` entries are the
 * snapshot's `host` part (snapshot@1 and @2), in its order; the subject's other fields are made from the
 * rest of the snapshot (src/facts/host.ts). The subject's fields, and their docs, keep the order of all
 * entries.
 */

const ENTRIES = [
  read({
    snapshot: 'hostname',
    schema: { type: 'string', minLength: 1 },
    engine: "the host's name (the scanner's, or the one the configuration gives)",
    subject: 'hostname',
    doc: "the host's name",
  }),
  read({
    snapshot: 'root',
    schema: STRING,
    engine: 'the folder the host was mounted at when the scanner ran in a container (`--root`); paths are host paths',
    subject: null,
    doc: null,
    optional: true,
  }),
  read({
    snapshot: 'scannerContainer',
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    engine: 'the engine id of the container the scanner ran in (src/collect/self.ts); absent when it ran on the host',
    subject: null,
    doc: null,
    optional: true,
  }),
  made({ made: 'node', schema: STRING_OR_NULL, doc: 'the node the ledger names, or null', from: 'the ledger' }),
  made({
    made: 'adopted',
    schema: BOOLEAN,
    doc: 'whether the ledger says the node was adopted',
    from: 'the ledger',
  }),
  made({ made: 'complete', schema: BOOLEAN, doc: 'whether everything was read', from: "the snapshot's problems" }),
  made({
    made: 'problems',
    schema: INTEGER,
    doc: 'how many things were not read',
    from: "the snapshot's problems",
  }),
  made({
    made: 'docker_available',
    schema: BOOLEAN,
    doc: 'whether the engine was read',
    from: "the snapshot's `docker`",
  }),
  made({
    made: 'ledger_available',
    schema: BOOLEAN,
    doc: 'whether the ledger was read',
    from: "the snapshot's `ledger`",
  }),
  made({ made: 'container_count', schema: INTEGER, doc: 'containers listed', from: "the snapshot's containers" }),
  made({ made: 'file_count', schema: INTEGER, doc: 'files read', from: "the snapshot's files" }),
  made({ made: 'ledger_count', schema: INTEGER, doc: 'ledger entries', from: "the snapshot's ledger" }),
] as const;

export const HOST = setSpec({
  kind: 'host',
  about: 'host',
  summary: 'the one host the snapshot is of, with what was and was not read',
  entries: ENTRIES,
});

/** The host as the snapshot holds it. */
export type HostInfo = SnapshotPartOf<typeof HOST.entries>;

/** The `host` subject's data. */
export type HostData = SubjectDataOfSpec<typeof HOST>;
