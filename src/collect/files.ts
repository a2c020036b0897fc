import { constants, type BigIntStats } from 'node:fs';
import { lstat, open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, isAbsolute, join, posix, resolve } from 'node:path';
import { parseEnvFile } from './envfile.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { FileKind, FileRecord, Problem } from '../snapshot/types.js';

/*
 * The file collector: one of the two places that read the host. It never writes, never follows a
 * symlink (not in the last component, not in any parent), never opens anything but a regular file or
 * a directory, and raw env values never leave it (they become SafeValues here).
 *
 * How a path is read safely (PITFALLS "Reading the host as root"):
 *   1. the root is resolved once with realpath (the scanner's own mount point may be a symlink);
 *   2. every component below the root is lstat'ed from the root downward: a symlink or non-folder
 *      parent stops the walk;
 *   3. only when lstat says `file` (or `directory`) is it opened, with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY,
 *      so a FIFO swapped in meanwhile neither blocks nor is read;
 *   4. the open descriptor is checked: fstat must give the same device and inode as lstat did, and
 *      where /proc/self/fd exists its link must be exactly the path expected (a parent replaced by a
 *      symlink after step 2 would show a different canonical path).
 */

export interface FileCollectOptions {
  /** Where the host is mounted ('/' normally; '/host' when the scanner runs in a container, --root). Paths in records are HOST paths. */
  root: string;
  /** Explicit host paths to record whatever they are (ledger targets, sources, bind-mount sources, former targets from history); missing ones become kind 'missing'. */
  paths: string[];
  /** Host paths to parse as env files, in addition to any regular file whose name ends in `.env`. They are recorded too. */
  envPaths: string[];
  /** Host folders walked recursively (managed roots): every entry under them is recorded (directories too, kind 'directory'). Symlinked folders are recorded as symlinks and not descended. */
  managedRoots: string[];
  safe: SafeValueMaker;
  /** At most this many records (default 20000); beyond it a Problem is recorded and the collection stops. */
  maxFiles?: number;
  /** Env files larger than this (default 1 MiB) are digested but not parsed, with `error` set. */
  maxEnvBytes?: number;
}

export const DEFAULT_MAX_FILES = 20_000;
export const DEFAULT_MAX_ENV_BYTES = 1024 * 1024;

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const DIR_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_DIRECTORY;
const MIN_CHUNK = 4 * 1024;
const MAX_CHUNK = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Safe primitives, shared with the ledger reader.

/** True for an absolute, normalized POSIX path without NUL (what a host path must look like). */
export function isHostPath(p: unknown): p is string {
  return typeof p === 'string' && p.startsWith('/') && !p.includes('\0') && posix.normalize(p) === p && (p === '/' || !p.endsWith('/'));
}

/** The root with every symlink in it resolved, so that it can be compared with /proc/self/fd links. */
export async function resolveRoot(root: string): Promise<string> {
  return realpath(isAbsolute(root) ? root : resolve(root));
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

/** lstat's every component of `hostPath` from the root downward; nothing is ever followed. */
export async function locate(realRoot: string, hostPath: string): Promise<Located> {
  const parts = hostPath.split('/').filter((p) => p !== '');
  let fsPath = realRoot;
  if (parts.length === 0) {
    try {
      return { state: 'found', fsPath, stat: await lstat(fsPath, { bigint: true }) };
    } catch (error) {
      return lstatFailure(error, '/');
    }
  }
  for (let i = 0; i < parts.length; i++) {
    fsPath = join(fsPath, parts[i]!);
    const last = i === parts.length - 1;
    let stat: BigIntStats;
    try {
      stat = await lstat(fsPath, { bigint: true });
    } catch (error) {
      return lstatFailure(error, '/' + parts.slice(0, i).join('/'));
    }
    if (last) return { state: 'found', fsPath, stat };
    const hostPrefix = '/' + parts.slice(0, i + 1).join('/');
    if (stat.isSymbolicLink()) return { state: 'blocked', error: `a parent folder is a symlink (${hostPrefix}): not followed` };
    // A parent that is not a folder: the path cannot exist (what ENOTDIR says).
    if (!stat.isDirectory()) return { state: 'missing' };
  }
  /* c8 ignore next */
  return { state: 'missing' };
}

function lstatFailure(error: unknown, parentHostPath: string): Located {
  const code = errnoCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'missing' };
  if (code === 'EACCES' || code === 'EPERM') {
    // lstat needs only search permission on the folder holding the entry: that folder is what refused.
    return { state: 'blocked', code, error: `permission denied on parent folder ${parentHostPath}` };
  }
  return { state: 'blocked', code, error: `cannot read: ${code}` };
}

