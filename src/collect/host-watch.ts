import { createHash } from 'node:crypto';
import { readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import { processSignature } from './proc.js';
import type { WatchedProcess } from './read-cache.js';

/*
 * What tells `serve` that the host's files or listening sockets changed: inotify (fs.watch) on the folder of every
 * file a scan read — the ledger, the files under the managed roots, each file a container was made from, daemon.json —
 * and, since sockets have no events, a cheap look at the kernel's socket tables every few seconds (their digest, not
 * their parse). A watch that fails (a folder gone, the kernel's watch limit reached) is knowledge lost, told at once.
 */

/** At most this many folders are watched; past it the rest is left to the resync, and the answer says so. */
export const MAX_WATCHED_FOLDERS = 4096;

/**
 * What a watch says changed: a watched folder's files, the host's listening sockets, or the processes or sockets of
 * the running container `id` (the poll of their signatures: processSignature, src/collect/proc.ts).
 */
export type WatchChange = { type: 'files' } | { type: 'listeners' } | { type: 'processes'; id: string };

export interface HostWatchHandlers {
  changed(change: WatchChange): void;
}

export interface FileWatchHandlers extends HostWatchHandlers {
  /**
   * What is not watched after a `follow`, each named (none: every folder is): a condition that holds until a later
   * follow watches them, told after every follow so that the caller can say it as long as it holds.
   */
  unwatched(causes: readonly string[]): void;
}

export interface HostWatch {
  /**
   * Watches these files' folders and these folders (as named on the host; under `root`), dropping the watches no
   * longer needed. True when a folder is watched that was not before: what changed in it while it was read and
   * before it was watched was not heard, so the caller reads once more.
   */
  follow(files: readonly string[], folders: readonly string[]): boolean;
  /**
   * Whether following the same files again would change nothing: the last follow watched every folder it was asked for
   * (itself, or its nearest parent while it is not there), and no watch has fired or failed since.
   */
  whole(): boolean;
  stop(): void;
}

export const TOO_MANY_FOLDERS = `more than ${MAX_WATCHED_FOLDERS} folders to watch: the rest waits for the resync`;

/**
 * Folder watches that follow the set of files the last read looked at. A watch that fails while it runs (its folder
 * removed) is a change: the read that follows watches again what is there.
 */
export function watchFiles(root: string, handlers: FileWatchHandlers): HostWatch {
  const watchers = new Map<string, FSWatcher>();
  let whole = false;
  const follow = (files: readonly string[], named: readonly string[]): boolean => {
    let added = false;
    const folders = new Set([...files.map((p) => join(root, dirname(p))), ...named.map((p) => join(root, p))]);
    const causes: string[] = folders.size > MAX_WATCHED_FOLDERS ? [TOO_MANY_FOLDERS] : [];
    // A folder not there yet is watched through its nearest parent that is: its making is a change, and the read that
    // follows watches it.
    const wanted = new Set(
      [...folders]
        .sort()
        .slice(0, MAX_WATCHED_FOLDERS)
        .map((f) => (watchers.has(f) ? f : nearestFolder(f, root))),
    );
    for (const [folder, w] of watchers)
      if (!wanted.has(folder)) {
        w.close();
        watchers.delete(folder);
      }
    for (const folder of wanted) {
      if (watchers.has(folder)) continue;
      try {
        const w = watch(folder, { persistent: false }, () => {
          whole = false;
          handlers.changed({ type: 'files' });
        });
        w.on('error', () => {
          w.close();
          watchers.delete(folder);
          whole = false;
          handlers.changed({ type: 'files' });
        });
        watchers.set(folder, w);
        added = true;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        // A folder not there yet (a managed root not made) is watched from the next read on; a limit is a loss.
        if (code !== 'ENOENT' && code !== 'ENOTDIR') causes.push(`${folder} cannot be watched (${code ?? 'error'})`);
      }
    }
    handlers.unwatched(causes);
    whole = causes.length === 0 && [...wanted].every((f) => watchers.has(f));
    return added;
  };
  return {
    follow,
    whole: () => whole,
    stop: () => {
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

/** `folder`, or its nearest parent that is a folder now, not above `root`. */
function nearestFolder(folder: string, root: string): string {
  let at = folder;
  for (;;) {
    try {
      if (statSync(at).isDirectory()) return at;
    } catch {
      // not there (or not reachable): its parent
    }
    const up = dirname(at);
    if (up === at || at === root || !up.startsWith(root)) return at;
    at = up;
  }
}

/** The kernel's socket tables of the host's namespace (init's, under `root`), as the scan reads them. */
const SOCKET_TABLES = ['tcp', 'tcp6', 'udp', 'udp6'].map((t) => join('proc', '1', 'net', t));

/** The digest of the listening rows of the socket tables: it moves when a socket starts or stops listening. */
export function listenersDigest(root: string): string {
  const hash = createHash('sha256');
  for (const table of SOCKET_TABLES) {
    let text: string;
    try {
      text = readFileSync(join(root, table), 'utf8');
    } catch {
      text = '(unread)';
    }
    // State 0A is LISTEN (TCP), 07 is an unconnected UDP socket: established connections come and go every second.
    // Only the local address, state, owner and inode: queue sizes and timers move with traffic.
    for (const line of text.split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' || f[3] === '07') hash.update(`${table} ${f[1]} ${f[3]} ${f[7]} ${f[9]}\n`);
    }
    if (text === '(unread)') hash.update(`${table} unread\n`);
  }
  return hash.digest('hex');
}

/**
 * Looks at the socket tables every `everyMs`, and at the signature of each running container's processes whose /proc
 * the last read kept (`processes`): a container in a network namespace of its own listens in tables of its own, which
 * the host's do not show, and its processes change without any engine event. A change in either is a change.
 */
export function pollListeners(
  root: string,
  everyMs: number,
  handlers: HostWatchHandlers,
  processes?: () => readonly WatchedProcess[],
): { stop(): void } {
  let last = listenersDigest(root);
  let polling = false;
  const timer = setInterval(() => {
    const now = listenersDigest(root);
    if (now !== last) handlers.changed({ type: 'listeners' });
    last = now;
    if (processes === undefined || polling) return;
    polling = true;
    void (async () => {
      for (const p of processes()) {
        if ((await processSignature(p.pid)) !== p.signature) handlers.changed({ type: 'processes', id: p.id });
      }
    })().finally(() => (polling = false));
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
