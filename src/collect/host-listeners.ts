import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { nameFromBytes } from '../fs/path-bytes.js';
import { compareText } from '../text/compare.js';
import { endpointText } from '../text/endpoint.js';
import type {
  HostListener,
  HostListenerView,
  Ledger,
  ListenerHolder,
  Problem,
  ServiceExecutable,
} from '../snapshot/types.js';
import type { CollectContext, Collector, Slice } from './contract.js';
import { listeningSockets, type ProcNetRow } from './proc-net.js';
import { describeReadError, isVanished, readNetTables } from './proc-read.js';
import { resolveRoot } from './files.js';
import type { KeptListeners } from './read-cache.js';
import { resolveHostPath } from './host-path.js';

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
  return readHostListenersKept(options).view;
}

/**
 * The host's listeners, taken again from `kept` when nothing a read would see differs: the same listening rows in the
 * socket tables (read every time: what the listeners' poll looks at), and every holder the same process (pid and start
 * time), the same program and cgroup, still holding its sockets. Otherwise every process's fds are walked again (the
 * costliest part of a read: every fd of every process on the host). Not taken again either when a socket in scope had
 * no known holder (a walk may find one). `kept` in the answer: what the next read can take again (none when this view
 * is not to be kept).
 */
export function readHostListenersKept(
  options: HostListenerOptions & {
    kept?: KeptListeners;
    /** Sockets whose holder does not matter (out of scope: no rule reads them): one of no known holder is kept. */
    outOfScope?: (socket: HostListener) => boolean;
  },
): { view: HostListenerView; kept?: KeptListeners; reused: boolean } {
  const procRoot = options.procRoot ?? '/proc';
  const { hostPid, hostNet, linkError } = hostNamespace(procRoot);
  let rows: ProcNetRow[];
  try {
    rows = readNetTables(procRoot, hostPid);
  } catch (err) {
    if (linkError !== null)
      return {
        view: { available: false, reason: describeReadError(linkError, `${procRoot}/1/ns/net`) },
        reused: false,
      };
    return { view: { available: false, reason: err instanceof Error ? err.message : String(err) }, reused: false };
  }
  const listening = new Map<number, ProcNetRow[]>();
  for (const row of rows) {
    if (listeningSockets([row]).length === 0 || row.inode === 0) continue;
    const list = listening.get(row.inode);
    if (list) list.push(row);
    else listening.set(row.inode, [row]);
  }
  const rowsKey = rowsKeyOf(listening);
  const kept = options.kept;
  if (kept !== undefined && kept.rows === rowsKey && kept.view.netns === hostNet && holdersStand(procRoot, kept))
    return { view: kept.view, kept, reused: true };
  const { view, held } = walkHolders(procRoot, hostPid, hostNet, listening);
  return { view, ...keptOf(procRoot, rowsKey, view, held, options.outOfScope), reused: false };
}

/** The listening rows, as a text that differs when any of them does. */
function rowsKeyOf(listening: ReadonlyMap<number, ProcNetRow[]>): string {
  return JSON.stringify(
    [...listening]
      .sort((a, b) => a[0] - b[0])
      .map(([inode, rows]) => [inode, rows.map((r) => [r.protocol, r.address, r.port, r.state])]),
  );
}

/** The start time of a process (field 22 of its stat), or null when it cannot be read. */
function startTimeOf(procRoot: string, pid: number): string | null {
  try {
    const text = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    return (
      text
        .slice(text.lastIndexOf(')') + 1)
        .trim()
        .split(/\s+/)[19] ?? null
    );
  } catch {
    return null;
  }
}

/** The socket inodes among a process's fds, or null when they cannot all be read. */
function socketInodesOf(procRoot: string, pid: number): Set<number> | null {
  const inodes = new Set<number>();
  try {
    for (const fd of readdirSync(`${procRoot}/${pid}/fd`)) {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`${procRoot}/${pid}/fd/${fd}`))?.[1];
      if (inode !== undefined) inodes.add(Number(inode));
    }
  } catch {
    return null;
  }
  return inodes;
}

/** Whether every holder kept is the same process, the same program in the same cgroup, holding the same sockets. */
function holdersStand(procRoot: string, kept: KeptListeners): boolean {
  return kept.holders.every((h) => {
    if (startTimeOf(procRoot, h.pid) !== h.startTime) return false;
    if (JSON.stringify(holderOf(procRoot, h.pid)) !== h.holder) return false;
    const inodes = socketInodesOf(procRoot, h.pid);
    return inodes !== null && h.inodes.every((i) => inodes.has(i));
  });
}

