import type { DaemonPath, DaemonView, DockerInfo, Snapshot } from '../snapshot/types.js';
import type { Joins } from './joins.js';
import { subjectFactory, type Subject } from '../policy/subject.js';
import type { DaemonData, DaemonPathFacts } from '../policy/subject-data.js';

/** The roles of the daemon's paths a rule may read by name (daemon.ts in src/collect names them). */
export const DAEMON_PATH_ROLES = [
  'docker_socket',
  'containerd_socket',
  'etc_docker',
  'daemon_json',
  'certs_d',
  'etc_default_docker',
  'etc_sysconfig_docker',
  'docker_service',
  'docker_socket_unit',
  'tls_ca',
  'tls_cert',
  'tls_key',
] as const;

const DAEMON = subjectFactory('daemon');

const pathFacts = (p: DaemonPath): DaemonPathFacts => ({
  path: p.path,
  exists: p.exists,
  file_kind: p.kind ?? null,
  mode: p.mode ?? null,
  uid: p.uid ?? null,
  gid: p.gid ?? null,
  user: p.user ?? null,
  group: p.group ?? null,
});

/** The daemon's facts read from the engine's `/info`: all unknown when it was not read. */
const FROM_INFO: (keyof DaemonData)[] = [
  'server_version',
  'os',
  'kernel_version',
  'security_options',
  'rootless',
  'userns',
  'seccomp',
  'apparmor',
  'selinux',
  'live_restore',
  'logging_driver',
  'cgroup_driver',
  'cgroup_version',
  'storage_driver',
  'swarm_state',
  'experimental',
];

/**
 * The `daemon` set (snapshot@2): the one engine the snapshot read, from `/info` and `/version`,
 * daemon.json, dockerd's command line and the daemon's paths — each part unknown when it was not read.
 * None when the engine itself was not reached.
 */
export function buildDaemon(snapshot: Snapshot, joins: Joins): Subject<DaemonData>[] {
  if (snapshot.docker === null) return [];
  const unknown = unknownDaemonFacts(snapshot.daemon, snapshot.docker);
  const data = daemonData(snapshot.daemon, snapshot.docker, joins.host);
  return [
    DAEMON.subject({
      id: 'daemon',
      data,
      unknown,
      locate: () => ({
        physical: [],
        logical: [{ kind: 'daemon', name: 'daemon', fullyQualifiedName: `${joins.host}/daemon` }],
      }),
      resource: null,
      module: null,
    }),
  ];
}

/** The daemon's facts that are unknown, each with why: the parts of the daemon the scan could not read. */
function unknownDaemonFacts(daemon: DaemonView, docker: DockerInfo): ReturnType<typeof DAEMON.unknown> {
  const { info, config, process, paths } = daemon;
  const unknown: ReturnType<typeof DAEMON.unknown> = [];
  const unread = (reason: string, fields: (keyof DaemonData)[]) =>
    unknown.push(...DAEMON.unknown('daemon', reason, fields));
  if (!info.available) unread(info.reason, FROM_INFO);
  // Which engine it is not known (a snapshot made before it was recorded, an engine that did not say):
  // the daemon rules, which apply to dockerd alone, are not checked then rather than passed.
  if ((docker.kind ?? 'unknown') === 'unknown') unread('which engine it is was not known', ['engine']);
  if (!config.available) unread(config.reason, ['daemon_json', 'daemon_json_exists']);
  if (!process.available) unread(process.reason, ['dockerd_running', 'dockerd_flags', 'dockerd_args']);
  // Paths are looked at on this machine only for a local engine: none at all is not known.
  if (paths.length === 0)
    unread("the daemon's paths were not looked at (the engine is not local)", ['paths', 'registry_certs']);
  // A path that could not be looked at (exists null) is unknown, never absent: the rules on the daemon's
  // paths (or on the registry certificates) are not checked then, rather than passed.
  for (const [field, of] of [
    ['paths', paths.filter((x) => x.role !== 'registry_cert')],
    ['registry_certs', paths.filter((x) => x.role === 'registry_cert')],
  ] as const) {
    const unseen = of.filter((x) => x.exists === null);
    if (unseen.length > 0)
      unread(unseen.map((x) => `${x.path} could not be looked at${x.error ? `: ${x.error}` : ''}`).join('; '), [field]);
  }
  return unknown;
}

/** The daemon's facts as read; a part not read gives stand-ins (its facts are unknown, see unknownDaemonFacts). */
function daemonData(daemon: DaemonView, docker: DockerInfo, host: string): DaemonData {
  const { info, config, process, paths } = daemon;
  const names = info.available ? info.securityOptions.map((o) => /^name=([^,]+)/.exec(o)?.[1] ?? o) : [];
  const byRole: Record<string, DaemonPathFacts> = {};
  for (const p of paths) if (p.role !== 'registry_cert') byRole[p.role] ??= pathFacts(p);
  return {
    kind: 'daemon',
    id: 'daemon',
    host,
    engine: docker.kind ?? 'unknown',
    server_version: info.available ? info.serverVersion : docker.serverVersion,
    api_version: docker.apiVersion,
    os: info.available ? info.os : '',
    kernel_version: info.available ? info.kernelVersion : '',
    security_options: info.available ? info.securityOptions : [],
    rootless: names.includes('rootless'),
    userns: names.includes('userns'),
    seccomp: names.includes('seccomp'),
    apparmor: names.includes('apparmor'),
    selinux: names.includes('selinux'),
    live_restore: info.available && info.liveRestore,
    logging_driver: info.available ? info.loggingDriver : '',
    cgroup_driver: info.available ? info.cgroupDriver : '',
    cgroup_version: info.available ? info.cgroupVersion : '',
    storage_driver: info.available ? info.storageDriver : '',
    swarm_state: info.available ? info.swarmState : '',
    experimental: info.available && info.experimental,
    daemon_json: config.available ? config.settings : {},
    daemon_json_exists: config.available && config.exists,
    dockerd_running: process.available && process.running,
    dockerd_flags: process.available ? process.flags : {},
    dockerd_args: process.available ? process.args : [],
    paths: byRole,
    registry_certs: paths.filter((p) => p.role === 'registry_cert').map(pathFacts),
  };
}
