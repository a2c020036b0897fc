import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { compareText } from '../text/compare.js';
import { kindOf } from '../fs/file-kind.js';
import { MAX_DEPTH } from '../input/depth.js';
import { jsonTooDeep } from '../input/json.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { DaemonPath, DaemonSettingValue, DaemonView, DockerInfo, EngineKind, Problem } from '../snapshot/types.js';
import type { CollectContext, Collector } from './contract.js';
import { isHostPath, locate, resolveRoot } from './files.js';
import { fsName, nameFromBytes } from '../fs/path-bytes.js';
import { errnoCode, readRegularFile } from './read-file.js';

/*
 * The daemon as the host shows it (snapshot@2): daemon.json, dockerd's command line from /proc, and
 * the owner and mode of its sockets, folders and files. Read only: files through the safe primitives
 * of files.ts (nothing followed, nothing but a regular file opened), /proc by reading. Every value
 * that may be a secret (a registry mirror's URL with credentials, a log driver's token, an argument)
 * becomes a safe value here; only booleans, numbers and the text of settings known to be harmless stay.
 */

/** The most of daemon.json read (a real one is a few hundred bytes). */
const MAX_DAEMON_JSON_BYTES = 1024 * 1024;

/**
 * Settings of daemon.json and flags of dockerd whose text is never a secret (names, paths, modes): kept
 * as they are, so rules can read them. Any other text is kept as a digest and a shape.
 */
const HARMLESS_SETTINGS = new Set([
  'authorization-plugin',
  'authorization-plugins',
  'bridge',
  'cgroup-parent',
  'config-file',
  'containerd',
  'containerd-namespace',
  'data-root',
  'default-cgroupns-mode',
  'default-ipc-mode',
  'default-runtime',
  'default-shm-size',
  'default-ulimit',
  'default-ulimits',
  'exec-opt',
  'exec-opts',
  'exec-root',
  'features',
  'graph',
  'group',
  'init-path',
  'log-driver',
  'log-format',
  'log-level',
  'pidfile',
  'seccomp-profile',
  'storage-driver',
  'storage-opt',
  'storage-opts',
  'tlscacert',
  'tlscert',
  'tlskey',
  'userns-remap',
]);

/** Options of a log driver that are sizes and switches, never a token or an address. */
const HARMLESS_LOG_OPTS = new Set(['compress', 'max-buffer-size', 'max-file', 'max-size', 'mode']);

/** dockerd's boolean flags: they never take the next argument as their value (`--icc=false`, never `--icc false`). */
const BOOLEAN_FLAGS = new Set([
  'debug',
  'experimental',
  'icc',
  'init',
  'ip-forward',
  'ip-masq',
  'ip6tables',
  'iptables',
  'ipv6',
  'live-restore',
  'no-new-privileges',
  'raw-logs',
  'rootless',
  'selinux-enabled',
  'tls',
  'tlsverify',
  'userland-proxy',
  'validate',
  'version',
  'help',
]);

const SHORT_FLAGS: Readonly<Record<string, string>> = {
  D: 'debug',
  G: 'group',
  H: 'host',
  b: 'bridge',
  g: 'graph',
  l: 'log-level',
  p: 'pidfile',
  s: 'storage-driver',
  v: 'version',
  h: 'help',
};

/**
 * A daemon's listening address (`unix:///run/docker.sock`, `fd://`, `tcp://0.0.0.0:2376`) is kept as it
 * is: rules tell a TCP listener from a socket by it. One with userinfo (`@`) is not a plain address.
 */
const isListenAddress = (value: string): boolean => /^(unix|fd|tcp|ssh|npipe):\/\/[^@\s]*$/.test(value);

/** A setting's text as the snapshot holds it: as it is when harmless, else a safe value. */
function settingText(name: string, value: string, safe: SafeValueMaker): DaemonSettingValue {
  if (HARMLESS_SETTINGS.has(name) || /^(true|false|-?\d+(\.\d+)?)$/.test(value)) return value;
  if ((name === 'host' || name === 'hosts') && isListenAddress(value)) return value;
  return safe(value);
}

/** dockerd's arguments after its name, as `{flag: [values]}` (a bare boolean flag is `true`). Pure. */
export function parseDockerdArgs(args: readonly string[], safe: SafeValueMaker): Record<string, DaemonSettingValue[]> {
  const flags: Record<string, DaemonSettingValue[]> = {};
  const add = (name: string, value: DaemonSettingValue) => (flags[name] ??= []).push(value);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let name: string;
    let value: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      if (eq >= 0) value = arg.slice(eq + 1);
    } else if (arg.startsWith('-') && arg.length >= 2) {
      const short = arg[1]!;
      name = SHORT_FLAGS[short] ?? short;
      if (arg.length > 2) value = arg.slice(arg[2] === '=' ? 3 : 2);
    } else {
      continue; // dockerd takes no operands
    }
    if (name === '') continue;
    if (value === undefined && !BOOLEAN_FLAGS.has(name) && i + 1 < args.length && !args[i + 1]!.startsWith('-'))
      value = args[++i]!;
    add(name, value === undefined ? true : settingText(name, value, safe));
  }
  return Object.fromEntries(Object.entries(flags).sort(([a], [b]) => compareText(a, b)));
}

