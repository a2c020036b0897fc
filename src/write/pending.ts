import { rmSync } from 'node:fs';

/*
 * What a run has half-written and not yet published: temp files, and the run folder being filled.
 * A run stopped by SIGINT/SIGTERM removes them before it exits (cli/signals.ts); a run killed outright
 * leaves them, and the next run into the folder cleans them (write/runs.ts, cleanLeftovers).
 */
const pending = new Set<string>();

export const trackPending = (path: string): void => void pending.add(path);
export const untrackPending = (path: string): void => void pending.delete(path);

/** Removes everything still pending, synchronously (it runs from a signal handler, just before exit). */
export function removePendingSync(): string[] {
  const removed: string[] = [];
  for (const path of pending) {
    try {
      // Retried: a write already in flight on libuv's threads may add a file after the first sweep.
      rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      removed.push(path);
    } catch {
      // left for the next run's clean-up
    }
  }
  pending.clear();
  return removed;
}
