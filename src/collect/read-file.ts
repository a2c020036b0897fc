import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fsName, nameFromBytes } from '../fs/path-bytes.js';

/*
 * Reading one regular file safely (steps 3 and 4 of files.ts): opened without following a link or
 * blocking, checked to be what lstat saw, streamed through sha256. Shared by the file collector, the
 * ledger reader and the hashing workers (hash-worker.ts), so it imports nothing else of mesh-audit but
 * src/fs/path-bytes.ts (a path is a name of bytes: a byte that is not UTF-8 is written U+DC80..U+DCFF).
 */

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const MIN_CHUNK = 4 * 1024;
const MAX_CHUNK = 1024 * 1024;

/** What lstat said of the file: all a read checks against (a BigIntStats, or the same fields sent to a worker). */
export interface ExpectedFile {
  dev: bigint;
  ino: bigint;
  size: bigint;
  isFile(): boolean;
}

export function errnoCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}

export function describe(code: string): string {
  return code === 'EACCES' || code === 'EPERM' ? 'permission denied' : `cannot read: ${code}`;
}

/**
 * Checks that an open descriptor is what lstat saw at `fsPath`: same device and inode, the expected
 * type, and (where /proc/self/fd exists) exactly that canonical path. Returns an error text or null.
 */
export function checkDescriptor(
  fd: number,
  fsPath: string,
  expected: Pick<ExpectedFile, 'dev' | 'ino'>,
  kind: 'file' | 'directory',
): string | null {
  const now = fstatSync(fd, { bigint: true });
  const sameKind = kind === 'file' ? now.isFile() : now.isDirectory();
  if (!sameKind || now.ino !== expected.ino || now.dev !== expected.dev) return 'changed while being read: not read';
  let linked: string | null;
  try {
    linked = nameFromBytes(readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' }));
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
export function readRegularFile(fsPath: string, expected: ExpectedFile, keepUpTo?: number): ReadResult {
  if (!expected.isFile()) return { ok: false, error: 'not a regular file: not read' };
  let fd: number;
  try {
    fd = openSync(fsName(fsPath), READ_FLAGS);
  } catch (error) {
    const code = errnoCode(error);
    // ELOOP: the last component became a symlink after lstat; O_NOFOLLOW refused it.
    return {
      ok: false,
      code,
      error: code === 'ELOOP' ? 'changed into a symlink while being read: not followed' : describe(code),
    };
  }
  try {
    const bad = checkDescriptor(fd, fsPath, expected, 'file');
    if (bad) return { ok: false, error: bad };
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let tooLarge = false;
    let size = 0;
    // One read for a small file (plus the one that sees its end); large ones in 1 MiB reads.
    const buffer = readBuffer(Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, Number(expected.size) + 1)));
    for (;;) {
      const bytesRead = readSync(fd, buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      // A short read of a regular file is its end; one that reached the size lstat saw needs no
      // further read to learn it (a file that grew meanwhile fills the buffer and is read on).
      const ended = bytesRead < buffer.length && size + bytesRead >= Number(expected.size);
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
      if (ended) break;
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
    closeQuietly(fd);
  }
}

/** One buffer per size class, reused: reads are sequential, and hash.update copies what it needs. */
const buffers = new Map<number, Buffer>();
function readBuffer(size: number): Buffer {
  const rounded = 2 ** Math.ceil(Math.log2(size));
  let buffer = buffers.get(rounded);
  if (!buffer) buffers.set(rounded, (buffer = Buffer.allocUnsafe(rounded)));
  return buffer;
}

export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing was written: a failed close loses nothing
  }
}