/** daemon.json as the snapshot holds it: nested as written, every text made safe but harmless ones. Pure. */
export function daemonSettingsOf(parsed: Record<string, unknown>, safe: SafeValueMaker): Record<string, unknown> {
  const walk = (value: unknown, key: string, harmless: boolean): unknown => {
    if (typeof value === 'string') {
      if (harmless || HARMLESS_SETTINGS.has(key)) return value;
      return settingText(key, value, safe);
    }
    if (Array.isArray(value)) return value.map((v) => walk(v, key, harmless));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          k,
          walk(v, k, harmless || HARMLESS_SETTINGS.has(key) || (key === 'log-opts' && HARMLESS_LOG_OPTS.has(k))),
        ]),
      );
    }
    return value; // booleans, numbers, null
  };
  return Object.fromEntries(
    Object.entries(parsed)
      .sort(([a], [b]) => compareText(a, b))
      .map(([k, v]) => [k, walk(v, k, false)]),
  );
}

/** Where a dockerd listens, from its `--host` flags (the default socket without one). */
function socketsOf(flags: Record<string, DaemonSettingValue[]>): string[] {
  const hosts = (flags['host'] ?? []).filter((h): h is string => typeof h === 'string');
  const paths = (hosts.length > 0 ? hosts : ['unix:///var/run/docker.sock']).flatMap((h) =>
    h.startsWith('unix://') ? [h.slice('unix://'.length)] : h.startsWith('fd://') ? ['/run/docker.sock'] : [],
  );
  return paths.map(sameRun);
}

/** /var/run is /run on every current distribution: one name for comparing. */
const sameRun = (path: string): string => (path.startsWith('/var/run/') ? path.slice('/var'.length) : path);

interface DockerdProcess {
  pid: number;
  args: string[];
  flags: Record<string, DaemonSettingValue[]>;
}

/** Every dockerd process in /proc, with its arguments; those that vanish or cannot be read are passed over. */
function dockerdProcesses(procRoot: string, safe: SafeValueMaker): DockerdProcess[] {
  const found: DockerdProcess[] = [];
  for (const name of readdirSync(procRoot)) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`${procRoot}/${name}/comm`, 'utf8').trim() !== 'dockerd') continue;
      const argv = readFileSync(`${procRoot}/${name}/cmdline`, 'utf8').split('\0');
      if (argv.at(-1) === '') argv.pop();
      const args = argv.slice(1);
      found.push({ pid: Number(name), args, flags: parseDockerdArgs(args, safe) });
    } catch {
      // gone, or a kernel thread: not ours to report
    }
  }
  return found;
}

export interface DaemonHostOptions {
  /** Host root (`--root`). */
  root: string;
  safe: SafeValueMaker;
  /** The engine's unix socket as this process reaches it; undefined when the engine is not local. */
  socketPath: string | undefined;
  /** Why /proc cannot show the engine's processes, or null when it can. */
  procUnavailable: string | null;
  kind: EngineKind | undefined;
  procRoot?: string;
}

export interface DaemonHostCollection {
  config: DaemonView['config'];
  process: DaemonView['process'];
  paths: DaemonPath[];
  problems: Problem[];
  notes: Problem[];
}

/** The daemon's slice of the snapshot, beside what the engine said of itself (`GET /info`). */
export type DaemonPart = Omit<DaemonHostCollection, 'problems' | 'notes'>;

export interface DaemonContext extends CollectContext {
  /** Why /proc cannot be read (src/collect/proc-reader.ts), or null when it can. */
  procReason: string | null;
  /** The engine as its collector read it; null when it was not read. */
  engine: DockerInfo | null;
}

/** The daemon's collector (src/collect/contract.ts): its files and command line on the host, for a local engine. */
export const daemonCollector: Collector<DaemonContext, DaemonPart> = {
  async collect({ settings, safe, endpoint, procReason, engine }) {
    const { problems, notes, ...part } = await collectDaemonHost({
      root: settings.root,
      safe,
      socketPath: endpoint.local && engine !== null ? endpoint.socketPath : undefined,
      procUnavailable: procReason,
      kind: engine?.kind,
    });
    return { part, problems, notes };
  },
  unread: (_context, reason) => ({
    part: {
      config: { available: false, reason: `daemon.json not read: ${reason}` },
      process: { available: false, reason: `dockerd's command line not read: ${reason}` },
      paths: [],
    },
    problems: [
      { source: 'daemon', message: `daemon.json, dockerd's command line and the daemon's files not read: ${reason}` },
    ],
    notes: [],
  }),
};

