import { STRINGS } from './common.js';
import {
  BOOLEAN,
  BOOLEAN_OR_NULL,
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
 * The `listeners` set (src/subjects/spec.ts): every socket listening in the host's network namespace
 * (the snapshot's `hostListeners.sockets`, src/collect/host-listeners.ts) and in each container's own
 * (its `proc.listening`), and the subject's fields (src/facts/host-objects.ts buildListeners). The
 * records keep the order of the `read` entries; the subject's fields, and their docs, the order of all
 * entries.
 */

/** How far a listening address reaches: every interface, one address, or this host only. */
export const REACH = { enum: ['all-interfaces', 'address', 'loopback'] } as const;

const ENTRIES = [
  made({
    made: 'namespace',
    schema: { enum: ['host', 'container'] },
    doc: "`host`: in the host's network namespace; `container`: in a container's own",
    from: "which list it is in: `hostListeners.sockets`, or a container's `proc.listening`",
  }),
  read({
    snapshot: 'protocol',
    schema: { enum: ['tcp', 'tcp6', 'udp', 'udp6'] },
    engine: "the host's /proc/net/{tcp,tcp6,udp,udp6} file it is listed in (a container's: its own)",
    subject: 'protocol',
    doc: '`tcp`, `tcp6`, `udp`, `udp6`',
  }),
  read({
    snapshot: 'address',
    schema: STRING,
    engine: 'its local address there',
    subject: 'address',
    doc: 'the address it listens on (`0.0.0.0`, `::`, `127.0.0.1`, one address)',
  }),
  read({
    snapshot: 'port',
    schema: { type: 'integer', minimum: 0, maximum: 65535 },
    engine: 'its local port there',
    subject: 'port',
    doc: 'the port',
  }),
  read({
    snapshot: 'holder',
    schema: orNull(
      shapeOf({
        pid: { type: 'integer', minimum: 1 },
        name: STRING_OR_NULL,
        exe: STRING_OR_NULL,
        containerId: { type: ['string', 'null'], pattern: '^[0-9a-f]{64}$' },
      }),
    ),
    engine:
      'the process holding it (the lowest pid of those holding it, or the one in a container): its pid, ' +
      '`comm` and executable (null when not read), the full id of the container whose cgroup it is in; ' +
      'null: no process was seen holding it',
    subject: null,
    doc: null,
  }),
  read({
    snapshot: 'holderUnknown',
    schema: STRING,
    engine: "why a socket no process was seen holding may still be held by one (some process's fds were not read)",
    subject: null,
    doc: null,
    optional: true,
  }),
  made({ made: 'endpoint', schema: STRING, doc: '`address:port/protocol`', from: '`address`, `port`, `protocol`' }),
  made({
    made: 'reach',
    schema: REACH,
    doc: 'how far it reaches: `all-interfaces`, `address`, `loopback`',
    from: '`address`',
  }),
  made({
    made: 'owner',
    schema: { enum: ['container', 'published-port', 'process', 'kernel'] },
    doc:
      "`container` (a process in a container, or a container's own namespace), `published-port` (the engine's " +
      "proxy for a container's published port), `process` (a host process), `kernel` (no process holds it)",
    from: "`holder`, and the containers' published ports",
  }),
  made({
    made: 'process',
    schema: orNull(shapeOf({ pid: { type: 'integer' }, name: STRING_OR_NULL, exe: STRING_OR_NULL })),
    doc: {
      doc: "the host process holding it, or null (a container's own namespace, or the kernel)",
      fields: {
        pid: 'its pid',
        name: 'its name as the kernel keeps it (`comm`, at most 15 characters), or null',
        exe: "its executable's host path, or null",
      },
    },
    from: '`holder`',
  }),
  made({
    made: 'container',
    schema: STRING_OR_NULL,
    doc: 'the container owning it (by cgroup, namespace or published port), or null',
    from: "`holder`, the containers' published ports, or the container whose namespace it is in",
  }),
  made({
    made: 'container_claimed',
    schema: BOOLEAN_OR_NULL,
    doc: 'whether a ledger entry claims that container (null: no container)',
    from: 'the ledger',
  }),
  made({
    made: 'declared_by',
    schema: STRINGS,
    doc: 'ids of the valid `service` ledger entries declaring its process and port',
    from: 'the ledger',
  }),
  made({ made: 'declared', schema: BOOLEAN, doc: 'whether a `service` entry declares it', from: 'the ledger' }),
  made({
    made: 'claimed',
    schema: BOOLEAN,
    doc: 'whether a claimed container owns it (or a published port of one) or a `service` entry declares it',
    from: 'the ledger',
  }),
] as const;

export const LISTENERS = setSpec({
  kind: 'listener',
  about: 'listener',
  summary:
    "every socket listening in the host's network namespace (with the process or container holding it) " +
    "and in each container's own",
  entries: ENTRIES,
});

/** A socket listening in the host's network namespace, as the snapshot holds it, with who holds it. */
export type HostListener = SnapshotPartOf<typeof LISTENERS.entries>;

/** A `listeners` subject's data. */
export type ListenerData = SubjectDataOfSpec<typeof LISTENERS>;
