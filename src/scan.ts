import { readRegularInput } from './input/read.js';
import { endpointText } from './text/endpoint.js';
import { keptLabels } from './secret/labels.js';
import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import { collectDaemonHost } from './collect/daemon.js';
import { collectDocker, engineUnread } from './collect/docker.js';
import { resolveEndpoint } from './collect/docker-endpoint.js';
import { collectFiles } from './collect/files.js';
import { COMPOSE_IN_WORKER_FILES, ComposePool } from './collect/compose-pool.js';
import type { ContainerSummary } from './collect/docker-api.js';
import { COMPOSE_LABELS, composeFilesOf } from './engine/compose-labels.js';
import { readHostListeners } from './collect/host-listeners.js';
import { watchEngineEvents } from './collect/engine-events.js';
import { pollListeners, watchFiles } from './collect/host-watch.js';
import { readLedger } from './collect/ledger.js';
import { ownContainerId } from './collect/self.js';
import { procUnavailableReason, readProcessTable, readProcView, type ProcessTable } from './collect/proc.js';
import type { ProcNetRow } from './collect/proc-net.js';
import type { ScanSettings } from './config.js';
import type { ContainerInspect } from './collect/inspect.js';
import { createSafeValueMaker, type SafeValueMaker } from './secret/value.js';
import {
  SNAPSHOT_SCHEMA,
  type Container,
  type FileRecord,
  type HostListenerView,
  type LedgerEntry,
  type Problem,
  type Snapshot,
} from './snapshot/types.js';
import { TOOL_NAME, TOOL_VERSION } from './version.js';
import type { ScopeJudge } from './scope.js';
import { pastOfAll, type HistoryInput } from './facts/history.js';
import { compareText } from './text/compare.js';

export interface ScanHooks {
  now(): Date;
  /** Progress for a person watching (the caller decides whether anyone is). */
  progress(message: string): void;
  /**
   * What the run looks at (--include, --exclude, ignore entries). What is out of scope is not read: an
   * excluded container is listed and inspected (so it is counted), but neither its /proc nor the files
   * only it names are read, so another system's unreadable file cannot make the run incomplete.
   */
  scope?: ScopeJudge;
}

/** The host's name: from settings, else the mounted host's /etc/hostname under --root, else ours. */
export async function resolveHostname(settings: ScanSettings): Promise<string> {
  if (settings.hostname !== undefined) return settings.hostname;
  if (settings.root !== '/') {
    // The scanner runs in a container: the host's name is in the host's files, not in ours.
    try {
      const name = (await readRegularInput(join(settings.root, 'etc', 'hostname'))).toString('utf8').trim();
      if (name.length > 0) return name;
    } catch {
      // fall through to our own name
    }
  }
  return osHostname();
}

/**
 * Reads the live host into a secret-safe snapshot: ledger, containers (with /proc where it can be
 * read), then every file any of them names. The HMAC key lives only in this call.
 * `earlier` are the host's previous snapshots: their former targets are collected too (097).
 */
export async function takeSnapshot(settings: ScanSettings, earlier: HistoryInput, hooks: ScanHooks): Promise<Snapshot> {
  // The Compose files' reader, started as soon as the container list says many are coming (ComposePool.prestart).
  const compose: { pool?: ComposePool } = {};
  try {
    return await snapshotWith(settings, earlier, hooks, compose);
  } finally {
    await compose.pool?.close();
  }
}

