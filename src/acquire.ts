import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ScanSettings } from './config.js';
import { MeshAuditError } from './errors.js';
import { pastOf, withMemory } from './facts/history.js';
import { resolveHostname, takeSnapshot, type ReadCache } from './scan.js';
import { loadHistory, type History, type HistoryReading } from './snapshot/history.js';
import { keepSnapshot, readOwnHistory } from './snapshot/history-store.js';
import { loadSnapshot } from './snapshot/load.js';
import { withProblems } from './snapshot/problems.js';
import type { Problem, Snapshot } from './snapshot/types.js';
import { WriteFailure } from './write/atomic.js';
import type { ScopeJudge } from './scope.js';
import { TOOL_VERSION } from './version.js';

/*
 * The snapshot a command works on, shared by `scan`, `snapshot` and `premigrate`: a saved one with the
 * history beside it, or the live host read now with the history that tells former targets (097). What
 * it tells the user goes through AcquireIo, given by the command line (src/cli/acquire.ts).
 */

/** What acquisition says while it works; the command line decides where it goes (and whether anyone watches). */
export interface AcquireIo {
  now(): Date;
  /** `using the history beside …`, `kept snapshot …`. */
  note(text: string): void;
  /** For --verbose only: how the history was read. */
  detail(text: string): void;
  /** A source that could not be read, told as it is met (it is in the reports too). */
  problem(message: string): void;
  /** A progress line for one read of the host. */
  startProgress(): { step(message: string): void; done(summary?: string): void };
}

/** The folder a run holds: where the scanner keeps its own history. */
export interface HistoryHome {
  dir: string;
  sequence: number;
}

export interface Acquired {
  snapshots: Snapshot[];
  history: History;
  keepCount: number;
  /**
   * Keeps a live snapshot as history under --out (nothing for a saved one). A snapshot that could not
   * be kept (a full disk) is a problem of the run, returned to be added to what it reports.
   */
  keep(): Promise<Problem[]>;
}

export interface AcquireRequest {
  /** A saved snapshot to use instead of reading the host. */
  snapshot?: string;
  /** A folder of earlier snapshots (default: beside a saved snapshot, else the scanner's own under --out). */
  history?: string;
  /** How many snapshots the history keeps, for a saved snapshot (a live read takes it from its settings). */
  keep: number;
  /** The scan settings, asked for only when the host is read. */
  settings(): Promise<ScanSettings>;
  /** What the run looks at: what is out of scope is not read (src/scan.ts). */
  scope?: ScopeJudge;
  /** serve's: what its last read saw (src/collect/read-cache.ts). */
  cache?: ReadCache;
  /** serve's: the history it holds in memory, used instead of reading one (src/serve/kept-history.ts). */
  loaded?: History;
}

const NO_HISTORY: History = { snapshots: [], problems: [], files: new Map() };

/** How this mesh-audit reads history: each kept snapshot from its folder's index where it can be (--verbose says). */
export const historyReading = (say?: (line: string) => void): HistoryReading => ({
  pastOf,
  tool: TOOL_VERSION,
  ...(say ? { say } : {}),
});

/**
 * `named`, else the `history/` folder beside `file` (`what`: the snapshot, the output) when there is one, said in a
 * note; else none.
 */
export function historyFolderFor(
  file: string,
  what: string,
  named: string | undefined,
  io: AcquireIo,
): string | undefined {
  if (named !== undefined) return named;
  const beside = join(dirname(file), 'history');
  if (!existsSync(beside)) return undefined;
  io.note(`using the history beside ${what}: ${beside}`);
  return beside;
}

/**
 * Reads the live host with a progress line; the snapshot carries the memory of former targets, so pruning history never
 * loses it.
 */
