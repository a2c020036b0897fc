import { collectIsolated, type CollectContext } from './collect/contract.js';
import { ComposeStart } from './collect/compose-start.js';
import { daemonCollector } from './collect/daemon.js';
import { engineCollector } from './collect/docker.js';
import { resolveEndpoint } from './collect/docker-endpoint.js';
import { hostIdentity } from './collect/host.js';
import { listenersCollector } from './collect/host-listeners.js';
import { ledgerCollector } from './collect/ledger.js';
import { procCollector } from './collect/proc-reader.js';
import { watchEngineEvents, type EngineChange } from './collect/engine-events.js';
import { boundFilesNotChecked, filesCollector } from './collect/files-collector.js';
import { pollListeners, watchFiles, type WatchChange } from './collect/host-watch.js';
import type { ReadCache, ReadTicket, WatchedSource } from './collect/read-cache.js';
import type { ScanSettings } from './config.js';
import type { HistoryInput } from './facts/history.js';
import type { ScopeJudge } from './scope.js';
import { createSafeValueMaker } from './secret/value.js';
import { SNAPSHOT_SCHEMA, type Container, type Snapshot } from './snapshot/types.js';
import { TOOL_NAME, TOOL_VERSION } from './version.js';

export { resolveHostname } from './collect/host.js';
export { ReadCache } from './collect/read-cache.js';
export type { EngineChange } from './collect/engine-events.js';
export type { WatchChange } from './collect/host-watch.js';

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
  /** serve's: what the last read saw, and the key it digested with (src/collect/read-cache.ts). */
  cache?: ReadCache;
}

/**
 * Reads the live host into a secret-safe snapshot: ledger, containers (with /proc where it can be
 * read), then every file any of them names. The HMAC key lives only in this call.
 * `earlier` are the host's previous snapshots: their former targets are collected too (097).
 */
export async function takeSnapshot(settings: ScanSettings, earlier: HistoryInput, hooks: ScanHooks): Promise<Snapshot> {
  const compose = new ComposeStart(hooks.scope, hooks.cache);
  try {
    return await snapshotWith(settings, earlier, hooks, compose);
  } finally {
    await compose.close();
  }
}

/**
 * Composes the collectors (src/collect/contract.ts), each isolated, in the order their dependencies need: the ledger
 * is read while the engine answers; /proc's reader before the engine's containers; the host's listeners and the
 * daemon after them; the files last, once the ledger and the containers have named them.
 */