/** daemon.json, dockerd's command line and the daemon's paths, for a local engine. */
export async function collectDaemonHost(options: DaemonHostOptions): Promise<DaemonHostCollection> {
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (options.socketPath === undefined) {
    const reason = 'the engine is not local: its daemon.json, command line and files are on another machine';
    const unread = { available: false as const, reason };
    return { config: unread, process: unread, paths: [], problems, notes };
  }
  const process = findProcess(options, notes);
  const flags = process.available ? process.flags : {};
  const flag = (name: string): string | undefined => {
    const value = flags[name]?.at(-1);
    return typeof value === 'string' && isHostPath(value) ? value : undefined;
  };
  const podman = options.kind === 'podman';
  const configPath = flag('config-file') ?? '/etc/docker/daemon.json';
  let realRoot: string;
  try {
    realRoot = await resolveRoot(options.root);
  } catch (error) {
    const reason = `the host root ${options.root} cannot be read (${errnoCode(error)})`;
    problems.push({ source: 'daemon', subject: options.root, message: `daemon files not read: ${reason}` });
    return { config: { available: false, reason }, process, paths: [], problems, notes };
  }
  const config: DaemonView['config'] = podman
    ? { available: false, reason: 'the engine is Podman: no daemon.json applies to it' }
    : readDaemonJson(realRoot, configPath, options.safe);
  if (!config.available && !podman)
    problems.push({ source: 'daemon', subject: configPath, message: `${configPath}: ${config.reason}` });
  const settings = config.available ? config.settings : {};
  const settingPath = (name: string): string | undefined => {
    const value = settings[name];
    return typeof value === 'string' && isHostPath(value) ? value : undefined;
  };
  const socket = socketsOf(flags)[0] ?? sameRun(options.socketPath);
  const wanted: [string, string | string[]][] = [
    ['docker_socket', socket],
    ['containerd_socket', flag('containerd') ?? settingPath('containerd') ?? '/run/containerd/containerd.sock'],
    ['etc_docker', '/etc/docker'],
    ['daemon_json', configPath],
    ['certs_d', '/etc/docker/certs.d'],
    ['etc_default_docker', '/etc/default/docker'],
    ['etc_sysconfig_docker', '/etc/sysconfig/docker'],
    ['docker_service', UNIT_FOLDERS.map((d) => `${d}/docker.service`)],
    ['docker_socket_unit', UNIT_FOLDERS.map((d) => `${d}/docker.socket`)],
  ];
  for (const [setting, role] of [
    ['tlscacert', 'tls_ca'],
    ['tlscert', 'tls_cert'],
    ['tlskey', 'tls_key'],
  ] as const) {
    const path = flag(setting) ?? settingPath(setting);
    if (path !== undefined) wanted.push([role, path]);
  }
  for (const path of registryCerts(realRoot)) wanted.push(['registry_cert', path]);
  const names = accountNames(realRoot);
  const paths = wanted.map(([role, candidates]) => statPath(realRoot, role, candidates, names));
  return { config, process, paths, problems, notes };
}

/** The most registry certificate files looked at (a real certs.d holds a few). */
const MAX_REGISTRY_CERTS = 1000;

/**
 * The files in each registry's folder of /etc/docker/certs.d (`<registry>/ca.crt`, `client.cert`, …):
 * folders reached without following a symlink, the files listed, never opened.
 */
function registryCerts(realRoot: string): string[] {
  const found: string[] = [];
  const folder = (hostPath: string): string[] => {
    const located = locate(realRoot, hostPath);
    if (located.state !== 'found' || !located.stat.isDirectory()) return [];
    try {
      return readdirSync(fsName(located.fsPath), { encoding: 'buffer' }).map(nameFromBytes).sort(compareText);
    } catch {
      return []; // an unreadable folder: its files are not listed, the folder's own mode is
    }
  };
  for (const registry of folder('/etc/docker/certs.d')) {
    const registryPath = `/etc/docker/certs.d/${registry}`;
    for (const file of folder(registryPath)) {
      if (found.length >= MAX_REGISTRY_CERTS) return found;
      found.push(`${registryPath}/${file}`);
    }
  }
  return found;
}

const UNIT_FOLDERS = ['/etc/systemd/system', '/lib/systemd/system', '/usr/lib/systemd/system'];