/**
 * What of a view the next read can take again, with every process found holding a listening socket (not only the one
 * shown): none when a socket has no known holder or a holder's start time cannot be read.
 */
function keptOf(
  procRoot: string,
  rows: string,
  view: HostListenerView,
  held: ReadonlyMap<number, { holder: ListenerHolder; inodes: number[] }>,
  outOfScope: (socket: HostListener) => boolean = () => false,
): { kept?: KeptListeners } {
  if (!view.available || view.sockets.some((s) => s.holder === null && !outOfScope(s))) return {};
  const holders: KeptListeners['holders'] = [];
  for (const [pid, { holder, inodes }] of held) {
    const startTime = startTimeOf(procRoot, pid);
    if (startTime === null) return {};
    holders.push({ pid, startTime, holder: JSON.stringify(holder), inodes });
  }
  return { kept: { rows, holders, view } };
}

/** Every process's fds walked for the holders of the listening sockets. */
function walkHolders(
  procRoot: string,
  hostPid: number,
  hostNet: string,
  listening: Map<number, ProcNetRow[]>,
): { view: HostListenerView; held: Map<number, { holder: ListenerHolder; inodes: number[] }> } {
  const held = new Map<number, { holder: ListenerHolder; inodes: number[] }>();
  let pids: string[];
  try {
    pids = readdirSync(procRoot).filter((name) => /^\d+$/.test(name));
  } catch (err) {
    return { view: { available: false, reason: err instanceof Error ? err.message : String(err) }, held };
  }
  const { holders, unread } = socketHolders(procRoot, pids, listening);
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
      const entry = held.get(pid) ?? { holder: h, inodes: [] };
      entry.inodes.push(inode);
      held.set(pid, entry);
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
  return { view: { available: true, netns: hostNet, sockets: uniqueSorted(sockets) }, held };
}

/**
 * The host's namespace: pid 1's; kthreadd (pid 2) is always in it too, and stays readable where a confined init's
 * namespace links are not. `linkError`: why neither link could be read (the namespace is then not named).
 */
function hostNamespace(procRoot: string): { hostPid: number; hostNet: string; linkError: unknown } {
  try {
    return { hostPid: 1, hostNet: readlinkSync(`${procRoot}/1/ns/net`), linkError: null };
  } catch (err) {
    try {
      return { hostPid: 2, hostNet: readlinkSync(`${procRoot}/2/ns/net`), linkError: null };
    } catch {
      // A scanner in a container (`--pid host`, no CAP_SYS_PTRACE) may not read init's namespace links,
      // while init's socket tables (`/proc/1/net/*`) stay readable to it: the namespace is then not named.
      return { hostPid: 1, hostNet: 'unknown', linkError: err };
    }
  }
}

/**
 * The pids holding each listening socket, by inode, from every process's fds, whatever its namespace: an inode names
 * one socket on the whole host, and a process whose namespace link cannot be read may still be the holder. `unread`:
 * processes whose fds could not be read (any unattributed socket may be theirs).
 */
function socketHolders(
  procRoot: string,
  pids: readonly string[],
  listening: ReadonlyMap<number, ProcNetRow[]>,
): { holders: Map<number, number[]>; unread: string[] } {
  const holders = new Map<number, number[]>();
  const unread: string[] = [];
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
  return { holders, unread };
}

/** One socket per protocol, address and port, in that order. */
function uniqueSorted(sockets: readonly HostListener[]): HostListener[] {
  const seen = new Set<string>();
  return sockets
    .filter((s) => {
      const key = `${s.protocol} ${s.address} ${s.port}`;
      return seen.has(key) ? false : (seen.add(key), true);
    })
    .sort((a, b) => compareText(a.protocol, b.protocol) || compareText(a.address, b.address) || a.port - b.port);
}

export interface ListenersContext extends CollectContext {
  /** Why /proc cannot be read (src/collect/proc-reader.ts), or null when it can. */
  procReason: string | null;
  /** The ledger as read: its `service` entries' executable paths are resolved on the host. */
  ledger: Ledger;
}

/** Distinct executable paths resolved at most; past it, the rest are unread (not known), never a mismatch. */
export const MAX_SERVICE_EXECUTABLES = 4096;