async function snapshotWith(
  settings: ScanSettings,
  earlier: HistoryInput,
  hooks: ScanHooks,
  compose: ComposeStart,
): Promise<Snapshot> {
  const takenAt = hooks.now().toISOString();
  const context: CollectContext = {
    settings,
    scope: hooks.scope,
    endpoint: resolveEndpoint(settings.dockerHost),
    safe: createSafeValueMaker(hooks.cache?.key),
    progress: (message) => hooks.progress(message),
    ...(hooks.cache !== undefined ? { cache: { store: hooks.cache, ticket: hooks.cache.begin() } } : {}),
  };
  // serve's: a slice the watches follow is taken from the last read while its sources are unchanged (keptSlices).
  const day = takenAt.slice(0, 10);
  const kept = keptSlices(hooks.cache, context.cache?.ticket);
  const ledgerRead = kept('ledger', day, ['files'], () => collectIsolated(ledgerCollector, context));
  const host = await hostIdentity(settings);
  const proc = await collectIsolated(procCollector, context);
  const engine = await collectIsolated(engineCollector, { ...context, proc: proc.part, listed: compose.listed });
  const ledger = await ledgerRead;
  const listeners = await kept('listeners', `${day}|${proc.part.reason}`, ['listeners', 'files'], () =>
    collectIsolated(listenersCollector, { ...context, procReason: proc.part.reason, ledger: ledger.part }),
  );
  const daemon = await kept(
    'daemon',
    `${day}|${proc.part.reason}|${JSON.stringify(engine.part.docker)}`,
    ['daemon', 'files'],
    () => collectIsolated(daemonCollector, { ...context, procReason: proc.part.reason, engine: engine.part.docker }),
  );
  const files = await kept(
    'files',
    `${day}|${historyKey(earlier)}|${namingKey(hooks.cache, engine.part.containers)}`,
    ['files'],
    () =>
      collectIsolated(filesCollector, {
        ...context,
        ledger: ledger.part,
        containers: engine.part.containers,
        earlier,
        compose: compose.pool,
      }),
  );
  // Joined source by source, in this order whatever order the sources were read in (the files bound into containers,
  // as they see them, after the files).
  const bound = { problems: boundFilesNotChecked(engine.part.containers), notes: [] };
  const slices = [proc, listeners, ledger, engine, daemon, files, bound];
  const notes = slices.flatMap((s) => s.notes);
  return {
    schema: SNAPSHOT_SCHEMA,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    takenAt,
    host,
    config: configOf(settings),
    docker: engine.part.docker,
    containers: engine.part.containers,
    images: engine.part.images,
    daemon: {
      info: engine.part.daemonInfo,
      config: daemon.part.config,
      process: daemon.part.process,
      paths: daemon.part.paths,
    },
    networks: engine.part.networks,
    volumes: engine.part.volumes,
    hostListeners: listeners.part,
    files: files.part,
    ledger: ledger.part,
    problems: slices.flatMap((s) => s.problems),
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/**
 * The settings the facts depend on, as the snapshot records them: the last object made again while they are the same
 * (the same lists), so that serve's reads share it (src/facts/incremental-subjects.ts compares by identity first).
 */
let lastConfig: Snapshot['config'] | undefined;
function configOf(settings: ScanSettings): Snapshot['config'] {
  const last = lastConfig;
  if (
    last !== undefined &&
    last.managedRoots === settings.managedRoots &&
    last.labels === settings.labels &&
    last.envFileSyntax === settings.envFileSyntax
  )
    return last;
  return (lastConfig = {
    managedRoots: settings.managedRoots,
    labels: settings.labels,
    envFileSyntax: settings.envFileSyntax,
  });
}

/**
 * serve's slices kept from one read to the next (src/collect/read-cache.ts, keepSlice): `kept(name, key, from, read)`
 * is the last read's slice when none of `from` changed and `key` is the same, else `read()`'s, kept for the next. A
 * scan (no cache) reads each.
 */
function keptSlices(cache: ReadCache | undefined, ticket: ReadTicket | undefined) {
  return async <T extends { problems: readonly unknown[] }>(
    name: string,
    key: string,
    from: readonly WatchedSource[],
    read: () => Promise<T>,
  ): Promise<T> => {
    if (cache === undefined || ticket === undefined) return read();
    // What was kept under `name` is what `read` gave for it (keepSlice below).
    const slice = cache.slice(name, key) as T | undefined;
    if (slice !== undefined) return slice;
    const fresh = await read();
    cache.keepSlice(ticket, name, key, from, fresh);
    return fresh;
  };
}

/** Which history a read was given: the same object is the same history (serve loads it once per whole read). */
const histories = new WeakMap<object, number>();
let historiesMet = 0;
function historyKey(earlier: HistoryInput): number {
  let key = histories.get(earlier);
  if (key === undefined) histories.set(earlier, (key = ++historiesMet));
  return key;
}

/**
 * What of the containers says which files a read reads (their ids and names, labels, mounts), as a version: the same
 * while that is the same from one read to the next, another once it differs (the files slice is taken from the last
 * read only under the same version: src/collect/files-collector.ts, filesToRead). A scan (no cache) needs none.
 */
function namingKey(cache: ReadCache | undefined, containers: readonly Container[]): string {
  if (cache === undefined) return '';
  const texts = containers.map(namingOf);
  const last = namingVersions.get(cache);
  if (last !== undefined && last.texts.length === texts.length && last.texts.every((t, i) => t === texts[i]))
    return String(last.version);
  const version = (last?.version ?? 0) + 1;
  namingVersions.set(cache, { texts, version });
  return String(version);
}

const namingVersions = new WeakMap<ReadCache, { texts: readonly string[]; version: number }>();

/** A container's id, name, labels and mounts as JSON text (no name or label can make two lists read the same), made
 * once per record: a container taken whole from the cache is the same record from read to read. */
const namings = new WeakMap<Container, string>();
function namingOf(c: Container): string {
  let text = namings.get(c);
  if (text === undefined) namings.set(c, (text = JSON.stringify([c.id, c.name, c.labels, c.mounts])));
  return text;
}

/** What `serve` is told by its watches on the host (src/serve/resident.ts). */
export interface HostWatchers {
  /** Something changed: what, when an engine event or a watch says (nothing: anything may have). */
  changed(change?: EngineChange | WatchChange): void;
  /** The engine can no longer be heard (until `back`). */
  lost(cause: string): void;
  back(cause: string): void;
  /** The engine's events stream is open: each change is told from now on (until `lost`). */
  heard?(): void;
  /** What the folder watches do not cover after a read (none: all), as long as it holds. */
  unwatched(causes: readonly string[]): void;
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
  options: { signal: AbortSignal; listenersEveryMs: number; retryMs: number; cache?: ReadCache },
): { follow(snapshot: Snapshot): boolean } {
  watchEngineEvents(resolveEndpoint(settings.dockerHost), handlers, {
    signal: options.signal,
    retryMs: options.retryMs,
    requestTimeoutMs: settings.dockerTimeoutSeconds * 1000,
  });
  const files = watchFiles(settings.root, handlers);
  const cache = options.cache;
  const listeners = pollListeners(
    settings.root,
    options.listenersEveryMs,
    handlers,
    cache && (() => cache.watchedProcesses()),
  );
  options.signal.addEventListener(
    'abort',
    () => {
      files.stop();
      listeners.stop();
    },
    { once: true },
  );
  // The files of the last snapshot followed: a read that took them whole (none of their folders changed) follows the
  // very same list, and every folder asked for is watched already.
  let followed: Snapshot['files'] | undefined;
  return {
    follow: (snapshot) => {
      if (snapshot.files === followed && files.whole()) return false;
      followed = snapshot.files;
      return files.follow([settings.ledger, DAEMON_JSON, ...snapshot.files.map((f) => f.path)], settings.managedRoots);
    },
  };
}