async function snapshotWith(
  settings: ScanSettings,
  earlier: HistoryInput,
  hooks: ScanHooks,
  compose: { pool?: ComposePool },
): Promise<Snapshot> {
  const safe = createSafeValueMaker();
  const takenAt = hooks.now().toISOString();
  const problems: Problem[] = [];
  const notes: Problem[] = [];

  hooks.progress(`reading ledger ${settings.ledger}`);
  // The ledger is read while the engine answers (its reads and the engine's waits overlap).
  const ledgerRead = isolated<Awaited<ReturnType<typeof readLedger>>>(
    () => readLedger(settings.ledger, { root: settings.root, safe }),
    (reason) => ({
      ledger: { path: settings.ledger, available: false, entries: [] },
      problems: [
        { source: 'ledger', subject: settings.ledger, message: `ledger ${settings.ledger} not read: ${reason}` },
      ],
    }),
  );

  // The container the scanner runs in, if any: the hardening rules leave it out (it mounts the host by design).
  const scannerContainer = await ownContainerId();
  const endpoint = resolveEndpoint(settings.dockerHost);
  const procReason = await isolated(
    () => procUnavailableReason({ endpointIsLocalSocket: endpoint.local }),
    (reason) => {
      problems.push({ source: 'proc', message: `whether /proc shows the containers' processes not known: ${reason}` });
      return reason;
    },
  );
  if (procReason !== null)
    notes.push({
      source: 'proc',
      message:
        `container processes not read from /proc: ${procReason}; env, sockets and bind-mounted files as ` +
        `containers see them, and the host's listening sockets, were not read: the rules on them are not checked`,
    });

  hooks.progress(`reading containers from ${endpoint.url}`);
  const proc = procReason === null ? procReaderFor(settings.root, safe, hooks.scope, problems) : undefined;
  const docker = await isolated<Awaited<ReturnType<typeof collectDocker>>>(
    () =>
      collectDocker({
        endpoint,
        safe,
        deadlineMs: settings.dockerTimeoutSeconds * 1000,
        labelKeys: settings.labels,
        listed: (summaries) => {
          // Fewer named (an engine whose list carries no labels), the file collection decides from the inspects.
          const files = listedComposeFiles(summaries, hooks.scope);
          if (files < COMPOSE_IN_WORKER_FILES) return;
          compose.pool = new ComposePool(files);
          compose.pool.prestart();
        },
        ...(proc !== undefined
          ? { readProc: proc.read, whileListing: proc.readProcessTable }
          : { procUnavailable: procReason ?? 'not read' }),
      }),
    (reason) =>
      engineUnread(`the engine at ${endpoint.url} was not read: ${reason}`, [
        { source: 'docker', subject: endpoint.url, message: `the engine at ${endpoint.url} not read: ${reason}` },
      ]),
  );
  // The host's own sockets, after the containers' (a socket is attributed to a container by its process's cgroup).
  // Not read when every one is out of scope (`listener:*`): what is out of scope is not read.
  const everyListenerOut = hooks.scope?.everyListenerOut ?? null;
  const hostListeners: HostListenerView =
    everyListenerOut !== null
      ? { available: false, reason: `the host's listening sockets not read: out of scope by ${everyListenerOut}` }
      : procReason === null
        ? await isolated(readHostListeners, (reason) => ({ available: false, reason }))
        : { available: false, reason: `the host's listening sockets not read from /proc: ${procReason}` };
  if (!hostListeners.available && procReason === null && everyListenerOut === null)
    problems.push({ source: 'listeners', message: `the host's listening sockets not read: ${hostListeners.reason}` });
  const endpointOf = (s: { address: string; port: number; protocol: string }) =>
    endpointText(s.address, s.port, s.protocol);
  // A socket left out of scope (another system's, `listener:ADDRESS:PORT`) is not spoken of.
  const unheld = hostListeners.available
    ? hostListeners.sockets.filter(
        (s) => s.holderUnknown !== undefined && (hooks.scope?.listener(endpointOf(s)) ?? true),
      )
    : [];
  if (unheld.length > 0)
    notes.push({
      source: 'listeners',
      message:
        `${unheld.length} socket(s) listening on the host with no known holder: no process the scan could read ` +
        `holds them, and some processes' fds are closed to it (${unheld[0]!.holderUnknown!}): ` +
        unheld.map(endpointOf).join(', ') +
        `; a rule on who holds them is not checked (another system's socket can be left out of scope: ` +
        `listener:ADDRESS:PORT, or run the scan where it can read every process's fds)`,
    });
  const ledger = await ledgerRead;
  problems.push(...ledger.problems);
  problems.push(...docker.problems);
  notes.push(...docker.notes);
  const daemonHost = await isolated<Awaited<ReturnType<typeof collectDaemonHost>>>(
    () =>
      collectDaemonHost({
        root: settings.root,
        safe,
        socketPath: endpoint.local && docker.docker !== null ? endpoint.socketPath : undefined,
        procUnavailable: procReason,
        kind: docker.docker?.kind,
      }),
    (reason) => ({
      config: { available: false, reason: `daemon.json not read: ${reason}` },
      process: { available: false, reason: `dockerd's command line not read: ${reason}` },
      paths: [],
      problems: [
        { source: 'daemon', message: `daemon.json, dockerd's command line and the daemon's files not read: ${reason}` },
      ],
      notes: [],
    }),
  );
  problems.push(...daemonHost.problems);
  notes.push(...daemonHost.notes);

  const failed = { files: false };
  const files = await isolated<Awaited<ReturnType<typeof collectFiles>>>(
    () => {
      const { paths, envPaths, composePaths } = filesToRead(
        ledger.ledger.entries.map((r) => r.entry),
        docker.containers,
        earlier,
        settings.labels.sources,
        hooks.scope,
      );
      hooks.progress(`reading ${new Set(paths).size} files and ${settings.managedRoots.length} managed roots`);
      return collectFiles({
        root: settings.root,
        paths: [...new Set(paths)].filter((p) => p.startsWith('/')),
        envPaths,
        composePaths,
        ...(compose.pool !== undefined ? { compose: compose.pool } : {}),
        managedRoots: settings.managedRoots,
        maxFiles: settings.maxFiles,
        safe,
        ...(hooks.scope ? { skip: (path: string) => !hooks.scope!.path(path) } : {}),
      });
    },
    (reason) => {
      failed.files = true;
      // The ledger's files and the managed roots are there, unknown: none reads as missing, or as unclaimed by its
      // absence. (Those only containers name are unknown by having no record: src/facts/file-facts.ts, fileUnknown.)
      const targets = ledger.ledger.entries.flatMap((r) =>
        r.entry.type === 'file' && typeof r.entry.target === 'string' && r.entry.target.startsWith('/')
          ? [r.entry.target]
          : [],
      );
      const unread = [...new Set([...targets, ...settings.managedRoots])].sort(compareText);
      return {
        files: unread.map((path): FileRecord => ({ path, kind: 'unknown', error: `not read: ${reason}` })),
        problems: [{ source: 'files', message: `the files and managed roots not read: ${reason}` }],
      };
    },
  );
  problems.push(...files.problems);
  // After a failed collection, its one problem says it: not one more per file.
  problems.push(...notChecked(failed.files ? [] : files.files, docker.containers));
  return {
    schema: SNAPSHOT_SCHEMA,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    takenAt,
    host: {
      hostname: await resolveHostname(settings),
      ...(settings.root !== '/' ? { root: settings.root } : {}),
      ...(scannerContainer !== null ? { scannerContainer } : {}),
    },
    config: { managedRoots: settings.managedRoots, labels: settings.labels, envFileSyntax: settings.envFileSyntax },
    docker: docker.docker,
    containers: docker.containers,
    images: docker.images,
    daemon: {
      info: docker.daemonInfo,
      config: daemonHost.config,
      process: daemonHost.process,
      paths: daemonHost.paths,
    },
    networks: docker.networks,
    volumes: docker.volumes,
    hostListeners,
    files: files.files,
    ledger: ledger.ledger,
    problems,
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/**
 * The /proc reader for each inspected container. One read of the process table serves all containers
 * (made while the engine lists them, or on the first running one), and one read of each network
 * namespace's socket tables. Bind-mount sources that are regular files are what /proc compares; known
 * only after inspect, so the proc reader checks the kind itself through the host root.
 */
function procReaderFor(
  hostRoot: string,
  safe: SafeValueMaker,
  scope: ScopeJudge | undefined,
  problems: Problem[],
): { read: (inspect: ContainerInspect) => ReturnType<typeof readProcView>; readProcessTable: () => void } {
  let processTable: Promise<ProcessTable> | undefined;
  const sharedProcessTable = (): Promise<ProcessTable> => (processTable ??= readProcessTable());
  const netTables = new Map<string, Promise<ProcNetRow[]>>();
  return {
    // A failure is each container's, when it asks.
    readProcessTable: () => void sharedProcessTable().catch(() => undefined),
    // One container's /proc failing unexpectedly is that container's: its /proc facts unknown, the others read.
    read: (inspect) =>
      isolated(
        () => readProcOf(inspect),
        (reason) => {
          const name = inspect.Name.replace(/^\//, '');
          problems.push({ source: 'proc', subject: name, message: `${name}: its /proc not read: ${reason}` });
          return { available: false, reason: `its /proc not read: ${reason}` };
        },
      ),
  };
  function readProcOf(inspect: ContainerInspect): ReturnType<typeof readProcView> {
    return scope && !scope.container(inspect.Name.replace(/^\//, ''), keptLabels(inspect.Config?.Labels))
      ? Promise.resolve({ available: false, reason: 'out of scope: not read' })
      : readProcView(
          {
            id: inspect.Id,
            running: inspect.State?.Running ?? false,
            pid: inspect.State?.Pid ?? 0,
            mounts: (inspect.Mounts ?? []).map((m) => ({
              type: m.Type ?? '',
              source: m.Source ?? '',
              destination: m.Destination ?? '',
            })),
          },
          new Set((inspect.Mounts ?? []).filter((m) => m.Type === 'bind' && m.Source).map((m) => m.Source!)),
          { hostRoot, safe, processTable: sharedProcessTable, netTables },
        );
  }
}

/**
 * One collector's call. An exception thrown inside it (a defect, or input nobody foresaw) is that source's problem,
 * never the run's: `unread` gives the source as not read, with a problem that says what and why, so every fact taken
 * from it is unknown and the other sources are still read. The reason names the error's kind only: its message may
 * quote what was being read (V8's JSON errors do), and that may be a secret.
 */
async function isolated<T>(read: () => T | Promise<T>, unread: (reason: string) => T): Promise<T> {
  try {
    return await read();
  } catch (error) {
    return unread(`its reader failed unexpectedly (${faultKind(error)})`);
  }
}

/** An unexpected error's kind, in words that quote nothing read. */
function faultKind(error: unknown): string {
  if (error instanceof RangeError && /call stack/i.test(error.message)) return 'stack overflow';
  if (error instanceof Error) return /^[A-Za-z]{1,40}$/.test(error.name) ? error.name : 'Error';
  return 'a thrown non-error';
}

/**
 * Every file the ledger, the containers (labels, bind mounts) and the host's memory name; env files
 * apart. With a scope, only what it covers: the files of containers in scope (whatever their paths:
 * a container in scope is checked against its sources), and ledger targets and former targets whose
 * paths are in scope.
 */
function filesToRead(
  entries: readonly Partial<LedgerEntry>[],
  allContainers: readonly Container[],
  earlier: HistoryInput,
  sourcesLabel: string,
  scope: ScopeJudge | undefined,
): { paths: string[]; envPaths: string[]; composePaths: string[] } {
  const containers = scope ? allContainers.filter((c) => scope.container(c.name, c.labels)) : allContainers;
  const byTarget = new Map(
    allContainers.flatMap(
      (c) =>
        [
          [c.name, c],
          [c.id, c],
        ] as const,
    ),
  );
  const entryInScope = (e: Partial<LedgerEntry>): boolean => {
    if (!scope || e.type !== 'container' || typeof e.target !== 'string') return true;
    const c = byTarget.get(e.target);
    return c ? scope.container(c.name, c.labels) : scope.containerByName(e.target);
  };
  const pathInScope = (p: string): boolean => !scope || scope.path(p);
  const labelSources = containers.flatMap((c) =>
    (c.labels[sourcesLabel] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.startsWith('/')),
  );
  const ledgerSources = entries.filter(entryInScope).flatMap((e) => e.sources ?? []);
  // Every file target the host's ledgers ever named, and every one the scanner's memory still holds (097).
  // (A list the history's index shares among nights is looked at once: its paths are already in.)
  const formerFiles: string[] = [];
  const listsMet = new Set<readonly { type?: string; target: string }[]>();
  for (const s of pastOfAll(earlier)) {
    for (const list of [s.ledger.entries, s.formerTargets]) {
      if (listsMet.has(list)) continue;
      listsMet.add(list);
      for (const r of list) if (r.type === 'file') formerFiles.push(r.target);
    }
  }
  const paths = [
    ...entries
      .filter((e) => e.type === 'file' && e.target?.startsWith('/'))
      .map((e) => e.target!)
      .filter(pathInScope),
    ...ledgerSources,
    ...labelSources,
    ...containers.flatMap((c) =>
      c.mounts.filter((m) => m.type === 'bind' && m.source.startsWith('/')).map((m) => m.source),
    ),
    ...formerFiles.filter(pathInScope),
  ];
  // The Compose files of the Compose-made containers in scope: which env keys they give inline (MA1004).
  const composePaths = containers.flatMap((c) => {
    if (c.labels[COMPOSE_LABELS.service] === undefined) return [];
    const files = composeFilesOf(c.labels);
    return 'paths' in files ? files.paths : [];
  });
  return {
    paths,
    envPaths: [...new Set([...ledgerSources, ...labelSources])],
    composePaths: [...new Set(composePaths)],
  };
}

/**
 * How many Compose files the listed containers' labels name (those in scope), before any inspect: enough to tell
 * whether their reader is worth a worker (compose-pool.ts). The inspects' labels are what decides which files are read.
 */
function listedComposeFiles(summaries: readonly ContainerSummary[], scope: ScopeJudge | undefined): number {
  const files = new Set<string>();
  for (const summary of summaries) {
    const labels = stringLabels(summary.Labels);
    if (labels[COMPOSE_LABELS.service] === undefined) continue;
    const name = summary.Names?.[0]?.replace(/^\//, '') ?? summary.Id;
    if (scope && !scope.container(name, keptLabels(labels))) continue;
    const named = composeFilesOf(labels);
    if ('paths' in named) for (const path of named.paths) files.add(path);
  }
  return files.size;
}

/** A list's labels as far as they are strings (the list is the engine's answer, unchecked). */
function stringLabels(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** What could not be read was not checked: the scan says so, and is incomplete. */
function notChecked(files: readonly FileRecord[], containers: readonly Container[]): Problem[] {
  const problems: Problem[] = [];
  for (const f of files) {
    if (f.error !== undefined)
      problems.push({ source: 'files', subject: f.path, message: `${f.path} not checked: ${f.error}` });
    if (f.compose !== undefined && 'error' in f.compose)
      problems.push({
        source: 'files',
        subject: f.path,
        message:
          `${f.path} not read as a Compose file (${f.compose.error}): ` +
          'the env keys its services give inline are not known',
      });
  }
  for (const c of containers) {
    if (!c.proc.available) continue;
    for (const b of c.proc.boundFiles) {
      if (b.error !== undefined)
        problems.push({
          source: 'proc',
          subject: c.name,
          message: `${c.name}: ${b.destination} as the container sees it not checked: ${b.error}`,
        });
    }
  }
  return problems;
}

/** What `serve` is told by its watches on the host (src/serve/resident.ts). */
export interface HostWatchers {
  changed(): void;
  lost(cause: string): void;
  back(cause: string): void;
}

/** Where daemon.json is read (the daemon's facts); watched so that an edit is read without waiting for a reload. */
const DAEMON_JSON = '/etc/docker/daemon.json';

/**
 * The watches `serve` keeps on what a scan reads: the engine's events, the folders of the files the last snapshot
 * read (the ledger, the managed roots, each file a container was made from, daemon.json), and the socket tables
 * every `listenersEveryMs`. `follow(snapshot)` moves the file watches to a new snapshot's files.
 */
export function watchHost(
  settings: ScanSettings,
  handlers: HostWatchers,
  options: { signal: AbortSignal; listenersEveryMs: number; retryMs: number },
): { follow(snapshot: Snapshot): void } {
  watchEngineEvents(resolveEndpoint(settings.dockerHost), handlers, {
    signal: options.signal,
    retryMs: options.retryMs,
    requestTimeoutMs: settings.dockerTimeoutSeconds * 1000,
  });
  const files = watchFiles(settings.root, handlers);
  const listeners = pollListeners(settings.root, options.listenersEveryMs, handlers);
  options.signal.addEventListener(
    'abort',
    () => {
      files.stop();
      listeners.stop();
    },
    { once: true },
  );
  return {
    follow: (snapshot) =>
      files.follow([settings.ledger, DAEMON_JSON, ...snapshot.files.map((f) => f.path)], settings.managedRoots),
  };
}
