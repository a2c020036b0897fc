import { createHash } from 'node:crypto';
import { constants, readdirSync, readFile as readFileCallback, readFileSync, readlinkSync } from 'node:fs';
import { lstat, open, readlink, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { compareText } from '../text/compare.js';
import { fsName, isByteName } from '../fs/path-bytes.js';
import type { SafeValue, SafeValueMaker } from '../secret/value.js';
import type { BoundFile, ProcView } from '../snapshot/types.js';
import { listeningSockets, type ProcNetRow } from './proc-net.js';
import { codeOf, describeReadError, isVanished, readNetTables } from './proc-read.js';

/**
 * What /proc shows of a container's main process (ARCHITECTURE.md, `src/collect/`). Read-only: nothing
 * is written, nothing is executed; raw env values exist only long enough to become SafeValues.
 */

export interface ProcOptions {
  /** Default `/proc`. */
  procRoot?: string;
  /**
   * `/` or the `--root` mount of the host: a bind source found there that is not a regular file
   * (a directory bind) is skipped, so callers may pass every bind source.
   */
  hostRoot: string;
  safe: SafeValueMaker;
  /**
   * The process table shared by all containers of one scan (read once, on first use); by default
   * read afresh for this container. A process forked after that read is not in it: its sockets are
   * not attributed, as with any child started after the scan.
   */
  processTable?: () => Promise<ProcessTable>;
  /**
   * The socket tables already read in one scan, by network namespace (`net:[inode]`): containers on
   * the host network (or sharing one container's) share one read.
   */
  netTables?: Map<string, Promise<ProcNetRow[]>>;
}

export interface ProcContainer {
  id: string;
  running: boolean;
  pid: number;
  mounts: { type: string; source: string; destination: string }[];
}

/**
 * fs.readFile with a callback, not fs/promises: node 20's promise version goes through a FileHandle
 * and costs several times more per small file. Used for `environ` only: reading another process's
 * memory waits for its memory lock, which a process stuck in the kernel can hold.
 */
const readFile = promisify(readFileCallback) as (path: string, encoding: 'utf8') => Promise<string>;

/*
 * The other /proc files (stat, cgroup, fd links, net tables) are read synchronously: the kernel
 * makes their text on the spot, from the process's own table entries, without its memory lock, and
 * a scan reads thousands of them. Through the thread pool each read cost ~150 µs of CPU, read here
 * ~20 µs: a table of 340 processes took 50 ms of CPU, now 8 ms.
 */
const readProcText = (path: string): string => readFileSync(path, 'utf8');

/** Synchronous work as a promise (a throw becomes a rejection), for the callers that wait for it. */
function settled<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/** The kernel's initial pid namespace always has this inode (PROC_PID_INIT_INO, 0xEFFFFFFC). */
export const HOST_PID_NAMESPACE_INODE = 4026531836;

const FULL_ID = /^[0-9a-f]{64}$/;

/** Carries a reason from deep inside the walk to the one place that turns it into `available: false`. */
class Unavailable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Why /proc cannot be used for containers of this engine, or null when it can: the engine is not
 * local (endpoint not a unix socket); not root; our pid namespace is not the host's (the pids the
 * engine reports are host pids). A local socket forwarded to another machine passes here; the
 * per-container cgroup check of readProcView catches it.
 */
export async function procUnavailableReason(opts: {
  endpointIsLocalSocket: boolean;
  procRoot?: string;
}): Promise<string | null> {
  if (!opts.endpointIsLocalSocket) return 'the Docker engine is not local (its endpoint is not a unix socket)';
  if (process.geteuid?.() !== 0) return 'not running as root';
  const procRoot = opts.procRoot ?? '/proc';
  const where = `${procRoot}/self/ns/pid`;
  let link: string;
  try {
    link = await readlink(where);
  } catch (err) {
    return describeReadError(err, where);
  }
  const inode = /^pid:\[(\d+)\]$/.exec(link)?.[1];
  if (inode === undefined) return `${where} is not a pid namespace link`;
  if (Number(inode) !== HOST_PID_NAMESPACE_INODE) {
    return `our pid namespace (pid:[${inode}]) is not the host's: the engine's pids do not name processes here`;
  }
  return null;
}

