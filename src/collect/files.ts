import { constants, lstatSync, openSync, readdirSync, readlinkSync, type BigIntStats } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { checkDescriptor, closeQuietly, describe, errnoCode, readRegularFile, type ReadResult } from './read-file.js';
import { fileStamp, type ReadCache, type ReadTicket } from './read-cache.js';
import { HashPool, HASH_IN_WORKER_BYTES } from './hash-pool.js';
import { DEFAULT_MAX_FILES } from '../settings/limits.js';
import { kindOf } from '../fs/file-kind.js';
import { fsName, isByteName, nameFromBytes } from '../fs/path-bytes.js';
import { basename, dirname, isAbsolute, join, posix, resolve } from 'node:path';
import { parseEnvBytes, readLiteral, type RawEnvBytesEntry } from './envfile.js';
import { ComposePool } from './compose-pool.js';
import { extendedFile } from '../engine/compose-labels.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { EnvEntry, FileRecord, Problem } from '../snapshot/types.js';

/*
 * The file collector: one of the two places that read the host. It never writes, never follows a
 * symlink (not in the last component, not in any parent), never opens anything but a regular file or
 * a directory, and raw env values never leave it (they become SafeValues here).
 *
 * How a path is read safely (ARCHITECTURE.md, Pitfalls: reading /proc as root):
 *   1. the root is resolved once with realpath (the scanner's own mount point may be a symlink);
 *   2. every component below the root is lstat'ed from the root downward: a symlink or non-folder
 *      parent stops the walk;
 *   3. only when lstat says `file` (or `directory`) is it opened, with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY,
 *      so a FIFO swapped in meanwhile neither blocks nor is read;
 *   4. the open descriptor is checked: fstat must give the same device and inode as lstat did, and
 *      where /proc/self/fd exists its link must be exactly the path expected (a parent replaced by a
 *      symlink after step 2 would show a different canonical path).
 *
 * The system calls are made synchronously, one file after the other: a file costs six of them, and
 * through fs/promises each one went to the thread pool and back (~15 µs of main-thread time each, and
 * the pool itself the bottleneck), which made a sweep of 100,000 small files 6.8x slower than
 * `find | xargs sha256sum` (test/bench/sweep.bench.ts). Nothing else runs while files are read (the
 * Docker collection is over by then), and a file whose read would hang (a hung network mount) hangs
 * the async version as surely.
 */

export interface FileCollectOptions {
  /**
   * Where the host is mounted ('/' normally; '/host' when the scanner runs in a container, --root). Paths in records
   * are HOST paths.
   */
  root: string;
  /**
   * Explicit host paths to record whatever they are (ledger targets, sources, bind-mount sources, former targets from
   * history); missing ones become kind 'missing'.
   */
  paths: string[];
  /**
   * Host paths to parse as env files, in addition to any regular file whose name ends in `.env`. They are recorded too.
   */
  envPaths: string[];
  /**
   * Host paths of Compose files (named by containers' Compose labels) to read for the env keys their services give
   * inline; the files their services `extends:` are read too. They are recorded too.
   */
  composePaths?: string[];
  /**
   * The Compose files' reader, when the caller made (and perhaps started) it earlier; the caller closes it. Else one is
   * made here for the Compose files named, and closed here.
   */
  compose?: ComposePool;
  /**
   * Host folders walked recursively (managed roots): every entry under them is recorded (directories too, kind
   * 'directory'). Symlinked folders are recorded as symlinks and not descended.
   */
  managedRoots: string[];
  safe: SafeValueMaker;
  /** At most this many records (default 20000); beyond it a Problem is recorded and the collection stops. */
  maxFiles?: number;
  /** Env files larger than this (default 1 MiB) are digested but not parsed, with `error` set. */
  maxEnvBytes?: number;
  /**
   * Paths under the managed roots left out (out of scope): not recorded, not read; a folder is still walked for what it
   * holds.
   */
  skip?: (hostPath: string) => boolean;
  /** serve's: a file whose lstat is as it was at the last read is not read again (src/collect/read-cache.ts). */
  cache?: { store: ReadCache; ticket: ReadTicket };
}

