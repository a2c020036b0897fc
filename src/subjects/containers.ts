import {
  BOOLEAN,
  INTEGER,
  listOf,
  made,
  read,
  SAFE_VALUE,
  shapeOf,
  STRING,
  type SnapshotPartOf,
  type SubjectFactsOf,
} from './spec.js';

/*
 * The facts of how a container runs (snapshot@2's `runtime` part of each container; the `containers`
 * subject set's fields from `privileged` to `entrypoint`), each declared once (src/subjects/spec.ts):
 * a `read` entry is a value of the snapshot read from the container's inspect (the collector,
 * src/collect/inspect.ts `runtimeOf`, is typed by this list: a value not read there fails `tsc`) and
 * the subject field it is; a `made` entry is a subject field the builder makes (src/facts/containers.ts).
 * The snapshot part keeps the order of the `read` entries; the subject fields, and their docs, the
 * order of all entries.
 */

const STRINGS = listOf(STRING);
const ARGS = { oneOf: [{ type: 'null' }, listOf(SAFE_VALUE)] } as const;
// Written apart: inside the entry, TypeScript cannot type its `fact` from it.
const DEVICES = listOf(shapeOf({ pathOnHost: STRING, pathInContainer: STRING, cgroupPermissions: STRING }));

export const CONTAINER_RUNTIME = [
  read({
    snapshot: 'privileged',
    schema: BOOLEAN,
    engine: 'HostConfig.Privileged',
    subject: 'privileged',
    doc: 'whether it runs privileged (`--privileged`); a stopped one starts so',
  }),
  read({
    snapshot: 'capAdd',
    schema: STRINGS,
    engine: 'HostConfig.CapAdd, upper case without `CAP_`, sorted',
    subject: 'cap_add',
    doc: 'capabilities added, upper case without `CAP_` (`SYS_ADMIN`, `ALL`)',
  }),
  read({
    snapshot: 'capDrop',
    schema: STRINGS,
    engine: 'HostConfig.CapDrop, as CapAdd',
    subject: 'cap_drop',
    doc: 'capabilities dropped, as `cap_add`',
  }),
  read({
    snapshot: 'securityOpt',
    schema: STRINGS,
    engine: 'HostConfig.SecurityOpt as given',
    subject: 'security_opt',
    doc: 'its security options as given (`seccomp=unconfined`, `no-new-privileges`, `label=disable`, …)',
  }),
  made({
    made: 'seccomp_profile',
    schema: STRING,
    doc: "`default` (the engine's), `unconfined`, or `custom` (a profile of its own)",
  }),
  read({
    snapshot: 'appArmorProfile',
    schema: STRING,
    engine: 'AppArmorProfile: the profile the engine applied, `` when none',
    subject: null,
    doc: null,
  }),
  made({
    made: 'apparmor_profile',
    schema: STRING,
    doc: 'the AppArmor profile applied (`docker-default`, `unconfined`, …), `` when none',
  }),
  made({
    made: 'no_new_privileges',
    schema: BOOLEAN,
    doc: 'whether its options set no-new-privileges (the daemon may set it for all: `daemon_security`)',
  }),
  made({ made: 'selinux_labels', schema: STRINGS, doc: 'its SELinux `label=` options (`disable`, `type:…`)' }),
  read({
    snapshot: 'pidMode',
    schema: STRING,
    engine: 'HostConfig.PidMode',
    subject: 'pid_mode',
    doc: 'pid namespace: `` (its own), `host`, `container:<id>`',
  }),
  read({
    snapshot: 'ipcMode',
    schema: STRING,
    engine: 'HostConfig.IpcMode',
    subject: 'ipc_mode',
    doc: 'ipc namespace: `private`, `shareable`, `host`, `container:<id>`, ``',
  }),
  read({
    snapshot: 'utsMode',
    schema: STRING,
    engine: 'HostConfig.UTSMode',
    subject: 'uts_mode',
    doc: 'uts namespace: `` (its own) or `host`',
  }),
  read({
    snapshot: 'usernsMode',
    schema: STRING,
    engine: 'HostConfig.UsernsMode',
    subject: 'userns_mode',
    doc: "user namespace: `` (the daemon's default) or `host`",
  }),
  read({
    snapshot: 'cgroupnsMode',
    schema: STRING,
    engine: 'HostConfig.CgroupnsMode',
    subject: 'cgroupns_mode',
    doc: "cgroup namespace: `private`, `host`, or `` (the daemon's default)",
  }),
  read({
    snapshot: 'readonlyRootfs',
    schema: BOOLEAN,
    engine: 'HostConfig.ReadonlyRootfs',
    subject: 'read_only_rootfs',
    doc: 'whether its root file system is read-only',
  }),
  read({
    snapshot: 'memory',
    schema: INTEGER,
    engine: 'HostConfig.Memory, bytes; 0 is no limit',
    subject: 'memory',
    doc: 'memory limit in bytes, 0: none',
  }),
  read({
    snapshot: 'memorySwap',
    schema: INTEGER,
    engine: 'HostConfig.MemorySwap',
    subject: 'memory_swap',
    doc: 'memory and swap limit in bytes, 0: none, -1: unlimited swap',
  }),
  read({
    snapshot: 'nanoCpus',
    schema: INTEGER,
    engine: 'HostConfig.NanoCpus',
    subject: 'nano_cpus',
    doc: 'CPU limit in billionths of a CPU (`--cpus`), 0: none',
  }),
  read({
    snapshot: 'cpuShares',
    schema: INTEGER,
    engine: 'HostConfig.CpuShares',
    subject: 'cpu_shares',
    doc: 'relative CPU weight, 0: the default (1024)',
  }),
  read({
    snapshot: 'pidsLimit',
    schema: { type: ['integer', 'null'] },
    engine: 'HostConfig.PidsLimit; null when the engine sets none (0 and -1 also mean none)',
    subject: 'pids_limit',
    doc: 'the most processes it may have, null: no limit',
  }),
  read({
    snapshot: 'restartPolicy',
    schema: shapeOf({ name: STRING, maxRetries: INTEGER }),
    engine: 'HostConfig.RestartPolicy (Name, MaximumRetryCount)',
    subject: 'restart_policy',
    doc: {
      doc: 'its restart policy',
      fields: {
        name: '`no`, `always`, `unless-stopped`, `on-failure`, `` (none given)',
        max_retries: 'at most this many restarts for `on-failure`, 0: no limit',
      },
    },
    fact: (p) => ({ name: p.name, max_retries: p.maxRetries }),
  }),
  read({
    snapshot: 'devices',
    schema: DEVICES,
    engine: 'HostConfig.Devices',
    subject: 'devices',
    doc: 'host devices given to it (`{path_on_host, path_in_container, cgroup_permissions}`)',
    fact: (devices) =>
      devices.map((d) => ({
        path_on_host: d.pathOnHost,
        path_in_container: d.pathInContainer,
        cgroup_permissions: d.cgroupPermissions,
      })),
  }),
  read({
    snapshot: 'ulimits',
    schema: listOf(shapeOf({ name: STRING, soft: INTEGER, hard: INTEGER })),
    engine: 'HostConfig.Ulimits',
    subject: 'ulimits',
    doc: 'ulimits it sets (`{name, soft, hard}`)',
  }),
  read({
    snapshot: 'cgroupParent',
    schema: STRING,
    engine: 'HostConfig.CgroupParent',
    subject: 'cgroup_parent',
    doc: 'its cgroup parent, `` for the default',
  }),
  read({
    snapshot: 'user',
    schema: STRING,
    engine: "Config.User (the image's unless `--user` overrode it); `` is the image default, root",
    subject: 'user',
    doc: "the user it runs as (the image's unless `--user` set one), `` for root",
  }),
  read({
    snapshot: 'logDriver',
    schema: STRING,
    engine: 'HostConfig.LogConfig.Type',
    subject: 'log_driver',
    doc: 'its log driver (`json-file`, `journald`, …)',
  }),
  made({
    made: 'mount_list',
    schema: listOf(
      shapeOf({
        type: STRING,
        source: STRING,
        destination: STRING,
        rw: BOOLEAN,
        volume_name: { type: ['string', 'null'] },
        propagation: STRING,
        mode: STRING,
      }),
    ),
    doc:
      'its mounts (`{type, source, destination, rw, volume_name, propagation, mode}`); ' +
      'the `mounts` set has one subject each',
  }),
  read({
    snapshot: 'networks',
    schema: STRINGS,
    engine: 'NetworkSettings.Networks: the names of the networks it is attached to',
    subject: 'networks',
    doc: 'names of the networks it is attached to',
  }),
  made({ made: 'image_id', schema: STRING, doc: 'the id of the image it runs (`sha256:…`)' }),
  read({
    snapshot: 'health',
    schema: STRING,
    engine: 'State.Health.Status, or `none` when it has no healthcheck',
    subject: 'health',
    doc: 'its health: `healthy`, `unhealthy`, `starting`, or `none` (no healthcheck)',
    absent: 'none',
  }),
  made({
    made: 'has_healthcheck',
    schema: BOOLEAN,
    doc: "whether it has a healthcheck (its own or its image's, not `NONE`)",
  }),
  made({
    made: 'restarting',
    schema: BOOLEAN,
    doc:
      'whether the engine is restarting it in a loop now: between two restarts (Docker `restarting`, Podman ' +
      '`stopped` with a restart before), or started again by its policy (twice or more) under 10 s ago',
  }),
  read({ snapshot: 'restarting', schema: BOOLEAN, engine: 'State.Restarting', subject: null, doc: null }),
  read({
    snapshot: 'oomKilled',
    schema: BOOLEAN,
    engine: 'State.OOMKilled',
    subject: 'oom_killed',
    doc: 'whether its last run was killed for lack of memory',
  }),
  read({
    snapshot: 'exitCode',
    schema: INTEGER,
    engine: 'State.ExitCode',
    subject: 'exit_code',
    doc: 'the exit code of its last run (0 while running)',
  }),
  made({ made: 'restart_count', schema: INTEGER, doc: 'how often the engine restarted it' }),
  read({
    snapshot: 'command',
    schema: ARGS,
    engine: 'Config.Cmd, each element secret-safe; null when not set',
    subject: 'command',
    doc: 'its command (Cmd), each argument `{digest, shape}`, or null',
  }),
  read({
    snapshot: 'entrypoint',
    schema: ARGS,
    engine: 'Config.Entrypoint, as Cmd',
    subject: 'entrypoint',
    doc: 'its entrypoint, each argument `{digest, shape}`, or null',
  }),
  read({
    snapshot: 'healthcheck',
    schema: BOOLEAN,
    engine: 'Config.Healthcheck has a test that is not `NONE`',
    subject: null,
    doc: null,
  }),
] as const;

/** A container's security and runtime settings and its health, from the one inspect already made. */
export type ContainerRuntime = SnapshotPartOf<typeof CONTAINER_RUNTIME>;

/** The `containers` subject's fields this spec declares. */
export type ContainerRuntimeFacts = SubjectFactsOf<typeof CONTAINER_RUNTIME>;