/** `pid (comm) S ppid … starttime …`: comm may hold spaces and parentheses, so split after the last `)`. */
export function parseStat(text: string): { ppid: number; startTime: string; threads: number | null } | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // rest[0] is field 3 (state); ppid is field 4, num_threads field 20, starttime field 22.
  const ppid = Number(rest[1]);
  const threads = Number(rest[17]);
  const startTime = rest[19];
  if (!Number.isInteger(ppid) || startTime === undefined) return null;
  return { ppid, startTime, threads: Number.isInteger(threads) && threads > 0 ? threads : null };
}

/** Whether a `/proc/<pid>/cgroup` text puts the process in the container with this full id. */
export function cgroupHasContainer(text: string, id: string): boolean {
  if (!FULL_ID.test(id) || !text.includes(id)) return false;
  for (const line of text.split('\n')) {
    // hierarchy-ID:controller-list:path (the path may itself hold `:`)
    const first = line.indexOf(':');
    const second = first < 0 ? -1 : line.indexOf(':', first + 1);
    if (second < 0) continue;
    if (
      line
        .slice(second + 1)
        .split('/')
        .some((part) => namesContainer(part, id))
    )
      return true;
  }
  return false;
}

const NAME_PREFIX = /^[A-Za-z0-9_-]+-$/;

/**
 * `docker-<id>.scope` (systemd driver, v2 or v1), `<id>` (cgroupfs driver, any parent);
 * `cri-containerd-<id>.scope`, `libpod-<id>.scope` follow the same pattern. Compared as text: a
 * pattern made per container cost a scan of 100 running containers ~8 ms of CPU.
 */
function namesContainer(part: string, id: string): boolean {
  const end = part.endsWith('.scope') ? part.length - '.scope'.length : part.length;
  if (end < id.length || !part.startsWith(id, end - id.length)) return false;
  const prefix = part.slice(0, end - id.length);
  return prefix === '' || NAME_PREFIX.test(prefix);
}

/** `/proc/<pid>/<name>` of the container's process; throws Unavailable when it cannot be read. */
function readOwnProcText(procRoot: string, pid: number, name: string): string {
  try {
    return readProcText(`${procRoot}/${pid}/${name}`);
  } catch (err) {
    if (isVanished(err)) throw new Unavailable(`pid ${pid} is not running here (exited, or another pid namespace?)`);
    throw new Unavailable(describeReadError(err, `${procRoot}/${pid}`));
  }
}

/** The process's start time (field 22 of its stat); throws Unavailable when it is not there to read. */
function startTimeOf(procRoot: string, pid: number): string {
  const parsed = parseStat(readOwnProcText(procRoot, pid, 'stat'));
  if (!parsed) throw new Unavailable(`cannot parse ${procRoot}/${pid}/stat`);
  return parsed.startTime;
}

/** The process's start time, after checking it belongs to the container; throws Unavailable otherwise. */
function verify(procRoot: string, pid: number, id: string): string {
  if (!cgroupHasContainer(readOwnProcText(procRoot, pid, 'cgroup'), id))
    throw new Unavailable(`pid ${pid} is not this container's process here (another pid namespace?)`);
  return startTimeOf(procRoot, pid);
}

/** Children of each process, by parent pid: the whole process table, from the ppid of each `/proc/<n>/stat`. */
export type ProcessTable = ReadonlyMap<number, readonly number[]>;

/**
 * Reads the process table once: a scan asks it for the descendants of every running container, and
 * reading all of /proc per container was most of a live scan's time (100 containers, ~28,000 reads).
 * (This kernel family may lack `/proc/<pid>/task/<tid>/children`, so the table is the portable way.)
 */
