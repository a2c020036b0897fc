import { collectIsolated, type CollectContext } from './collect/contract.js';
import { ComposeStart } from './collect/compose-start.js';
import { daemonCollector } from './collect/daemon.js';
import { engineCollector } from './collect/docker.js';
import { resolveEndpoint } from './collect/docker-endpoint.js';
import { filesCollector } from './collect/files-collector.js';
import { hostIdentity } from './collect/host.js';
import { listenersCollector } from './collect/host-listeners.js';
import { ledgerCollector } from './collect/ledger.js';
import { procCollector } from './collect/proc-reader.js';
import { watchEngineEvents, type EngineChange } from './collect/engine-events.js';
import { pollListeners, watchFiles } from './collect/host-watch.js';
import type { ReadCache } from './collect/read-cache.js';
import type { ScanSettings } from './config.js';
import type { HistoryInput } from './facts/history.js';
import type { ScopeJudge } from './scope.js';
import { createSafeValueMaker } from './secret/value.js';
import { SNAPSHOT_SCHEMA, type Snapshot } from './snapshot/types.js';
import { TOOL_NAME, TOOL_VERSION } from './version.js';

export { resolveHostname } from './collect/host.js';
export { ReadCache } from './collect/read-cache.js';
export type { EngineChange } from './collect/engine-events.js';

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
  const ledgerRead = collectIsolated(ledgerCollector, context);
  const host = await hostIdentity(settings);
  const proc = await collectIsolated(procCollector, context);
  const engine = await collectIsolated(engineCollector, { ...context, proc: proc.part, listed: compose.listed });
  const ledger = await ledgerRead;
  const listeners = await collectIsolated(listenersCollector, {
    ...context,
    procReason: proc.part.reason,
    ledger: ledger.part,
  });
  const daemon = await collectIsolated(daemonCollector, {
    ...context,
    procReason: proc.part.reason,
    engine: engine.part.docker,
  });
  const files = await collectIsolated(filesCollector, {
    ...context,
    ledger: ledger.part,
    containers: engine.part.containers,
    earlier,
    compose: compose.pool,
  });
  // Joined source by source, in this order whatever order the sources were read in.
  const slices = [proc, listeners, ledger, engine, daemon, files];
  const notes = slices.flatMap((s) => s.notes);
  return {
    schema: SNAPSHOT_SCHEMA,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    takenAt,
    host,
    config: { managedRoots: settings.managedRoots, labels: settings.labels, envFileSyntax: settings.envFileSyntax },
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

/** What `serve` is told by its watches on the host (src/serve/resident.ts). */
export interface HostWatchers {
  /** Something changed: what, when an engine event says (a file or the sockets: nothing more). */
  changed(change?: EngineChange): void;
  /** The engine can no longer be heard (until `back`). */
  lost(cause: string): void;
  back(cause: string): void;
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
  options: { signal: AbortSignal; listenersEveryMs: number; retryMs: number },
): { follow(snapshot: Snapshot): boolean } {
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