/**
 * The executable paths the ledger's valid `service` entries name (a target with a `/`), each resolved under the
 * root: a host's `/bin/x` is `/usr/bin/x` on a merged-/usr system, and /proc/PID/exe gives the latter.
 */
async function serviceExecutables(ledger: Ledger, root: string): Promise<ServiceExecutable[]> {
  const paths = [
    ...new Set(
      ledger.entries
        .filter((r) => r.valid && r.entry.type === 'service' && r.entry.target?.startsWith('/') === true)
        .map((r) => r.entry.target!),
    ),
  ].sort(compareText);
  if (paths.length === 0) return [];
  let realRoot: string;
  try {
    realRoot = await resolveRoot(root);
  } catch (error) {
    const reason = `the root ${root} not resolved: ${(error as NodeJS.ErrnoException).code ?? 'error'}`;
    return paths.map((path) => ({ path, unread: reason }));
  }
  return paths.map((path, i): ServiceExecutable => {
    if (i >= MAX_SERVICE_EXECUTABLES)
      return { path, unread: `more than ${MAX_SERVICE_EXECUTABLES} executable paths in service entries` };
    const r = resolveHostPath(realRoot, path);
    return r.state === 'resolved'
      ? { path, resolved: r.path }
      : r.state === 'unread'
        ? { path, unread: r.reason }
        : { path };
  });
}

/**
 * The host listeners' collector (src/collect/contract.ts), run after the engine's (a socket is attributed to a
 * container by its process's cgroup). Not read when every one is out of scope (`listener:*`): what is out of scope is
 * not read.
 */
export const listenersCollector: Collector<ListenersContext, HostListenerView> = {
  async collect({ scope, procReason, ledger, settings, cache }) {
    const everyListenerOut = scope?.everyListenerOut ?? null;
    if (everyListenerOut !== null)
      return unreadBy(`the host's listening sockets not read: out of scope by ${everyListenerOut}`);
    if (procReason !== null) return unreadBy(`the host's listening sockets not read from /proc: ${procReason}`);
    const view = await Promise.resolve(listenersOf(cache, scope));
    if (!view.available) return listenersUnread(view.reason);
    const executables = await serviceExecutables(ledger, settings.root);
    return {
      part: executables.length > 0 ? { ...view, executables } : view,
      problems: [],
      notes: unheldNotes(view.sockets, scope),
    };
  },
  unread: (_context, reason) => listenersUnread(reason),
};

/** The host's listeners; serve's taken again from its last read when nothing changed (readHostListenersKept). */
function listenersOf(cache: CollectContext['cache'], scope: CollectContext['scope']): HostListenerView {
  if (cache === undefined) return readHostListeners();
  const read = readHostListenersKept({
    kept: cache.store.hostListeners(),
    ...(scope ? { outOfScope: (s: HostListener) => !scope.listener(endpointText(s.address, s.port, s.protocol)) } : {}),
  });
  cache.store.keepHostListeners(cache.ticket, read.kept, read.reused);
  return read.view;
}

/** Left unread by the way the scan is set up: its note is the proc collector's, or the scope's. */
function unreadBy(reason: string): Slice<HostListenerView> {
  return { part: { available: false, reason }, problems: [], notes: [] };
}

function listenersUnread(reason: string): Slice<HostListenerView> {
  return {
    part: { available: false, reason },
    problems: [{ source: 'listeners', message: `the host's listening sockets not read: ${reason}` }],
    notes: [],
  };
}

/** The sockets no process the scan could read holds, said once; those out of scope (another system's) not spoken of. */
function unheldNotes(sockets: readonly HostListener[], scope: CollectContext['scope']): Problem[] {
  const endpointOf = (s: HostListener) => endpointText(s.address, s.port, s.protocol);
  const unheld = sockets.filter((s) => s.holderUnknown !== undefined && (scope?.listener(endpointOf(s)) ?? true));
  if (unheld.length === 0) return [];
  return [
    {
      source: 'listeners',
      message:
        `${unheld.length} socket(s) listening on the host with no known holder: no process the scan could read ` +
        `holds them, and some processes' fds are closed to it (${unheld[0]!.holderUnknown!}): ` +
        unheld.map(endpointOf).join(', ') +
        `; a rule on who holds them is not checked (another system's socket can be left out of scope: ` +
        `listener:ADDRESS:PORT, or run the scan where it can read every process's fds)`,
    },
  ];
}