export const DEFAULT_MAX_ENV_BYTES = 1024 * 1024;

const DIR_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_DIRECTORY;

// ---------------------------------------------------------------------------------------------
// Safe primitives, shared with the ledger reader.

/** True for an absolute, normalized POSIX path without NUL (what a host path must look like). */
export function isHostPath(p: unknown): p is string {
  return (
    typeof p === 'string' &&
    p.startsWith('/') &&
    !p.includes('\0') &&
    posix.normalize(p) === p &&
    (p === '/' || !p.endsWith('/'))
  );
}

/** The root with every symlink in it resolved, so that it can be compared with /proc/self/fd links. */
export async function resolveRoot(root: string): Promise<string> {
  return nameFromBytes(await realpath(fsName(isAbsolute(root) ? root : resolve(root)), { encoding: 'buffer' }));
}

/** Where a host path is on this machine's file system, below the (already resolved) root. */
export function fsPathOf(realRoot: string, hostPath: string): string {
  return hostPath === '/' ? realRoot : join(realRoot, hostPath);
}

export type Located =
  | { state: 'found'; fsPath: string; stat: BigIntStats }
  | { state: 'missing' }
  /** Something stopped the walk before the entry could be seen (a symlinked parent, permission denied, …). */
  | { state: 'blocked'; error: string; code?: string };

/**
 * What lstat said of each parent folder met so far (by its path on this machine): `null` for a folder the walk goes
 * through, else where the walk stopped. One collection locates hundreds of files in the same few folders.
 */
export type ParentVerdicts = Map<string, Located | null>;

/**
 * lstat's every component of `hostPath` from the root downward; nothing is ever followed. With `parents`, a parent
 * folder already lstat'ed in this collection is not lstat'ed again: what is opened is still checked against its path
 * (checkDescriptor), which catches a parent replaced by a symlink since.
 */
export function locate(realRoot: string, hostPath: string, parents?: ParentVerdicts): Located {
  // A ledger's or a history's path may hold a surrogate no file name can (src/fs/path-bytes.ts): which file it means is
  // not known, so it is not checked; never `missing`, which the path's lstat under another name would say.
  if (!isByteName(hostPath))
    return { state: 'blocked', error: 'its name holds a character that stands for no file name bytes' };
  const parts = hostPath.split('/').filter((p) => p !== '');
  let fsPath = realRoot;
  if (parts.length === 0) {
    try {
      return { state: 'found', fsPath, stat: lstatSync(fsName(fsPath), { bigint: true }) };
    } catch (error) {
      return lstatFailure(error, '/');
    }
  }
  for (let i = 0; i < parts.length; i++) {
    fsPath = join(fsPath, parts[i]!);
    const last = i === parts.length - 1;
    if (!last && parents !== undefined) {
      let verdict = parents.get(fsPath);
      if (verdict === undefined) parents.set(fsPath, (verdict = parentVerdict(fsPath, parts, i)));
      if (verdict !== null) return verdict;
      continue;
    }
    if (last) {
      try {
        return { state: 'found', fsPath, stat: lstatSync(fsName(fsPath), { bigint: true }) };
      } catch (error) {
        return lstatFailure(error, '/' + parts.slice(0, i).join('/'), fsPath);
      }
    }
    const verdict = parentVerdict(fsPath, parts, i);
    if (verdict !== null) return verdict;
  }
  /* c8 ignore next */
  return { state: 'missing' };
}

