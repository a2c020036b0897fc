import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MeshAuditError } from '../errors.js';
import { compareHistoryNames } from './history-order.js';
import { loadSnapshot } from './load.js';
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

/** Earlier snapshots of a host, oldest first, and what of them could not be read. */
export interface History {
  snapshots: Snapshot[];
  problems: Problem[];
}

/**
 * Reads the earlier snapshots kept in a history folder (`*.json`), oldest first: the order the facts
 * use them in. One unreadable file is a problem of the scan (it may hide a former target), not the
 * end of it.
 */
export async function loadHistory(dir: string): Promise<History> {
  const snapshots: Snapshot[] = [];
  const problems: Problem[] = [];
  for (const path of await snapshotFilesOf(dir)) {
    try {
      snapshots.push(await loadSnapshot(path));
    } catch (err) {
      problems.push({ source: 'history', subject: path, message: (err as Error).message.split('\n')[0]! });
    }
  }
  return { snapshots, problems };
}