export function readProcessTable(procRoot = '/proc'): Promise<ProcessTable> {
  return settled(() => {
    const children = new Map<number, number[]>();
    for (const name of readdirSync(procRoot)) {
      if (!/^\d+$/.test(name)) continue;
      let text: string;
      try {
        text = readProcText(`${procRoot}/${name}/stat`);
      } catch {
        continue; // vanished (or unreadable): not ours to report
      }
      const stat = parseStat(text);
      if (!stat) continue;
      const list = children.get(stat.ppid);
      if (list) list.push(Number(name));
      else children.set(stat.ppid, [Number(name)]);
    }
    return children;
  });
}

/** `pid` and every process descending from it in `table`. */
export function descendantsOf(table: ProcessTable, pid: number): number[] {
  return walkTree(pid, (p) => table.get(p) ?? []);
}

/** `pid` and every process `childrenOf` leads to from it, each once, breadth first (`first`: the asking is `pid`'s). */
function walkTree(pid: number, childrenOf: (p: number, first: boolean) => readonly number[]): number[] {
  const tree: number[] = [];
  const seen = new Set<number>();
  const queue = [pid];
  for (let i = 0; i < queue.length; i++) {
    const p = queue[i]!;
    if (seen.has(p)) continue;
    seen.add(p);
    tree.push(p);
    for (const child of childrenOf(p, i === 0)) queue.push(child);
  }
  return tree;
}

/** `pid` and every process descending from it, from a fresh read of the process table. */
export async function processTree(pid: number, procRoot = '/proc'): Promise<number[]> {
  return descendantsOf(await readProcessTable(procRoot), pid);
}

/** Inodes of the sockets open in `/proc/<p>/fd` for each pid; the first pid must be readable, the others may vanish. */
export function socketInodes(pids: readonly number[], procRoot = '/proc'): Promise<Set<number>> {
  return settled(() => socketInodesNow(pids, procRoot));
}

function socketInodesNow(pids: readonly number[], procRoot: string): Set<number> {
  const inodes = new Set<number>();
  for (const [index, p] of pids.entries()) {
    const dir = `${procRoot}/${p}/fd`;
    let fds: string[];
    try {
      fds = readdirSync(dir);
    } catch (err) {
      if (index > 0 && isVanished(err)) continue;
      throw new Unavailable(describeReadError(err, dir));
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`${dir}/${fd}`);
      } catch (err) {
        if (isVanished(err)) continue; // closed mid-walk
        throw new Unavailable(describeReadError(err, `${dir}/${fd}`));
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined) inodes.add(Number(inode));
    }
  }
  return inodes;
}

/** All rows of the process's network namespace tables (proc-read.ts), a failure as this walk's Unavailable. */
function netRows(procRoot: string, pid: number): ProcNetRow[] {
  try {
    return readNetTables(procRoot, pid);
  } catch (err) {
    throw new Unavailable(err instanceof Error ? err.message : String(err));
  }
}

/** The socket tables of the process's network namespace, read once per namespace when `cache` is given. */
function namespaceRows(
  procRoot: string,
  pid: number,
  cache: Map<string, Promise<ProcNetRow[]>> | undefined,
): Promise<ProcNetRow[]> {
  if (!cache) return settled(() => netRows(procRoot, pid));
  let namespace: string;
  try {
    namespace = readlinkSync(`${procRoot}/${pid}/ns/net`);
  } catch {
    return settled(() => netRows(procRoot, pid)); // cannot tell which namespace: read this process's own
  }
  let rows = cache.get(namespace);
  if (!rows) {
    rows = settled(() => netRows(procRoot, pid));
    cache.set(namespace, rows);
    // A failed read is this container's reason, not every later one's.
    rows.catch(() => cache.delete(namespace));
  }
  return rows;
}

/** NUL-separated KEY=VALUE; as getenv() does, the first of duplicate keys wins. */
async function readEnv(procRoot: string, pid: number, safe: SafeValueMaker): Promise<Record<string, SafeValue>> {
  const path = `${procRoot}/${pid}/environ`;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Unavailable(describeReadError(err, path));
  }
  const env: Record<string, SafeValue> = {};
  for (const item of text.split('\0')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    const key = eq < 0 ? item : item.slice(0, eq);
    if (key === '' || Object.prototype.hasOwnProperty.call(env, key)) continue;
    env[key] = safe(eq < 0 ? '' : item.slice(eq + 1));
  }
  return env;
}