export function errnoCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}

function describe(code: string): string {
  return code === 'EACCES' || code === 'EPERM' ? 'permission denied' : `cannot read: ${code}`;
}

/**
 * Checks that an open descriptor is what lstat saw at `fsPath`: same device and inode, the expected
 * type, and (where /proc/self/fd exists) exactly that canonical path. Returns an error text or null.
 */
async function checkDescriptor(fh: FileHandle, fsPath: string, expected: BigIntStats, kind: 'file' | 'directory'): Promise<string | null> {
  const now = await fh.stat({ bigint: true });
  const sameKind = kind === 'file' ? now.isFile() : now.isDirectory();
  if (!sameKind || now.ino !== expected.ino || now.dev !== expected.dev) return 'changed while being read: not read';
  let linked: string | null = null;
  try {
    linked = await readlink(`/proc/self/fd/${fh.fd}`);
  } catch {
    linked = null; // no /proc here: the inode check above is what we have
  }
  if (linked !== null && linked !== fsPath) return 'its path changed while being read (a parent replaced?): not read';
  return null;
}

export type ReadResult =
  | { ok: true; sha256: string; size: number; content?: Buffer; tooLarge?: boolean }
  | { ok: false; error: string; code?: string };

/**
 * Reads a regular file that lstat showed at `fsPath`, streaming it through sha256. The content is
 * kept too when `keepUpTo` is given and the file is not larger than that (`tooLarge` otherwise).
 */