/** null when `fsPath`, component `i` of `parts`, is a folder to go through; else where the walk stops there. */
function parentVerdict(fsPath: string, parts: readonly string[], i: number): Located | null {
  let stat: BigIntStats;
  try {
    stat = lstatSync(fsName(fsPath), { bigint: true });
  } catch (error) {
    return lstatFailure(error, '/' + parts.slice(0, i).join('/'), fsPath);
  }
  if (stat.isSymbolicLink())
    return {
      state: 'blocked',
      error: `a parent folder is a symlink (/${parts.slice(0, i + 1).join('/')}): not followed`,
    };
  // A parent that is not a folder: the path cannot exist (what ENOTDIR says).
  return stat.isDirectory() ? null : { state: 'missing' };
}

/**
 * Whether the folder `parentFsPath` holds a name that is not UTF-8 and that a lossy decoder (Docker's and Podman's
 * JSON, a tool's output) writes as `component`: each bad byte as U+FFFD. Such a path, not found as spelled, means a
 * file whose real name was lost on the way: which one is not known, so it is not checked, never `missing`.
 */
function lossyTwinIn(parentFsPath: string, component: string): boolean {
  if (!component.includes('\ufffd')) return false;
  const folded = (name: string): string => name.replace(/\ufffd+/g, '\ufffd');
  try {
    const names = readdirSync(fsName(parentFsPath), { encoding: 'buffer' });
    return names.some((n) => {
      const decoded = nameFromBytes(n);
      return decoded !== n.toString('utf8') && folded(n.toString('utf8')) === folded(component);
    });
  } catch {
    return false;
  }
}

const LOSSY_NAME =
  'its name holds U+FFFD where the host has bytes that are not UTF-8 (as the engine reports such a name): ' +
  'the file it means is not known';

function lstatFailure(error: unknown, parentHostPath: string, fsPath?: string): Located {
  const code = errnoCode(error);
  if (
    (code === 'ENOENT' || code === 'ENOTDIR') &&
    fsPath !== undefined &&
    lossyTwinIn(dirname(fsPath), basename(fsPath))
  )
    return { state: 'blocked', error: LOSSY_NAME };
  if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'missing' };
  if (code === 'EACCES' || code === 'EPERM') {
    // lstat needs only search permission on the folder holding the entry: that folder is what refused.
    return { state: 'blocked', code, error: `permission denied on parent folder ${parentHostPath}` };
  }
  return { state: 'blocked', code, error: `cannot read: ${code}` };
}

