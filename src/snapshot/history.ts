import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MeshAuditError } from '../errors.js';
import { readRegularInput } from '../input/read.js';
import { readHistoryIndex, type IndexedSnapshot } from './history-index.js';
import { compareHistoryNames } from './history-order.js';
import { loadSnapshot } from './load.js';
import type { PastSnapshot } from './past.js';
import type { Problem, Snapshot } from './types.js';

/** Oldest first, by the run sequence in the names (history-order.ts), never by the clock. */
const jsonFiles = (names: readonly string[]) => names.filter((n) => n.endsWith('.json')).sort(compareHistoryNames);

async function entriesOf(dir: string): Promise<{ name: string; isDirectory: boolean }[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).map((d) => ({ name: d.name, isDirectory: d.isDirectory() }));
  } catch (err) {
    throw new MeshAuditError(`${dir}: cannot read history folder (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * The snapshot files of a history folder, oldest first per folder. Anything named `*.json` is one,
 * a folder so named included: it is then a problem of the run, not skipped in silence.
 * Accepted: a folder of snapshots (`history/<host>/`), a folder of such folders (`history/`), or a
 * scanner's output folder (`--out`, whose `history/` is read, not its reports).
 */
async function snapshotFilesOf(dir: string): Promise<string[]> {
  const entries = await entriesOf(dir);
  const historyRoot = entries.find((e) => e.name === 'history' && e.isDirectory);
  if (historyRoot) return snapshotFilesOf(join(dir, historyRoot.name));
  const own = jsonFiles(entries.map((e) => e.name)).map((n) => join(dir, n));
  if (own.length > 0) return own;
  const files: string[] = [];
  for (const sub of entries
    .filter((e) => e.isDirectory)
    .map((e) => e.name)
    .sort()) {
    files.push(...jsonFiles((await entriesOf(join(dir, sub))).map((e) => e.name)).map((n) => join(dir, sub, n)));
  }
  return files;
}

/** Earlier snapshots of a host, oldest first, what of them could not be read, and the kept files as indexed. */
export interface History {
  snapshots: PastSnapshot[];
  problems: Problem[];
  /** Each snapshot file read (from its index or parsed), by path: what the index of its folder carries. */
  files: Map<string, IndexedSnapshot>;
}

export interface HistoryReading {
  /** What later runs need of a parsed snapshot (src/facts/history.ts): the snapshot layer does not work it out. */
  pastOf(snapshot: Snapshot): PastSnapshot;
  /** The version of this mesh-audit: an index another version wrote is not used. */
  tool: string;
  /** How each folder was read (for --verbose). */
  say?(line: string): void;
}

const sha256Of = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Reads one host folder's snapshots (`files`, oldest first): each from the folder's index when it
 * holds that very file (history-index.ts), else parsed. What was read how is said, with why.
 */
async function readFolder(
  dir: string,
  files: readonly string[],
  reading: HistoryReading,
  history: History,
): Promise<void> {
  const index = await readHistoryIndex(dir, reading.tool);
  const newest = files.at(-1);
  const whyParsed = new Map<string, string>();
  let fromIndex = 0;
  // All at once: on a busy host each awaited call costs a trip through the thread pool, thirty in a row add up.
  const infos = await Promise.all(files.map((path) => stat(path).catch(() => null)));
  for (const [at, path] of files.entries()) {
    const file = basename(path);
    const info = infos[at] ?? null;
    let entry = index.usable ? index.snapshots.get(file) : undefined;
    if (!index.usable) whyParsed.set(file, `no index to use: ${index.reason}`);
    else if (!entry) whyParsed.set(file, 'not in the index');
    else if (!info || info.size !== entry.size || info.mtimeMs !== entry.mtimeMs) {
      whyParsed.set(file, 'changed since it was indexed');
      entry = undefined;
    } else if (path === newest) {
      // The newest is what a run needs most: the index names it by its digest too.
      const data = index.newest.file === file ? await readRegularInput(path).catch(() => null) : null;
      if (data === null || sha256Of(data) !== index.newest.sha256) {
        whyParsed.set(file, 'the newest, and not the one the index names by its digest');
        entry = undefined;
      }
    }
    if (entry) {
      fromIndex++;
      history.snapshots.push(entry.past);
      history.files.set(path, entry);
      continue;
    }
    try {
      const past = reading.pastOf(await loadSnapshot(path));
      history.snapshots.push(past);
      if (info) history.files.set(path, { file, size: info.size, mtimeMs: info.mtimeMs, past });
    } catch (err) {
      history.problems.push({ source: 'history', subject: path, message: (err as Error).message.split('\n')[0]! });
    }
  }
  if (files.length === 0 || !reading.say) return;
  const parsed = [...whyParsed.entries()];
  const reasons = [...new Set(parsed.map(([, why]) => why))].map(
    (why) => `${parsed.filter(([, w]) => w === why).length} ${why}`,
  );
  const count = `${files.length} snapshot${files.length === 1 ? '' : 's'}`;
  reading.say(
    `history ${dir}: ${count}, ${fromIndex} known from its index, ${parsed.length} parsed` +
      (parsed.length > 0 ? ` (${reasons.join('; ')})` : ''),
  );
}

/**
 * Reads the earlier snapshots kept in a history folder (`*.json`), oldest first: the order the facts
 * use them in. One unreadable file is a problem of the scan (it may hide a former target), not the
 * end of it. A host folder's index (history-index.ts) spares parsing the snapshots it holds.
 */
export async function loadHistory(dir: string, reading: HistoryReading): Promise<History> {
  const history: History = { snapshots: [], problems: [], files: new Map() };
  const paths = await snapshotFilesOf(dir);
  // Per host folder, in the order found (snapshotFilesOf lists one folder's files together).
  const folders = new Map<string, string[]>();
  for (const path of paths) {
    const folder = dirname(path);
    const list = folders.get(folder) ?? [];
    list.push(path);
    folders.set(folder, list);
  }
  for (const [folder, files] of folders) await readFolder(folder, files, reading, history);
  return history;
}