export async function readRegularFile(fsPath: string, expected: BigIntStats, keepUpTo?: number): Promise<ReadResult> {
  if (!expected.isFile()) return { ok: false, error: 'not a regular file: not read' };
  let fh: FileHandle;
  try {
    fh = await open(fsPath, READ_FLAGS);
  } catch (error) {
    const code = errnoCode(error);
    // ELOOP: the last component became a symlink after lstat; O_NOFOLLOW refused it.
    return { ok: false, code, error: code === 'ELOOP' ? 'changed into a symlink while being read: not followed' : describe(code) };
  }
  try {
    const bad = await checkDescriptor(fh, fsPath, expected, 'file');
    if (bad) return { ok: false, error: bad };
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let tooLarge = false;
    let size = 0;
    // One read for a small file (plus the one that sees its end); large ones in 1 MiB reads.
    const buffer = Buffer.allocUnsafe(Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, Number(expected.size) + 1)));
    for (;;) {
      const { bytesRead } = await fh.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      size += bytesRead;
      if (keepUpTo !== undefined && !tooLarge) {
        if (keptBytes + bytesRead > keepUpTo) {
          tooLarge = true;
          kept.length = 0;
        } else {
          kept.push(Buffer.from(chunk));
          keptBytes += bytesRead;
        }
      }
    }
    const result: ReadResult = { ok: true, sha256: 'sha256:' + hash.digest('hex'), size };
    if (keepUpTo !== undefined) {
      if (tooLarge) result.tooLarge = true;
      else result.content = Buffer.concat(kept, keptBytes);
    }
    return result;
  } catch (error) {
    const code = errnoCode(error);
    return { ok: false, code, error: describe(code) };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** The names in a folder lstat showed at `fsPath`, read through a checked descriptor; sorted. */
async function readFolder(fsPath: string, expected: BigIntStats): Promise<{ ok: true; names: string[] } | { ok: false; error: string }> {
  let fh: FileHandle;
  try {
    fh = await open(fsPath, DIR_FLAGS);
  } catch (error) {
    const code = errnoCode(error);
    return { ok: false, error: code === 'ELOOP' ? 'changed into a symlink while being read: not followed' : describe(code) };
  }
  try {
    const bad = await checkDescriptor(fh, fsPath, expected, 'directory');
    if (bad) return { ok: false, error: bad };
    // Listing through the descriptor's /proc link reads exactly the folder that was checked.
    let names: string[];
    try {
      names = await readdir(`/proc/self/fd/${fh.fd}`);
    } catch {
      names = await readdir(fsPath);
    }
    return { ok: true, names: names.sort(byCodeUnit) };
  } catch (error) {
    return { ok: false, error: describe(errnoCode(error)) };
  } finally {
    await fh.close().catch(() => undefined);
  }
}

export function kindOf(stat: BigIntStats): FileKind {
  if (stat.isFile()) return 'file';
  if (stat.isDirectory()) return 'directory';
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isBlockDevice()) return 'block-device';
  if (stat.isCharacterDevice()) return 'char-device';
  return 'unknown';
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** mtime to the millisecond, rounded down from the nanoseconds (the same instant whatever the platform's float rounding). */
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
  safe: SafeValueMaker;
  maxEnvBytes: number;
  maxFiles: number;
  records: Map<string, FileRecord>;
  problems: Problem[];
  /** Folders already walked, by device:inode (nested managed roots, bind-mount loops). */
  walked: Set<string>;
  full: boolean;
}

/** Records explicit paths, env paths and everything under the managed roots; never throws for one file. */
export async function collectFiles(options: FileCollectOptions): Promise<{ files: FileRecord[]; problems: Problem[] }> {
  const problems: Problem[] = [];
  let realRoot: string;
  try {
    realRoot = await resolveRoot(options.root);
  } catch (error) {
    problems.push({ source: 'files', subject: options.root, message: `the host root ${options.root} cannot be read (${errnoCode(error)}): no file was collected` });
    return { files: [], problems };
  }
  const valid = (list: string[], what: string): string[] =>
    list.filter((p) => {
      if (isHostPath(p)) return true;
      problems.push({ source: 'files', subject: String(p), message: `${what} ${JSON.stringify(String(p))} is not an absolute, normalized host path: skipped` });
      return false;
    });
  const paths = valid(options.paths, 'path');
  const envPaths = valid(options.envPaths, 'env path');
  const managedRoots = valid(options.managedRoots, 'managed root');
  const ctx: Context = {
    realRoot,
    envPaths: new Set(envPaths),
    safe: options.safe,
    maxEnvBytes: options.maxEnvBytes ?? DEFAULT_MAX_ENV_BYTES,
    maxFiles: options.maxFiles ?? DEFAULT_MAX_FILES,
    records: new Map(),
    problems,
    walked: new Set(),
    full: false,
  };

  // Explicit paths first: they are what the ledger and containers name, the walk only adds to them.
  for (const hostPath of [...paths, ...envPaths]) {
    if (ctx.records.has(hostPath)) continue;
    if (!room(ctx)) break;
    const located = await locate(realRoot, hostPath);
    ctx.records.set(hostPath, await recordOf(ctx, hostPath, located));
  }
  for (const managedRoot of managedRoots) {
    if (ctx.full) break;
    await walk(ctx, managedRoot);
  }
  const files = [...ctx.records.values()].sort((a, b) => byCodeUnit(a.path, b.path));
  return { files, problems };
}

/** Whether one more record fits; the first time it does not, says so once. */
function room(ctx: Context): boolean {
  if (ctx.records.size < ctx.maxFiles) return true;
  if (!ctx.full) {
    ctx.full = true;
    ctx.problems.push({ source: 'files', message: `more than ${ctx.maxFiles} files to record: collection stopped there (raise --max-files / maxFiles, or narrow the managed roots)` });
  }
  return false;
}

/** Files read (opened, checked, hashed) at once during a walk: the records are still taken in walk order. */
const READ_AHEAD = 16;

/** A FIFO limit on how many promises run at once (granted in the order asked). */
function limiter(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    active--;
    waiting.shift()?.();
  };
  return async (work) => {
    if (active >= limit) await new Promise<void>((resolveTurn) => waiting.push(resolveTurn));
    active++;
    try {
      return await work();
    } finally {
      release();
    }
  };
}

