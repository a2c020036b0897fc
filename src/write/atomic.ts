import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, symlink, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve, sep } from 'node:path';
import { ExitCode, MeshAuditError } from '../errors.js';
import { osErrorText } from './os-error.js';
import { trackPending, untrackPending } from './pending.js';

/**
 * `mkdir -p` that touches only what is missing: the nearest existing ancestor is found with lstat,
 * then the missing folders below it are made one at a time. (Node's own recursive mkdir never returns
 * for some paths — under /proc it loops on ENOENT — and a run must end.)
 */
async function makeFolders(dir: string): Promise<void> {
  const missing: string[] = [];
  let current = resolve(dir);
  while (
    !(await lstat(current).then(
      () => true,
      () => false,
    ))
  ) {
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of missing) {
    try {
      await mkdir(folder, { mode: 0o750 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * The folder a path names, checked on what the kernel would resolve: `link/` and `link/.` are the
 * symlink `link` itself (lstat of `link/` would follow it), and a `..` after a symlink would climb
 * out of the link's target rather than out of the name, so that is refused.
 */
export async function resolvedOutputPath(dir: string): Promise<string> {
  const absolute = dir.startsWith(sep) ? dir : process.cwd() + sep + dir;
  let walked: string = sep;
  for (const part of absolute.split(sep)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if ((await lstat(walked).catch(() => null))?.isSymbolicLink()) {
        throw new MeshAuditError(
          `${dir}: '..' after the symlink ${walked}; refusing an output folder reached through a symlink`,
          ExitCode.Incomplete,
        );
      }
      walked = dirname(walked);
    } else walked = join(walked, part);
  }
  return resolve(walked);
}

/**
 * Refuses an output folder that another user could tamper with: a symlink, world-writable, or owned
 * by someone else (the nightly job runs as root). Creates it (0750) when missing. The checks are made
 * on the resolved path (trailing `/`, `.` and `..` included), which is returned: use it from then on.
 */
export async function prepareOutputDir(named: string): Promise<string> {
  const dir = await resolvedOutputPath(named);
  if ((await lstat(dir).catch(() => null))?.isSymbolicLink()) {
    throw new MeshAuditError(`${named}: output folder is a symlink; refusing to write through it`, ExitCode.Incomplete);
  }
  try {
    await makeFolders(dir);
  } catch (err) {
    throw new MeshAuditError(`${dir}: cannot create output folder: ${osErrorText(err)}`, ExitCode.Incomplete);
  }
  const info = await lstat(dir);
  if (info.isSymbolicLink())
    throw new MeshAuditError(`${dir}: output folder is a symlink; refusing to write through it`, ExitCode.Incomplete);
  if (!info.isDirectory()) throw new MeshAuditError(`${dir}: output path is not a folder`, ExitCode.Incomplete);
  if ((info.mode & 0o002) !== 0)
    throw new MeshAuditError(`${dir}: output folder is world-writable; refusing to write there`, ExitCode.Incomplete);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new MeshAuditError(
      `${dir}: output folder is owned by uid ${info.uid}, not by this user (uid ${uid}); refusing to write there`,
      ExitCode.Incomplete,
    );
  }
  return dir;
}

/** A write that failed: exit 3 with the path and the OS error (a full disk is not an internal error). */
export class WriteFailure extends MeshAuditError {
  constructor(
    readonly path: string,
    error: unknown,
  ) {
    super(`${path}: cannot write: ${osErrorText(error)}`, ExitCode.Incomplete);
  }
}

/**
 * Writes `dir/name` atomically without following symlinks: an exclusive, no-follow temp file in the
 * same folder (mode 0640 unless told, set on the open file so the umask does not change it), fsync,
 * rename. A run killed mid-write leaves the previous file intact.
 */
export async function writeFileAtomic(
  dir: string,
  name: string,
  data: string | Uint8Array,
  tempName: () => string = randomTempName,
  mode = 0o640,
): Promise<string> {
  const target = join(dir, name);
  let opened;
  try {
    opened = await openExclusive(dir, name, tempName);
  } catch (err) {
    throw new WriteFailure(target, err);
  }
  const { handle, temp } = opened;
  try {
    if (mode !== 0o640) await handle.chmod(mode);
    await (typeof data === 'string' ? handle.writeFile(data, 'utf8') : handle.writeFile(data));
    await handle.sync();
    await handle.close();
    await rename(temp, target);
    untrackPending(temp);
    await syncFolder(dir);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    untrackPending(temp);
    throw new WriteFailure(target, err);
  }
  return target;
}

const randomTempName = (): string => `${process.pid}.${randomBytes(6).toString('hex')}`;
const tempPath = (dir: string, name: string, unique: string): string => join(dir, `.${name}.${unique}.tmp`);

/**
 * A new temp file, created exclusively without following links: something already at the name (a
 * planted symlink, a leftover) makes it try another name, never open what is there.
 */
async function openExclusive(dir: string, name: string, tempName: () => string) {
  for (let attempt = 0; ; attempt++) {
    const temp = tempPath(dir, name, tempName());
    // Tracked before it exists: a signal handled while the open is in flight still finds it.
    trackPending(temp);
    try {
      const handle = await open(
        temp,
        constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW,
        0o640,
      );
      return { handle, temp };
    } catch (err) {
      untrackPending(temp);
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err;
    }
  }
}

export async function syncFolder(dir: string): Promise<void> {
  const folder = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/** Points `dir/name` at `target` (a relative path) atomically: a new link under a temp name, renamed over. */
export async function replaceWithSymlink(
  dir: string,
  name: string,
  target: string,
  tempName: () => string = randomTempName,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const temp = tempPath(dir, name, tempName());
    trackPending(temp);
    try {
      await symlink(target, temp);
    } catch (err) {
      untrackPending(temp);
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5)
        throw new WriteFailure(join(dir, name), err);
      continue;
    }
    try {
      await rename(temp, join(dir, name));
      untrackPending(temp);
      await syncFolder(dir);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      untrackPending(temp);
      throw new WriteFailure(join(dir, name), err);
    }
    return;
  }
}
