import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ExitCode, MeshAuditError } from '../errors.js';

/**
 * Refuses an output folder that another user could tamper with: a symlink, world-writable, or owned
 * by someone else (the nightly job runs as root). Creates it (0750) when missing.
 */
export async function prepareOutputDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o750 });
  } catch (err) {
    throw new MeshAuditError(`${dir}: cannot create output folder (${(err as NodeJS.ErrnoException).code ?? 'error'})`, ExitCode.Incomplete);
  }
  const info = await lstat(dir);
  if (info.isSymbolicLink()) throw new MeshAuditError(`${dir}: output folder is a symlink; refusing to write through it`, ExitCode.Incomplete);
  if (!info.isDirectory()) throw new MeshAuditError(`${dir}: output path is not a folder`, ExitCode.Incomplete);
  if ((info.mode & 0o002) !== 0) throw new MeshAuditError(`${dir}: output folder is world-writable; refusing to write there`, ExitCode.Incomplete);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new MeshAuditError(`${dir}: output folder is owned by uid ${info.uid}, not by this user (uid ${uid}); refusing to write there`, ExitCode.Incomplete);
  }
}

/**
 * Writes `dir/name` atomically without following symlinks: an exclusive, no-follow temp file in the
 * same folder (mode 0640), fsync, rename. A run killed mid-write leaves the previous file intact.
 */
export async function writeFileAtomic(dir: string, name: string, data: string): Promise<string> {
  const target = join(dir, name);
  const temp = join(dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o640);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
    await handle.close();
    await rename(temp, target);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  const folder = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return target;
}
