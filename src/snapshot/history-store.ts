import { createHash } from 'node:crypto';
import { lstat, readdir, stat, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeFileAtomic, prepareOutputDir } from '../write/atomic.js';
import { loadHistory, type History, type HistoryReading } from './history.js';
import { writeHistoryIndex, type IndexedSnapshot } from './history-index.js';
import { compareHistoryNames, historySequenceOf } from './history-order.js';
import type { PastSnapshot } from './past.js';
import type { Snapshot } from './types.js';

/**
 * The scanner's own memory (ARCHITECTURE.md, `src/snapshot/` and `src/facts/`): each live scan keeps its secret-safe
 * snapshot
 * under `<out>/history/<hostname>/`, so the next scan knows every target an id has had. Files are
 * named `snapshot-<run number>-<time>.json`: the run number of the output folder orders them (the
 * time is shown, not relied on: a clock moved back must not make the newest look oldest).
 */
export const historyDirOf = (out: string, hostname: string): string =>
  join(out, 'history', hostname.replace(/[^A-Za-z0-9._-]/g, '_'));

/** Names this store wrote, before and since the run number: only these are ever pruned. */
const SNAPSHOT_FILE = /^snapshot-(\d{6,}-)?\d{8}T\d{6}(\d{3})?Z\.json$/;
const fileNameOf = (sequence: number, takenAt: string): string =>
  `snapshot-${String(sequence).padStart(6, '0')}-${takenAt
    .replace(/[-:]/g, '')
    .replace(/\.(\d{3})\d*Z$/, '$1Z')
    .replace(/\.\d*Z$/, 'Z')}.json`;

/** This host's kept snapshots, oldest first by run number. */
export async function readOwnHistory(out: string, hostname: string, reading: HistoryReading): Promise<History> {
  const dir = historyDirOf(out, hostname);
  try {
    await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No folder yet is a first run; a folder that cannot be read may hide former targets: not a first run.
    if (code === 'ENOENT') return { snapshots: [], problems: [], files: new Map() };
    return {
      snapshots: [],
      files: new Map(),
      problems: [
        {
          source: 'history',
          subject: dir,
          message: `${dir}: cannot read the history of this host (${code ?? 'error'}); former targets not checked`,
        },
      ],
    };
  }
  return loadHistory(dir, reading);
}

/** What keepSnapshot needs besides the snapshot: what it tells later runs, and the history read before it. */
export interface KeptMemory {
  past: PastSnapshot;
  history: History;
  tool: string;
}

/**
 * Saves the snapshot as run `sequence` of output folder `out` (held by this run) and keeps the newest
 * `keep` of this host, by run number; the one just written is never removed, and only regular files
 * this store wrote are (a folder named like a snapshot is left alone). Then the folder's index is
 * rewritten for the files kept (history-index.ts); an index not written is said in `indexNotWritten`
 * and costs the next run a parse, nothing else.
 */
export async function keepSnapshot(
  out: string,
  sequence: number,
  snapshot: Snapshot,
  keep: number,
  memory?: KeptMemory & { indexNotWritten(message: string): void },
): Promise<string> {
  await prepareOutputDir(join(out, 'history'));
  const dir = historyDirOf(out, snapshot.host.hostname);
  await prepareOutputDir(dir);
  const name = fileNameOf(sequence, snapshot.takenAt);
  // Without indentation: the store is read by mesh-audit (and jq), not by eye, and a third of a snapshot's bytes were
  // indentation, made, hashed and written on every scan (test/bench/PROFILES.md). Encoded once, then hashed and written
  // as bytes: hashing the text and writing the text each encoded it again (30 MB at 2,000 containers: ~0.5 s).
  const content = Buffer.from(JSON.stringify(snapshot) + '\n', 'utf8');
  const written = await writeFileAtomic(dir, name, content);
  // Looked at all at once (each awaited in turn costs a trip through the thread pool: thirty add up on a busy host).
  const named = (await readdir(dir)).filter((n) => n !== name && SNAPSHOT_FILE.test(n));
  const infos = await Promise.all(named.map((n) => lstat(join(dir, n)).catch(() => null)));
  const ours = named.filter((_, at) => infos[at]?.isFile() === true).sort(compareHistoryNames);
  const removed = new Set<string>();
  for (const old of ours.slice(0, Math.max(0, ours.length - (keep - 1)))) {
    // Never one from a later run than this one (only possible if the sequence file was reset by hand).
    if ((historySequenceOf(old) ?? -1) < sequence)
      await unlink(join(dir, old)).then(
        () => removed.add(old),
        () => undefined,
      );
  }
  if (memory) {
    try {
      const info = await stat(written);
      const indexed: IndexedSnapshot[] = [];
      for (const n of ours.filter((o) => !removed.has(o))) {
        const known = memory.history.files.get(join(dir, n));
        // A file the history did not read (unreadable, or come since) is left out: the next run parses it.
        if (known) indexed.push(known);
      }
      indexed.push({ file: basename(written), size: info.size, mtimeMs: info.mtimeMs, past: memory.past });
      const sha256 = createHash('sha256').update(content).digest('hex');
      await writeHistoryIndex(dir, indexed, { file: basename(written), sha256 }, memory.tool);
    } catch (err) {
      memory.indexNotWritten(
        `history index of ${dir} not written (${(err as Error).message}); the next run parses the snapshots instead`,
      );
    }
  }
  return written;
}