class FileError extends Error {}

/**
 * The kind of a bind source on the host, without opening it: `other` (a directory, a socket, …) only
 * when sure; a missing path, a symlink under a non-`/` root or an error give `unknown`, and the
 * container's view decides (a container keeps a file whose host path was since removed).
 */
export async function hostKind(hostRoot: string, source: string): Promise<'file' | 'other' | 'unknown'> {
  if (!source.startsWith('/') || !isByteName(source)) return 'unknown';
  const parts = source.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) return 'unknown';
  // The host's root folder itself (`-v /:/host:ro`, how examples/nightly/docker-run.sh runs the scanner).
  if (parts.length === 0) return 'other';
  // eslint-disable-next-line regexp/no-super-linear-move -- --host-root is the operator's setting, not the host's
  const base = hostRoot.replace(/\/+$/, '');
  try {
    if (base === '') {
      // The scanner's root is the host's: following links is what the engine did, and stat opens nothing.
      return (await stat(fsName(source))).isFile() ? 'file' : 'other';
    }
    let path = base;
    for (const [i, part] of parts.entries()) {
      path = `${path}/${part}`;
      const st = await lstat(fsName(path));
      // An absolute link here would resolve against OUR root, not the host's: cannot tell.
      if (st.isSymbolicLink()) return 'unknown';
      if (i === parts.length - 1) return st.isFile() ? 'file' : 'other';
      if (!st.isDirectory()) return 'unknown';
    }
  } catch {
    return 'unknown';
  }
  return 'unknown';
}

/**
 * The file a container sees at `destination`, reached under `rootDir` (`/proc/<pid>/root`) one
 * component at a time with lstat: a symlink anywhere is refused, since the kernel would resolve
 * it against OUR root (pelagos#349, syft#3396). Only a regular file is opened (never a FIFO), with
 * O_NOFOLLOW|O_NONBLOCK, and it must be the very inode the walk found.
 */
async function boundFile(
  rootDir: string,
  pid: number,
  mount: { source: string; destination: string },
): Promise<BoundFile> {
  const out: BoundFile = { destination: mount.destination, source: mount.source, inode: null, sha256: null };
  const shown = `/proc/${pid}/root${mount.destination}`;
  try {
    if (!mount.destination.startsWith('/')) throw new FileError('destination is not an absolute path');
    if (!isByteName(mount.destination))
      throw new FileError('its name holds a character that stands for no file name bytes');
    const parts = mount.destination.split('/').filter((part) => part !== '' && part !== '.');
    if (parts.includes('..')) throw new FileError('unsafe container path');
    if (parts.length === 0) throw new FileError('not a regular file');
    let path = rootDir;
    for (const [i, part] of parts.entries()) {
      path = `${path}/${part}`;
      let st;
      try {
        st = await lstat(fsName(path), { bigint: true });
      } catch (err) {
        if (codeOf(err) === 'ENOENT' || codeOf(err) === 'ENOTDIR') throw new FileError('missing in the container');
        throw new FileError(describeReadError(err, shown));
      }
      if (st.isSymbolicLink()) throw new FileError('symlink in container path');
      const last = i === parts.length - 1;
      if (!last && !st.isDirectory()) throw new FileError('not a directory in container path');
      if (last && !st.isFile()) throw new FileError('not a regular file');
      if (last) {
        const found = await hashExact(path, st.dev, st.ino, shown);
        out.inode = found.inode;
        out.sha256 = found.sha256;
      }
    }
  } catch (err) {
    out.error = err instanceof FileError ? err.message : describeReadError(err, shown);
  }
  return out;
}

