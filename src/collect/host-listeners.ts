import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { nameFromBytes } from '../fs/path-bytes.js';
import { compareText } from '../text/compare.js';
import type { HostListener, HostListenerView, ListenerHolder } from '../snapshot/types.js';
import { listeningSockets, type ProcNetRow } from './proc-net.js';
import { describeReadError, isVanished, readNetTables } from './proc-read.js';

/**
 * Every socket listening in the host's network namespace (that of pid 1), with the process holding
 * it: found through `/proc/<pid>/fd` socket inodes of every process in that namespace, and the
 * container it belongs to by its cgroup. Read-only; nothing is executed, no connection is made. What
 * cannot be read is never guessed: the whole view is unavailable (tables, namespace), or the holder
 * of a socket is `unknown` (a process whose fds could not be read may hold it).
 */

export interface HostListenerOptions {
  /** Default `/proc`. */
  procRoot?: string;
}

const FULL_ID = /^[0-9a-f]{64}$/;

/**
 * The container id a process's cgroup names (`docker-<id>.scope`, `libpod-<id>.scope`,
 * `libpod-conmon-<id>.scope`, `<parent>/<id>` of the cgroupfs driver), or null.
 */
export function containerIdInCgroup(text: string): string | null {
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = first < 0 ? -1 : line.indexOf(':', first + 1);
    if (second < 0) continue;
    for (const part of line.slice(second + 1).split('/')) {
      const bare = part.endsWith('.scope') ? part.slice(0, -'.scope'.length) : part;
      const id = bare.slice(-64);
      if (FULL_ID.test(id) && (bare.length === 64 || /^[A-Za-z0-9_-]+-$/.test(bare.slice(0, -64)))) return id;
    }
  }
  return null;
}

/** What one process is, for a person and for the ledger's `service` entries. */
function holderOf(procRoot: string, pid: number): ListenerHolder {
  const read = (name: string): string | null => {
    try {
      return readFileSync(`${procRoot}/${pid}/${name}`, 'utf8');
    } catch {
      return null;
    }
  };
  let exe: string | null;
  try {
    // As bytes (src/fs/path-bytes.ts): a ledger's `service` entry names the program by its path, one of no lossy name.
    exe = nameFromBytes(readlinkSync(`${procRoot}/${pid}/exe`, { encoding: 'buffer' })).replace(/ \(deleted\)$/, '');
  } catch {
    exe = null; // a kernel thread, or gone
  }
  const cgroup = read('cgroup');
  return {
    pid,
    name: read('comm')?.replace(/\n$/, '') ?? null,
    exe,
    containerId: cgroup === null ? null : containerIdInCgroup(cgroup),
  };
}

/**
 * The sockets listening in the host's network namespace and who holds each. Never throws: an
 * unreadable namespace or table makes the whole view unavailable (with the reason).
 */
export function readHostListeners(options: HostListenerOptions = {}): HostListenerView {
  const procRoot = options.procRoot ?? '/proc';
  // The host's namespace is pid 1's; kthreadd (pid 2) is always in it too, and stays readable where a
  // confined init's namespace links are not.
  let hostPid = 1;
  let hostNet: string;
  let linkError: unknown = null;
  try {
    hostNet = readlinkSync(`${procRoot}/1/ns/net`);
  } catch (err) {
    try {
      hostNet = readlinkSync(`${procRoot}/2/ns/net`);
      hostPid = 2;
    } catch {
      // A scanner in a container (`--pid host`, no CAP_SYS_PTRACE) may not read init's namespace links,
      // while init's socket tables (`/proc/1/net/*`) stay readable to it: the namespace is then not named.
      hostNet = 'unknown';
      linkError = err;
    }
  }
  let rows: ProcNetRow[];
  let pids: string[];
  try {
    rows = readNetTables(procRoot, hostPid);
    pids = readdirSync(procRoot).filter((name) => /^\d+$/.test(name));
  } catch (err) {
    if (linkError !== null) return { available: false, reason: describeReadError(linkError, `${procRoot}/1/ns/net`) };
    return { available: false, reason: err instanceof Error ? err.message : String(err) };
  }
  const listening = new Map<number, ProcNetRow[]>();
  for (const row of rows) {
    if (listeningSockets([row]).length === 0 || row.inode === 0) continue;
    const list = listening.get(row.inode);
    if (list) list.push(row);
    else listening.set(row.inode, [row]);
  }
  const holders = new Map<number, number[]>();
  /** Processes whose fds could not be read: any unattributed socket may be theirs. */
  const unread: string[] = [];
  // Every process's fds, whatever its namespace: an inode names one socket on the whole host, and a
  // process whose namespace link cannot be read may still be the holder.
  for (const name of pids) {
    const pid = Number(name);
    let fds: string[];
    try {
      fds = readdirSync(`${procRoot}/${name}/fd`);
    } catch (err) {
      if (!isVanished(err)) unread.push(describeReadError(err, `${procRoot}/${name}/fd`));
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`${procRoot}/${name}/fd/${fd}`);
      } catch (err) {
        // Closed mid-walk, or not ours to read (a confined process: its fd list shows, its links do not).
        if (!isVanished(err)) unread.push(describeReadError(err, `${procRoot}/${name}/fd`));
        if (!isVanished(err)) break;
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode === undefined || !listening.has(Number(inode))) continue;
      const list = holders.get(Number(inode));
      if (list) list.push(pid);
      else holders.set(Number(inode), [pid]);
    }
  }
  // A socket no process held may have closed while the fds were walked: only those still listening stay.
  let still: Set<number> | null = null;
  if ([...listening.keys()].some((inode) => !holders.has(inode))) {
    try {
      still = new Set(readNetTables(procRoot, hostPid).map((r) => r.inode));
    } catch {
      still = null;
    }
  }
  const sockets: HostListener[] = [];
  const holderCache = new Map<number, ListenerHolder>();
  for (const [inode, socketRows] of listening) {
    const pidsHolding = (holders.get(inode) ?? []).sort((a, b) => a - b);
    if (pidsHolding.length === 0 && still !== null && !still.has(inode)) continue;
    const procs = pidsHolding.map((pid) => {
      let h = holderCache.get(pid);
      if (!h) holderCache.set(pid, (h = holderOf(procRoot, pid)));
      return h;
    });
    // The container among the holders, else the first (oldest pid: the parent of forked workers).
    const holder = procs.find((p) => p.containerId !== null) ?? procs[0] ?? null;
    for (const s of listeningSockets(socketRows)) {
      sockets.push({
        ...s,
        holder,
        ...(holder === null && unread.length > 0 ? { holderUnknown: unread[0]! } : {}),
      });
    }
  }
  const seen = new Set<string>();
  return {
    available: true,
    netns: hostNet,
    sockets: sockets
      .filter((s) => {
        const key = `${s.protocol} ${s.address} ${s.port}`;
        return seen.has(key) ? false : (seen.add(key), true);
      })
      .sort((a, b) => compareText(a.protocol, b.protocol) || compareText(a.address, b.address) || a.port - b.port),
  };
}
