import { STRINGS } from './common.js';
import {
  BOOLEAN,
  BOOLEAN_OR_NULL,
  INTEGER_OR_NULL,
  listOf,
  made,
  mapOf,
  read,
  SAFE_VALUE,
  setSpec,
  shapeOf,
  STRING,
  STRING_OR_NULL,
  type SnapshotPartOf,
  type SubjectDataOfSpec,
} from './spec.js';

/*
 * The `daemon` set (src/subjects/spec.ts): the engine's daemon, one subject per host
 * (src/facts/daemon.ts). Its `read` entries are the snapshot's `daemon.info` part (`GET /info`, and
 * `/version` where it says: src/collect/images.ts daemonInfoOf), in its order. daemon.json, dockerd's
 * command line and the daemon's paths are the snapshot's other parts of the daemon, still written in
 * src/snapshot/schema.ts and types.ts; the `made` entries here say which each field is made from.
 * The subject's fields, and their docs, keep the order of all entries.
 */

/** A daemon setting (`#/$defs/daemonSetting`): a boolean, a number, harmless text or a safe value, nested. */
const DAEMON_SETTING = { $ref: '#/$defs/daemonSetting' } as const;

/** A path of the daemon's (socket, folder, file) with its owner and mode. */
const DAEMON_PATH = shapeOf({
  path: STRING,
  exists: BOOLEAN_OR_NULL,
  file_kind: STRING_OR_NULL,
  mode: STRING_OR_NULL,
  uid: INTEGER_OR_NULL,
  gid: INTEGER_OR_NULL,
  user: STRING_OR_NULL,
  group: STRING_OR_NULL,
});

/** A boolean made from the daemon's security options. */
const securityOption = <const F extends string>(field: F, doc: string) =>
  made({ made: field, schema: BOOLEAN, doc, from: '`securityOptions` (their `name=`)' });

const ENTRIES = [
  made({
    made: 'engine',
    schema: STRING,
    doc: '`docker`, `podman` or `unknown`',
    from: "the snapshot's `docker.kind`",
  }),
  read({
    snapshot: 'serverVersion',
    schema: STRING,
    engine: 'ServerVersion of `GET /info`, else Version of `GET /version`',
    subject: 'server_version',
    doc: 'its version',
  }),
  read({ snapshot: 'apiVersion', schema: STRING, engine: 'ApiVersion of `GET /version`', subject: null, doc: null }),
  made({ made: 'api_version', schema: STRING, doc: 'the API version spoken', from: "the snapshot's `docker`" }),
  read({
    snapshot: 'os',
    schema: STRING,
    engine: "OperatingSystem, else `/version`'s Os",
    subject: 'os',
    doc: 'the host operating system it reports',
  }),
  read({
    snapshot: 'kernelVersion',
    schema: STRING,
    engine: "KernelVersion, else `/version`'s",
    subject: 'kernel_version',
    doc: 'the kernel it reports',
  }),
  read({
    snapshot: 'securityOptions',
    schema: STRINGS,
    engine: 'SecurityOptions',
    subject: 'security_options',
    doc: 'its security options (`name=seccomp,profile=builtin`, `name=rootless`, …)',
  }),
  securityOption('rootless', 'whether it runs rootless'),
  securityOption('userns', 'whether user namespace remapping is on'),
  securityOption('seccomp', 'whether seccomp is on'),
  securityOption('apparmor', 'whether AppArmor is on'),
  securityOption('selinux', 'whether SELinux is on'),
  made({ made: 'live_restore', schema: BOOLEAN, doc: 'whether live restore is on', from: '`liveRestore`' }),
  read({
    snapshot: 'loggingDriver',
    schema: STRING,
    engine: 'LoggingDriver',
    subject: 'logging_driver',
    doc: 'the default log driver',
  }),
  read({
    snapshot: 'cgroupDriver',
    schema: STRING,
    engine: 'CgroupDriver',
    subject: 'cgroup_driver',
    doc: '`cgroupfs` or `systemd`',
  }),
  read({
    snapshot: 'cgroupVersion',
    schema: STRING,
    engine: 'CgroupVersion',
    subject: 'cgroup_version',
    doc: '`1` or `2`',
  }),
  read({
    snapshot: 'storageDriver',
    schema: STRING,
    engine: 'Driver',
    subject: 'storage_driver',
    doc: 'its storage driver (`overlay2`, …)',
  }),
  read({ snapshot: 'liveRestore', schema: BOOLEAN, engine: 'LiveRestoreEnabled', subject: null, doc: null }),
  read({
    snapshot: 'swarmState',
    schema: STRING,
    engine: 'Swarm.LocalNodeState',
    subject: 'swarm_state',
    doc: "swarm mode's state: `inactive`, `active`, …",
  }),
  read({
    snapshot: 'experimental',
    schema: BOOLEAN,
    engine: 'ExperimentalBuild',
    subject: 'experimental',
    doc: 'whether experimental features are on',
  }),
  made({
    made: 'daemon_json',
    schema: mapOf(DAEMON_SETTING),
    doc:
      'daemon.json as written (`{}` when there is none): booleans, numbers, drivers, paths and addresses ' +
      'as they are, any other text `{digest, shape}`',
    from: "the snapshot's `daemon.config.settings`",
  }),
  made({
    made: 'daemon_json_exists',
    schema: BOOLEAN,
    doc: 'whether there is a daemon.json',
    from: "the snapshot's `daemon.config.exists`",
  }),
  made({
    made: 'dockerd_running',
    schema: BOOLEAN,
    doc: 'whether a dockerd serves the engine (false on Podman)',
    from: "the snapshot's `daemon.process.running`",
  }),
  made({
    made: 'dockerd_flags',
    schema: mapOf(listOf(DAEMON_SETTING)),
    doc: "dockerd's flags, `{name: [values]}` without dashes (`true` for a bare flag; text as in `daemon_json`)",
    from: "the snapshot's `daemon.process.flags`",
  }),
  made({
    made: 'dockerd_args',
    schema: listOf(SAFE_VALUE),
    doc: "dockerd's arguments, each `{digest, shape}`",
    from: "the snapshot's `daemon.process.args`",
  }),
  made({
    made: 'paths',
    schema: mapOf(DAEMON_PATH),
    doc:
      'its sockets, folders and files by role (`docker_socket`, `containerd_socket`, `etc_docker`, ' +
      '`daemon_json`, `certs_d`, `etc_default_docker`, `etc_sysconfig_docker`, `docker_service`, ' +
      '`docker_socket_unit`, `tls_ca`, `tls_cert`, `tls_key`; a role not configured is absent), ' +
      'each `{path, exists, file_kind, mode, uid, gid, user, group}`',
    from: "the snapshot's `daemon.paths`, by role",
  }),
  made({
    made: 'registry_certs',
    schema: listOf(DAEMON_PATH),
    doc: 'the files in /etc/docker/certs.d/*/, each as in `paths`',
    from: "the snapshot's `daemon.paths` of role `registry_cert`",
  }),
] as const;

export const DAEMON = setSpec({
  kind: 'daemon',
  about: 'daemon',
  summary: "the engine's daemon (snapshot@2): its settings, daemon.json, its command line, its paths",
  entries: ENTRIES,
});

/** What `GET /info` and `/version` say of the daemon, as the snapshot's `daemon.info` holds it. */
export type DaemonInfo = SnapshotPartOf<typeof DAEMON.entries>;

/** The `daemon` subject's data. */
export type DaemonData = SubjectDataOfSpec<typeof DAEMON>;