export async function readHost(
  settings: ScanSettings,
  history: History,
  io: AcquireIo,
  scope?: ScopeJudge,
  cache?: ReadCache,
): Promise<Snapshot> {
  const progress = io.startProgress();
  let taken: Snapshot;
  try {
    taken = await takeSnapshot(settings, history.snapshots, {
      now: () => io.now(),
      progress: (m) => progress.step(m),
      ...(scope ? { scope } : {}),
      ...(cache ? { cache } : {}),
    });
  } catch (err) {
    progress.done();
    throw err;
  }
  progress.done(
    `read ${taken.containers.length} containers, ${taken.files.length} files, ${taken.ledger.entries.length} ledger ` +
      `entries; ${taken.problems.length} source${taken.problems.length === 1 ? '' : 's'} not read`,
  );
  return withMemory(taken, history.snapshots);
}

export async function acquireSnapshot(request: AcquireRequest, io: AcquireIo, home?: HistoryHome): Promise<Acquired> {
  if (request.snapshot !== undefined) {
    const historyDir = historyFolderFor(request.snapshot, 'the snapshot', request.history, io);
    const history =
      historyDir !== undefined
        ? await loadHistory(
            historyDir,
            historyReading((line) => io.detail(line)),
          )
        : NO_HISTORY;
    return {
      snapshots: [await loadSnapshot(request.snapshot)],
      history,
      keepCount: request.keep,
      keep: () => Promise.resolve([]),
    };
  }
  const settings = await request.settings();
  const hostname = await resolveHostname(settings);
  // The scanner's own history lives in the output folder this run holds.
  const own = request.history === undefined ? home : undefined;
  const history = request.loaded ?? (await historyForHost(hostname, request.history, own?.dir, io));
  const snapshot = await readHost({ ...settings, hostname }, history, io, request.scope, request.cache);
  for (const p of [...snapshot.problems, ...history.problems]) io.problem(p.message);
  return {
    snapshots: [snapshot],
    history,
    keepCount: settings.keep,
    keep: () => (own === undefined ? Promise.resolve([]) : keepAsHistory(own, snapshot, settings.keep, history, io)),
  };
}

/**
 * The history a live read of `hostname` is told former targets by: the folder `named`, else the scanner's own in the
 * output folder `ownDir`, else none.
 */
export async function historyForHost(
  hostname: string,
  named: string | undefined,
  ownDir: string | undefined,
  io: AcquireIo,
): Promise<History> {
  const reading = historyReading((line) => io.detail(line));
  if (named !== undefined) return loadHistory(named, reading);
  if (ownDir !== undefined) return readOwnHistory(ownDir, hostname, reading);
  return NO_HISTORY;
}

/**
 * Keeps a live snapshot as run `home.sequence`'s history in the output folder `home.dir` (held by the caller), the
 * newest `keep` of its host kept: scan's and serve's. A snapshot that could not be kept (a full disk, an unsafe folder)
 * is a problem returned, said through `io.problem`.
 */
export async function keepAsHistory(
  home: HistoryHome,
  snapshot: Snapshot,
  keep: number,
  history: History,
  io: AcquireIo,
): Promise<Problem[]> {
  try {
    const kept = await keepSnapshot(home.dir, home.sequence, snapshot, keep, {
      past: pastOf(snapshot),
      history,
      tool: TOOL_VERSION,
      indexNotWritten: (message) => io.note(message),
    });
    io.note(`kept snapshot ${kept}`);
    return [];
  } catch (err) {
    if (!(err instanceof WriteFailure) && !(err instanceof MeshAuditError)) throw err;
    const message = `history snapshot not kept: ${err.message}; the next scan will not know this one's targets`;
    io.problem(message);
    return [{ source: 'history', subject: err instanceof WriteFailure ? err.path : home.dir, message }];
  }
}

/**
 * The live host for `mesh-audit snapshot`: the same memory as a scan, history from `historyDir`, its problems in the
 * snapshot.
 */
export async function snapshotOfHost(
  settings: ScanSettings,
  historyDir: string | undefined,
  io: AcquireIo,
  scope?: ScopeJudge,
): Promise<Snapshot> {
  const hostname = await resolveHostname(settings);
  const history =
    historyDir !== undefined
      ? await loadHistory(
          historyDir,
          historyReading((line) => io.detail(line)),
        )
      : NO_HISTORY;
  const snapshot = withProblems(await readHost({ ...settings, hostname }, history, io, scope), history.problems);
  for (const p of snapshot.problems) io.problem(p.message);
  return snapshot;
}
