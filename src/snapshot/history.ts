import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MeshAuditError } from '../errors.js';
import { compareHistoryNames } from './history-order.js';
import { loadSnapshot } from './load.js';
import type { Problem, Snapshot } from './types.js';

/**
 * Reads the earlier snapshots kept in a history folder (`*.json`). One unreadable file is a
 * problem of the scan (it may hide a former target), not the end of it. Oldest first, by the run
 * sequence in the names (history-order.ts), not by the time they were taken.
 */
export async function loadHistory(dir: string): Promise<{ snapshots: Snapshot[]; problems: Problem[] }> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort(compareHistoryNames);
  } catch (err) {
    throw new MeshAuditError(`${dir}: cannot read history folder (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const snapshots: Snapshot[] = [];
  const problems: Problem[] = [];
  for (const name of names) {
    try {
      snapshots.push(await loadSnapshot(join(dir, name)));
    } catch (err) {
      problems.push({ source: 'history', subject: join(dir, name), message: (err as Error).message.split('\n')[0]! });
    }
  }
  return { snapshots, problems };
}