async function hashExact(
  path: string,
  dev: bigint,
  ino: bigint,
  shown: string,
): Promise<{ inode: number; sha256: string }> {
  let handle;
  try {
    handle = await open(fsName(path), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (codeOf(err) === 'ELOOP') throw new FileError('symlink in container path');
    if (codeOf(err) === 'ENOENT') throw new FileError('missing in the container');
    throw new FileError(describeReadError(err, shown));
  }
  try {
    const st = await handle.stat({ bigint: true });
    // A component swapped for a symlink after the walk would land on another inode: refuse it.
    if (!st.isFile() || st.dev !== dev || st.ino !== ino) throw new FileError('file changed while being read');
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
    return { inode: Number(st.ino), sha256: 'sha256:' + hash.digest('hex') };
  } catch (err) {
    if (err instanceof FileError) throw err;
    throw new FileError(describeReadError(err, shown));
  } finally {
    await handle.close();
  }
}

/** The names (comm) of the processes of a tree, each once, sorted; one gone meanwhile is passed over. */
function processNames(procRoot: string, pids: readonly number[]): string[] {
  const names = new Set<string>();
  for (const p of pids) {
    try {
      names.add(readProcText(`${procRoot}/${p}/comm`).replace(/\n$/, ''));
    } catch (err) {
      if (!isVanished(err)) throw err;
    }
  }
  return [...names].sort(compareText);
}

/** Why a container that is not running has no /proc view: what its inspect says, not a read that failed. */
export const NOT_RUNNING = 'container is not running';

/**
 * What the container's main process shows in /proc: its real env, the sockets it and its
 * descendants listen on (in its network namespace), and the single-file bind mounts as it sees
 * them. Unavailable (with the reason) rather than guessed; never throws.
 */
export async function readProcView(
  container: ProcContainer,
  bindFileSources: Set<string>,
  opts: ProcOptions,
): Promise<ProcView> {
  const procRoot = opts.procRoot ?? '/proc';
  const { pid } = container;
  if (!container.running || pid === 0) return { available: false, reason: NOT_RUNNING };
  if (!Number.isSafeInteger(pid) || pid < 0) return { available: false, reason: `pid ${pid} is not a process id` };
  if (!FULL_ID.test(container.id)) return { available: false, reason: 'container id is not a full 64-hex id' };
  try {
    const startTime = verify(procRoot, pid, container.id);
    const env = await readEnv(procRoot, pid, opts.safe);
    const tree = await processTreeOf(pid, procRoot, opts.processTable ?? (() => readProcessTable(procRoot)));
    const inodes = socketInodesNow(tree, procRoot);
    // No socket open anywhere in the tree: nothing of it can listen, and the tables are not read.
    // Reading /proc/<pid>/net/tcp{,6} costs ~1.2 ms of kernel time each whatever the namespace
    // holds (the kernel walks its whole connection hash), most of a scan of idle containers.
    const listening =
      inodes.size === 0 ? [] : listeningSockets(await namespaceRows(procRoot, pid, opts.netTables), inodes);
    const boundFiles: BoundFile[] = [];
    for (const mount of container.mounts) {
      if (mount.type !== 'bind' || !bindFileSources.has(mount.source)) continue;
      if ((await hostKind(opts.hostRoot, mount.source)) === 'other') continue;
      boundFiles.push(await boundFile(`${procRoot}/${pid}/root`, pid, mount));
    }
    boundFiles.sort((a, b) => compareText(a.destination, b.destination) || compareText(a.source, b.source));
    const processes = processNames(procRoot, tree);
    // The pid may have been reused while we read: the same process still has the same start time
    // (a reused pid has a later one, whichever container it is in).
    if (startTimeOf(procRoot, pid) !== startTime) {
      return { available: false, reason: `pid ${pid} exited while being read` };
    }
    return { available: true, env, listening, boundFiles, processes };
  } catch (err) {
    if (err instanceof Unavailable) return { available: false, reason: err.reason };
    return { available: false, reason: describeReadError(err, `${procRoot}/${pid}`) };
  }
}

/** Whether this kernel has `/proc/<pid>/task/<tid>/children` (CONFIG_PROC_CHILDREN), looked at once per root. */
const childrenFiles = new Map<string, boolean>();
export function hasChildrenFiles(procRoot: string): boolean {
  let has = childrenFiles.get(procRoot);
  if (has === undefined) {
    try {
      readProcText(`${procRoot}/self/task/${process.pid}/children`);
      has = true;
    } catch {
      has = false;
    }
    childrenFiles.set(procRoot, has);
  }
  return has;
}

/**
 * `pid` and its descendants: from the children files of their threads where the kernel has them (a container's tree
 * costs a few reads), else from the process table (a read of the whole of /proc, shared by a read's containers).
 */
export async function processTreeOf(
  pid: number,
  procRoot: string,
  processTable: () => Promise<ProcessTable>,
): Promise<number[]> {
  return hasChildrenFiles(procRoot) ? descendantsByChildren(procRoot, pid) : descendantsOf(await processTable(), pid);
}

/** `pid` and its descendants from the children files of each of their threads (no walk of the whole table). */
function descendantsByChildren(procRoot: string, pid: number): number[] {
  return walkTree(pid, (p, first) => childrenOfThreads(procRoot, p, first, null));
}

/**
 * The children of `p`, from the children file of each of its threads: of its one thread when `threads` is 1 (no
 * listing of its threads), else of each thread listed. A process gone meanwhile has none, unless it is the first.
 */
function childrenOfThreads(procRoot: string, p: number, first: boolean, threads: number | null): number[] {
  let tasks: string[];
  try {
    tasks = threads === 1 ? [String(p)] : readdirSync(`${procRoot}/${p}/task`);
  } catch (err) {
    if (!first && isVanished(err)) return [];
    throw err;
  }
  const children: number[] = [];
  for (const tid of tasks) {
    let text: string;
    try {
      text = readProcText(`${procRoot}/${p}/task/${tid}/children`);
    } catch (err) {
      if (threads !== 1 && isVanished(err)) continue;
      if (!first && isVanished(err)) return [];
      throw err;
    }
    for (const child of text.split(' ')) if (/^\d+$/.test(child)) children.push(Number(child));
  }
  return children;
}

/**
 * What of a container's processes its /proc facts follow from, as one string: each process of its tree (pid, start
 * time, name) and the sockets they hold. serve reads a container's /proc again only when this moved (or an event
 * names the container): a socket that starts to listen is a new socket in some process's fds, a new program is a new
 * start time or name. null: the main process cannot be read (the container is read again). Cheap: no socket table is
 * read (those cost ~1.3 ms each whatever they hold: readProcView's comment), only the tree's stat and fd links.
 */
export async function processSignature(
  pid: number,
  procRoot = '/proc',
  processTable: () => Promise<ProcessTable> = () => readProcessTable(procRoot),
): Promise<string | null> {
  try {
    // Each process's stat is read once, first: its name and start time are in the signature, and its thread count
    // spares the walk the listing of its threads when it has one, as most of a container's processes have (the poll
    // reads every running container's tree each time).
    type Stat = { text: string; parsed: ReturnType<typeof parseStat> } | null;
    const stats = new Map<number, Stat>();
    const statOf = (p: number): Stat => {
      if (!stats.has(p)) {
        try {
          const text = readProcText(`${procRoot}/${p}/stat`);
          stats.set(p, { text, parsed: parseStat(text) });
        } catch (err) {
          if (p === pid || !isVanished(err)) throw err;
          stats.set(p, null);
        }
      }
      return stats.get(p) ?? null;
    };
    const tree = hasChildrenFiles(procRoot)
      ? walkTree(pid, (p, first) => {
          const stat = statOf(p);
          return stat === null ? [] : childrenOfThreads(procRoot, p, first, stat.parsed?.threads ?? null);
        })
      : descendantsOf(await processTable(), pid);
    const processes: string[] = [];
    for (const p of tree) {
      const stat = statOf(p);
      if (stat === null) continue;
      // pid (comm) state ppid …: the name is what is between the first '(' and the last ')'.
      const { text, parsed } = stat;
      processes.push(`${p}:${parsed?.startTime ?? '?'}:${text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'))}`);
    }
    const sockets = [...socketInodesNow(tree, procRoot)].sort((a, b) => a - b);
    return `${processes.join(' ')}|${sockets.join(' ')}`;
  } catch {
    return null;
  }
}