async function walk(ctx: Context, managedRoot: string): Promise<void> {
  // Depth-first, in name order, without recursion (deep trees must not exhaust the stack). The
  // records of a folder's regular files are read ahead, a few at a time, as soon as the folder is
  // listed; each is still taken (and counted against maxFiles) when the walk reaches it, so what is
  // recorded is exactly what a one-at-a-time walk records.
  const limit = limiter(READ_AHEAD);
  const stack: Array<{ hostPath: string; located: Located | null; ahead?: Promise<FileRecord> }> = [{ hostPath: managedRoot, located: null }];
  while (stack.length > 0) {
    const { hostPath, located: known, ahead } = stack.pop()!;
    const located = known ?? (await locate(ctx.realRoot, hostPath));
    let record = ctx.records.get(hostPath);
    if (!record) {
      if (!room(ctx)) return;
      record = await (ahead ?? recordOf(ctx, hostPath, located));
      ctx.records.set(hostPath, record);
    }
    if (located.state !== 'found' || !located.stat.isDirectory()) continue;
    const id = `${located.stat.dev}:${located.stat.ino}`;
    if (ctx.walked.has(id)) continue;
    ctx.walked.add(id);
    const listing = await readFolder(located.fsPath, located.stat);
    if (!listing.ok) {
      record.error = listing.error;
      continue;
    }
    const children: Array<{ hostPath: string; located: Located; ahead?: Promise<FileRecord> }> = [];
    // A huge folder is not lstat'ed beyond what can still be recorded (one more, so the bound is reported).
    let fresh = 0;
    const roomLeft = ctx.maxFiles - ctx.records.size;
    for (const name of listing.names) {
      const childHost = hostPath === '/' ? '/' + name : `${hostPath}/${name}`;
      if (!ctx.records.has(childHost) && ++fresh > roomLeft + 1) break;
      const childFs = join(located.fsPath, name);
      let child: Located;
      try {
        child = { state: 'found', fsPath: childFs, stat: await lstat(childFs, { bigint: true }) };
      } catch (error) {
        child = lstatFailure(error, hostPath);
      }
      if (child.state === 'found' && child.stat.isFile() && !ctx.records.has(childHost)) {
        const ahead = limit(() => recordOf(ctx, childHost, child));
        ahead.catch(() => undefined); // recordOf never rejects; a walk that stops early must not leave an unhandled one
        children.push({ hostPath: childHost, located: child, ahead });
      } else {
        children.push({ hostPath: childHost, located: child });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

async function recordOf(ctx: Context, hostPath: string, located: Located): Promise<FileRecord> {
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
      record.linkTarget = await readlink(fsPath);
    } else if (record.kind === 'file') {
      const isEnv = ctx.envPaths.has(hostPath) || basename(hostPath).endsWith('.env');
      const read = await readRegularFile(fsPath, stat, isEnv ? ctx.maxEnvBytes : undefined);
      if (!read.ok) {
        record.error = read.error;
      } else {
        record.sha256 = read.sha256;
        if (read.tooLarge) {
          record.error = `env file larger than ${ctx.maxEnvBytes} bytes: digested, not parsed`;
        } else if (read.content) {
          const text = new TextDecoder('utf-8').decode(read.content);
          record.env = parseEnvFile(text).map((e) => ({ key: e.key, value: ctx.safe(e.value), line: e.line }));
        }
      }
    }
  } catch (error) {
    record.error = describe(errnoCode(error));
  }
  return record;
}