/** The names in a folder lstat showed at `fsPath`, read through a checked descriptor; sorted. */
function readFolder(
  fsPath: string,
  expected: BigIntStats,
): { ok: true; names: string[] } | { ok: false; error: string } {
  let fd: number;
  try {
    fd = openSync(fsName(fsPath), DIR_FLAGS);
  } catch (error) {
    const code = errnoCode(error);
    return {
      ok: false,
      error: code === 'ELOOP' ? 'changed into a symlink while being read: not followed' : describe(code),
    };
  }
  try {
    const bad = checkDescriptor(fd, fsPath, expected, 'directory');
    if (bad) return { ok: false, error: bad };
    // Listing through the descriptor's /proc link reads exactly the folder that was checked.
    let where: string | Buffer = `/proc/self/fd/${fd}`;
    let names: string[];
    try {
      names = readdirSync(where);
    } catch {
      where = fsName(fsPath);
      names = readdirSync(where);
    }
    // Node's decoding writes U+FFFD for a byte that is not UTF-8: a name no lstat finds. A listing without U+FFFD
    // was all UTF-8 and is exact; else the names are read again as bytes (a Buffer per name costs more).
    if (names.some((name) => name.includes('\uFFFD')))
      names = readdirSync(where, { encoding: 'buffer' }).map(nameFromBytes);
    return { ok: true, names: names.sort(byCodeUnit) };
  } catch (error) {
    return { ok: false, error: describe(errnoCode(error)) };
  } finally {
    closeQuietly(fd);
  }
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * mtime to the millisecond, rounded down from the nanoseconds (the same instant whatever the platform's float
 * rounding).
 */
function isoTime(stat: BigIntStats): string | undefined {
  const ms = stat.mtimeNs / 1_000_000n - (stat.mtimeNs < 0n && stat.mtimeNs % 1_000_000n !== 0n ? 1n : 0n);
  const date = new Date(Number(ms));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

// ---------------------------------------------------------------------------------------------
// The collector.

interface Context {
  realRoot: string;
  envPaths: Set<string>;
  composePaths: Set<string>;
  safe: SafeValueMaker;
  maxEnvBytes: number;
  maxFiles: number;
  records: Map<string, FileRecord>;
  problems: Problem[];
  /** Folders already walked, by device:inode (nested managed roots, bind-mount loops). */
  walked: Set<string>;
  full: boolean;
  skip: (hostPath: string) => boolean;
  /** Large files being hashed by workers. */
  pool: HashPool;
  /** Parent folders already lstat'ed (locate). */
  parents: ParentVerdicts;
  /** Compose files being read, by a worker while the other files are (compose-pool.ts). */
  compose: ComposePool;
  composing: Promise<void>[];
  pending: Promise<void>[];
  cache: FileCollectOptions['cache'];
}

/** Records explicit paths, env paths and everything under the managed roots; never throws for one file. */
export async function collectFiles(options: FileCollectOptions): Promise<{ files: FileRecord[]; problems: Problem[] }> {
  const problems: Problem[] = [];
  let realRoot: string;
  try {
    realRoot = await resolveRoot(options.root);
  } catch (error) {
    problems.push({
      source: 'files',
      subject: options.root,
      message: `the host root ${options.root} cannot be read (${errnoCode(error)}): no file was collected`,
    });
    return { files: [], problems };
  }
  const valid = (list: string[], what: string): string[] =>
    list.filter((p) => {
      if (isHostPath(p)) return true;
      problems.push({
        source: 'files',
        subject: String(p),
        message: `${what} ${JSON.stringify(String(p))} is not an absolute, normalized host path: skipped`,
      });
      return false;
    });
  const paths = valid(options.paths, 'path');
  const envPaths = valid(options.envPaths, 'env path');
  const composePaths = valid(options.composePaths ?? [], 'Compose file');
  const managedRoots = valid(options.managedRoots, 'managed root');
  const ctx: Context = {
    realRoot,
    envPaths: new Set(envPaths),
    composePaths: new Set(composePaths),
    safe: options.safe,
    maxEnvBytes: options.maxEnvBytes ?? DEFAULT_MAX_ENV_BYTES,
    maxFiles: options.maxFiles ?? DEFAULT_MAX_FILES,
    records: new Map(),
    problems,
    walked: new Set(),
    full: false,
    skip: options.skip ?? (() => false),
    pool: new HashPool(),
    parents: new Map(),
    compose: options.compose ?? new ComposePool(composePaths.length),
    composing: [],
    pending: [],
    cache: options.cache,
  };

  try {
    // Explicit paths first: they are what the ledger and containers name, the walk only adds to them.
    // Compose files first: they are read (by a worker, when there are many) while the other files are.
    await readExplicit(ctx, [...composePaths, ...paths, ...envPaths]);
    for (const managedRoot of managedRoots) {
      if (ctx.full) break;
      walk(ctx, managedRoot);
    }
    await Promise.all(ctx.pending);
  } finally {
    await Promise.all([ctx.pool.close(), options.compose === undefined ? ctx.compose.close() : undefined]);
  }
  const files = [...ctx.records.values()].sort((a, b) => byCodeUnit(a.path, b.path));
  options.cache?.store.keepOnlyFiles(new Set(ctx.records.keys()));
  return { files, problems };
}

/** Records the paths named, then the files their Compose files' services extend, and theirs, until none is new. */
async function readExplicit(ctx: Context, named: string[]): Promise<void> {
  let explicit = named;
  while (explicit.length > 0) {
    for (const hostPath of explicit) {
      if (ctx.records.has(hostPath)) continue;
      if (!room(ctx)) break;
      ctx.records.set(hostPath, recordOf(ctx, hostPath, locate(ctx.realRoot, hostPath, ctx.parents)));
    }
    await Promise.all(ctx.composing.splice(0));
    // A service extending one of another file: that file is read too, as a Compose file (again, when it was
    // recorded as another kind of file above: a ledger target, say).
    explicit = [];
    for (const [hostPath, record] of ctx.records) {
      if (!record.compose || !('services' in record.compose)) continue;
      for (const service of Object.values(record.compose.services)) {
        const file = service.extends?.file;
        if (file === undefined) continue;
        const target = extendedFile(hostPath, file);
        if (!isHostPath(target) || ctx.composePaths.has(target)) continue;
        ctx.composePaths.add(target);
        if (ctx.records.get(target)?.kind === 'file') ctx.records.delete(target);
        explicit.push(target);
      }
    }
  }
}

/** Whether one more record fits; the first time it does not, says so once. */
function room(ctx: Context): boolean {
  if (ctx.records.size < ctx.maxFiles) return true;
  if (!ctx.full) {
    ctx.full = true;
    ctx.problems.push({
      source: 'files',
      message:
        `more than ${ctx.maxFiles} files to record: collection stopped there (raise --max-files / maxFiles, ` +
        `or narrow the managed roots)`,
    });
  }
  return false;
}

function walk(ctx: Context, managedRoot: string): void {
  // Depth-first, in name order, without recursion (deep trees must not exhaust the stack).
  const stack: Array<{ hostPath: string; located: Located | null }> = [{ hostPath: managedRoot, located: null }];
  while (stack.length > 0) {
    const { hostPath, located: known } = stack.pop()!;
    const located = known ?? locate(ctx.realRoot, hostPath, ctx.parents);
    let record = ctx.records.get(hostPath);
    if (!record && !ctx.skip(hostPath)) {
      if (!room(ctx)) return;
      record = recordOf(ctx, hostPath, located);
      ctx.records.set(hostPath, record);
    }
    if (located.state !== 'found' || !located.stat.isDirectory()) continue;
    const id = `${located.stat.dev}:${located.stat.ino}`;
    if (ctx.walked.has(id)) continue;
    ctx.walked.add(id);
    const listing = readFolder(located.fsPath, located.stat);
    if (!listing.ok) {
      // A folder out of scope that cannot be listed is not reported: what it holds was left out by name.
      if (record) record.error = listing.error;
      continue;
    }
    const children: Array<{ hostPath: string; located: Located }> = [];
    // A huge folder is not lstat'ed beyond what can still be recorded (one more, so the bound is reported).
    let fresh = 0;
    const roomLeft = ctx.maxFiles - ctx.records.size;
    for (const name of listing.names) {
      const childHost = hostPath === '/' ? '/' + name : `${hostPath}/${name}`;
      if (!ctx.records.has(childHost) && ++fresh > roomLeft + 1) break;
      const childFs = join(located.fsPath, name);
      let child: Located;
      try {
        child = { state: 'found', fsPath: childFs, stat: lstatSync(fsName(childFs), { bigint: true }) };
      } catch (error) {
        child = lstatFailure(error, hostPath);
      }
      children.push({ hostPath: childHost, located: child });
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

function recordOf(ctx: Context, hostPath: string, located: Located): FileRecord {
  if (located.state === 'missing') return { path: hostPath, kind: 'missing' };
  if (located.state === 'blocked') return { path: hostPath, kind: 'unknown', error: located.error };
  const { stat, fsPath } = located;
  const record: FileRecord = {
    path: hostPath,
    kind: kindOf(stat),
    size: Number(stat.size),
    mode: (Number(stat.mode) & 0o7777).toString(8).padStart(4, '0'),
    uid: Number(stat.uid),
    gid: Number(stat.gid),
  };
  const mtime = isoTime(stat);
  if (mtime !== undefined) record.mtime = mtime;
  record.inode = Number(stat.ino);
  try {
    if (record.kind === 'symlink') {
      record.linkTarget = nameFromBytes(readlinkSync(fsName(fsPath), { encoding: 'buffer' }));
    } else if (record.kind === 'file') {
      const isEnv = ctx.envPaths.has(hostPath) || basename(hostPath).endsWith('.env');
      const isCompose = ctx.composePaths.has(hostPath);
      // How it is read is part of its stamp: a file read as another kind of file is read again. A Compose file's facts
      // are of its own bytes only (the files it extends are records of their own, followed from its facts).
      const reading = isCompose ? (isEnv ? 'env+compose' : 'compose') : isEnv ? 'env' : 'file';
      const stamp = ctx.cache !== undefined ? fileStamp(stat, reading) : undefined;
      const cached = stamp !== undefined ? ctx.cache?.store.file(hostPath, stamp) : undefined;
      if (cached !== undefined) return cached;
      const keep = () => {
        if (stamp !== undefined && record.error === undefined)
          ctx.cache?.store.keepFile(ctx.cache.ticket, hostPath, stamp, record);
      };
      if (!isEnv && !isCompose && stat.size >= BigInt(HASH_IN_WORKER_BYTES)) {
        // Hashed meanwhile by a worker; the record is complete once collectFiles has waited for it.
        ctx.pending.push(
          ctx.pool.read(fsPath, stat).then((read) => {
            applyRead(ctx, record, read, false);
            keep();
          }),
        );
      } else {
        const read = readRegularFile(fsPath, stat, isEnv || isCompose ? ctx.maxEnvBytes : undefined);
        applyRead(ctx, record, read, isEnv);
        if (isCompose && read.ok && !read.tooLarge) {
          // Kept once its facts are in it: the record a later read takes is whole.
          ctx.composing.push(
            ctx.compose.facts(read.content ?? Buffer.alloc(0)).then((facts) => {
              record.compose = facts;
              keep();
            }),
          );
          return record;
        }
        if (isCompose && read.ok)
          record.compose = { error: `larger than ${ctx.maxEnvBytes} bytes: not read as a Compose file` };
        keep();
      }
    }
  } catch (error) {
    record.error = describe(errnoCode(error));
  }
  return record;
}

function applyRead(ctx: Context, record: FileRecord, read: ReadResult, isEnv: boolean): void {
  if (!read.ok) {
    record.error = read.error;
    return;
  }
  record.sha256 = read.sha256;
  if (!isEnv) return;
  if (read.tooLarge) {
    record.error = `env file larger than ${ctx.maxEnvBytes} bytes: digested, not parsed`;
  } else if (read.content) {
    Object.assign(record, envReadings(read.content, ctx.safe));
  }
}

/** An env file's two readings (envfile.ts), secret-safe: what a file record holds of an env file. */
export function envReadings(
  content: Uint8Array,
  safe: SafeValueMaker,
): Required<Pick<FileRecord, 'env' | 'envLiteral'>> {
  const literal = readLiteral(content);
  return {
    env: parseEnvBytes(content).map((e) => safeEntry(safe, e)),
    envLiteral: {
      entries: literal.entries.map((e) => safeEntry(safe, e)),
      ...(literal.bom ? { bom: true as const } : {}),
      ...(literal.dockerRefuses !== undefined ? { dockerRefuses: literal.dockerRefuses } : {}),
    },
  };
}

/** An entry of either reading, its value made secret-safe (none for a key written without `=`). */
function safeEntry(safe: SafeValueMaker, e: RawEnvBytesEntry): EnvEntry {
  return {
    key: e.key,
    ...(e.value !== null ? { value: safe(e.value) } : {}),
    line: e.line,
    ...(e.caller ? { caller: true as const } : {}),
  };
}