function findProcess(options: DaemonHostOptions, notes: Problem[]): DaemonView['process'] {
  if (options.kind === 'podman') return { available: true, running: false, args: [], flags: {} };
  if (options.procUnavailable !== null)
    return { available: false, reason: `dockerd's command line not read: ${options.procUnavailable}` };
  let candidates: DockerdProcess[];
  try {
    candidates = dockerdProcesses(options.procRoot ?? '/proc', options.safe);
  } catch (error) {
    return { available: false, reason: `dockerd's command line not read: /proc (${errnoCode(error)})` };
  }
  const socket = sameRun(options.socketPath ?? '');
  const serving = candidates.filter((p) => socketsOf(p.flags).includes(socket));
  if (serving.length === 1) {
    const p = serving[0]!;
    return { available: true, running: true, args: p.args.map((a) => options.safe(a)), flags: p.flags };
  }
  const reason =
    serving.length > 1
      ? `several dockerd processes serve ${socket}: which one answers is not known`
      : `no dockerd process serving ${socket} was found (of ${candidates.length} dockerd here)`;
  notes.push({ source: 'daemon', subject: socket, message: `dockerd's command line not read: ${reason}` });
  return { available: false, reason };
}

function readDaemonJson(realRoot: string, hostPath: string, safe: SafeValueMaker): DaemonView['config'] {
  const located = locate(realRoot, hostPath);
  if (located.state === 'missing') return { available: true, exists: false, settings: {} };
  if (located.state === 'blocked') return { available: false, reason: `not read: ${located.error}` };
  const kind = kindOf(located.stat);
  if (kind !== 'file') return { available: false, reason: `not read: it is a ${kind}, not a regular file` };
  const read = readRegularFile(located.fsPath, located.stat, MAX_DAEMON_JSON_BYTES);
  if (!read.ok) return { available: false, reason: `not read: ${read.error}` };
  if (read.tooLarge || !read.content)
    return { available: false, reason: `not read: larger than ${MAX_DAEMON_JSON_BYTES} bytes` };
  let parsed: unknown;
  const text = read.content.toString('utf8').replace(/^\uFEFF/, '');
  try {
    // An empty daemon.json is what dockerd reads as no settings.
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    // Never the parser's message: it quotes the text around the error, which may be a secret.
    return { available: false, reason: 'not read: it is not valid JSON (as dockerd, which refuses to start on it)' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { available: false, reason: 'not read: it is not a JSON object' };
  // Before daemonSettingsOf walks it (recursively), and before the snapshot holds it.
  const deep = jsonTooDeep(text, parsed, MAX_DEPTH);
  if (deep !== null)
    return {
      available: false,
      reason: `not read: it nests more than ${MAX_DEPTH} levels deep (line ${deep.line}, column ${deep.column})`,
    };
  return { available: true, exists: true, settings: daemonSettingsOf(parsed as Record<string, unknown>, safe) };
}

interface AccountNames {
  users: Map<number, string>;
  groups: Map<number, string>;
}

/** The host's user and group names by id (/etc/passwd, /etc/group under the root); empty when not readable. */
function accountNames(realRoot: string): AccountNames {
  const table = (hostPath: string): Map<number, string> => {
    const names = new Map<number, string>();
    const located = locate(realRoot, hostPath);
    if (located.state !== 'found' || !located.stat.isFile()) return names;
    const read = readRegularFile(located.fsPath, located.stat, MAX_DAEMON_JSON_BYTES);
    if (!read.ok || !read.content) return names;
    for (const line of read.content.toString('utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name !== undefined && name !== '' && id !== undefined && /^\d+$/.test(id) && !names.has(Number(id)))
        names.set(Number(id), name);
    }
    return names;
  };
  return { users: table('/etc/passwd'), groups: table('/etc/group') };
}

/** The first of `candidates` that exists (else the first), with its owner and mode; never opened. */
function statPath(realRoot: string, role: string, candidates: string | string[], names: AccountNames): DaemonPath {
  const list = (typeof candidates === 'string' ? [candidates] : candidates).flatMap((p) =>
    // A path through /var/run (a symlink to /run) is looked at in /run: symlinks are never followed.
    p.startsWith('/var/run/') ? [sameRun(p)] : [posix.normalize(p)],
  );
  let first: DaemonPath | undefined;
  for (const path of list) {
    const located = locate(realRoot, path);
    let record: DaemonPath;
    if (located.state === 'missing') record = { role, path, exists: false };
    else if (located.state === 'blocked') record = { role, path, exists: null, error: located.error };
    else {
      const { stat } = located;
      const uid = Number(stat.uid);
      const gid = Number(stat.gid);
      const user = names.users.get(uid);
      const group = names.groups.get(gid);
      record = {
        role,
        path,
        exists: true,
        kind: kindOf(stat),
        mode: `0${(Number(stat.mode) & 0o7777).toString(8).padStart(3, '0')}`,
        uid,
        gid,
        ...(user !== undefined ? { user } : {}),
        ...(group !== undefined ? { group } : {}),
      };
    }
    if (record.exists === true) return record;
    first ??= record;
  }
  return first ?? { role, path: list[0] ?? '/', exists: false };
}
