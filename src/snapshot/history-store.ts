import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic, prepareOutputDir } from '../write/atomic.js';
import { loadHistory } from './history.js';
import type { Problem, Snapshot } from './types.js';

/**
 * The scanner's own memory (design section 4, History): each live scan keeps its secret-safe snapshot
 * under `<out>/history/<hostname>/`, so the next scan knows every target an id has had.
 */
export const historyDirOf = (out: string, hostname: string): string => join(out, 'history', hostname.replace(/[^A-Za-z0-9._-]/g, '_'));

const SNAPSHOT_FILE = /^snapshot-\d{8}T\d{6}(\d{3})?Z\.json$/;
const fileNameOf = (takenAt: string): string => `snapshot-${takenAt.replace(/[-:]/g, '').replace(/\.(\d{3})\d*Z$/, '$1Z').replace(/\.\d*Z$/, 'Z')}.json`;

export async function readOwnHistory(out: string, hostname: string): Promise<{ snapshots: Snapshot[]; problems: Problem[] }> {
  const dir = historyDirOf(out, hostname);
  try {
    await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No folder yet is a first run; a folder that cannot be read may hide former targets: not a first run.
    if (code === 'ENOENT') return { snapshots: [], problems: [] };
    return { snapshots: [], problems: [{ source: 'history', subject: dir, message: `${dir}: cannot read the history of this host (${code ?? 'error'}); former targets not checked` }] };
  }
  return loadHistory(dir);
}

/** Saves the snapshot and keeps the newest `keep` of this host; only files this store wrote are removed. */
export async function keepSnapshot(out: string, snapshot: Snapshot, keep: number): Promise<string> {
  await prepareOutputDir(out);
  await prepareOutputDir(join(out, 'history'));
  const dir = historyDirOf(out, snapshot.host.hostname);
  await prepareOutputDir(dir);
  const written = await writeFileAtomic(dir, fileNameOf(snapshot.takenAt), JSON.stringify(snapshot, null, 2) + '\n');
  const ours = (await readdir(dir)).filter((n) => SNAPSHOT_FILE.test(n)).sort();
  for (const old of ours.slice(0, Math.max(0, ours.length - keep))) await unlink(join(dir, old));
  return written;
}
