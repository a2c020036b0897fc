import { historyForHost, keepAsHistory, type AcquireIo } from '../acquire.js';
import type { History } from '../snapshot/history.js';
import type { Snapshot } from '../snapshot/types.js';
import { FolderBusy } from '../write/lock.js';
import { openOutputFolder } from '../write/runs.js';

/*
 * serve's history (issue 44, "the history keeps one snapshot per full re-read, bounded as now"): the snapshots it is
 * told former targets by, held in memory between reads, and, with `--out DIR`, each whole read's snapshot kept in
 * DIR's history as `scan --out DIR` keeps its own (keepAsHistory in src/acquire.ts: the same layout, run numbers,
 * pruning to `keep` and index), so the nightly scan and `evaluate` read serve's snapshots as theirs.
 *
 * The output folder's lock is taken only while keeping, and never waited for: a nightly scan holding the folder
 * makes serve skip that keep (the next whole read keeps its own), never wait, and never hold the folder for the life
 * of serve. The history is read at the first read, after each keep (under the same lock, so never while a scan
 * prunes it), and, when `--history` names another folder, once after each whole read; other reads use the one in
 * memory.
 */

/** Where serve's history is: `out`, the folder it keeps whole reads in; `named`, another folder it only reads. */
export interface ServeHistoryPlaces {
  out?: string;
  named?: string;
}

/** What became of one whole read's snapshot. */
export type KeepOutcome =
  | { kind: 'kept' }
  /** The output folder was held by another run (`holder`: `pid N`): not kept, nothing waited for. */
  | { kind: 'busy'; holder: string }
  /** It could not be kept: `cause` says why (a full disk, an unsafe folder). */
  | { kind: 'failed'; cause: string };

export class ServeHistory {
  private memory: History | null = null;
  private readFor: string | null = null;
  private due = false;

  constructor(private readonly places: ServeHistoryPlaces) {}

  /** Whether whole reads are kept (`--out`). */
  get keeps(): boolean {
    return this.places.out !== undefined;
  }

  /** The history a read of `hostname` is told former targets by: the one in memory unless it is due to be read. */
  async forRead(hostname: string, io: AcquireIo): Promise<History> {
    if (this.memory === null || this.due || this.readFor !== hostname) {
      this.memory = await historyForHost(hostname, this.places.named, this.places.out, io);
      this.readFor = hostname;
      this.due = false;
      io.detail(`history read: ${this.memory.snapshots.length} snapshots`);
    }
    return this.memory;
  }

  /**
   * A whole read ended with `snapshot`, read with `history`: kept in the output folder's history when there is one
   * (null when there is none). Never throws: what went wrong is the outcome.
   */
  async wholeRead(snapshot: Snapshot, history: History, keep: number, io: AcquireIo): Promise<KeepOutcome | null> {
    const out = this.places.out;
    // Another folder's history (the nightly scan's) is read again once per whole read.
    if (this.places.named !== undefined) this.due = true;
    if (out === undefined) return null;
    let folder;
    try {
      folder = await openOutputFolder(out, 0);
    } catch (err) {
      if (err instanceof FolderBusy) return { kind: 'busy', holder: err.holder };
      return { kind: 'failed', cause: `the last whole read's snapshot was not kept in ${out}: ${messageOf(err)}` };
    }
    try {
      const notKept = await keepAsHistory(folder, snapshot, keep, history, io);
      if (notKept.length > 0) return { kind: 'failed', cause: notKept.map((p) => p.message).join('; ') };
      // Read again while the folder is held: what was just kept and pruned, and what a scan kept meanwhile.
      if (this.places.named === undefined) {
        this.memory = await historyForHost(snapshot.host.hostname, undefined, folder.dir, io);
        this.readFor = snapshot.host.hostname;
        io.detail(`history read again: ${this.memory.snapshots.length} snapshots`);
      }
      return { kind: 'kept' };
    } catch (err) {
      return { kind: 'failed', cause: `the last whole read's snapshot was not kept in ${out}: ${messageOf(err)}` };
    } finally {
      await folder.release();
    }
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
