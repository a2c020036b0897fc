import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { EMBEDDED } from '../runtime/embedded.js';
import { ExitCode, MeshAuditError } from '../errors.js';
import { loadFlock, type Flock } from './flock.js';
import { osErrorText } from './os-error.js';

/*
 * One run at a time per output folder: an advisory flock(2) on `<out>/.mesh-audit.lock`, held for the
 * whole run. flock, not a lock file that exists or not: the kernel drops it when the holder's process
 * ends however it ends (SIGKILL, OOM), so a dead run never leaves the folder locked. Node has no flock
 * of its own; fs-ext (a small native addon, built by node-gyp on install; write/flock.ts loads it when
 * a lock is first taken) calls flock(2) itself, so the lock is the same one `flock(1)` takes. The
 * holder writes its pid into the file, for the message of the run that waits.
 */

export const LOCK_FILE = '.mesh-audit.lock';
const POLL_MS = 100;

export interface OutputLock {
  release(): Promise<void>;
}

/** The lock is held by another run and the wait is over: `holder` names it (`pid N`). */
export class FolderBusy extends MeshAuditError {
  constructor(
    message: string,
    readonly holder: string,
  ) {
    super(message, ExitCode.Incomplete);
  }
}

const tryFlock = (flock: Flock, fd: number, mode: 'exnb' | 'shnb' = 'exnb'): Promise<boolean> =>
  new Promise((resolve, reject) =>
    flock(fd, mode, (err) => {
      if (!err) resolve(true);
      else if (err.code === 'EAGAIN' || err.code === 'EWOULDBLOCK') resolve(false);
      else reject(err);
    }),
  );

/** Polls for the lock until it is had or `timeoutSeconds` pass; then exit 3 naming the holder's pid. */
async function waitForFlock(
  flock: Flock,
  handle: FileHandle,
  mode: 'exnb' | 'shnb',
  timeoutSeconds: number,
  who: string,
  doing: string,
): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  while (!(await tryFlock(flock, handle.fd, mode))) {
    if (Date.now() >= deadline) {
      const holder = await holderOf(handle);
      throw new FolderBusy(
        `${who} (${holder}) ${doing}; gave up after waiting ${timeoutSeconds} s (--lock-timeout)`,
        holder,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function holderOf(handle: FileHandle): Promise<string> {
  const text = (await handle.readFile({ encoding: 'utf8' }).catch(() => '')).trim();
  return /^\d+$/.test(text) ? `pid ${text}` : 'pid unknown';
}

/**
 * Takes the lock of output folder `dir` (already checked by prepareOutputDir), waiting up to
 * `timeoutSeconds`; past it, exit 3 naming the holder's pid.
 */
export async function lockOutputFolder(dir: string, timeoutSeconds: number): Promise<OutputLock> {
  const path = join(dir, LOCK_FILE);
  let flock: Flock;
  try {
    flock = loadFlock(dir);
  } catch (err) {
    throw new MeshAuditError(
      `${dir}: cannot lock the output folder: flock(2) support (fs-ext) did not load: ${(err as Error).message}`,
      ExitCode.Incomplete,
    );
  }
  let handle: FileHandle;
  try {
    handle = await open(
      path,
      constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o640,
    );
  } catch (err) {
    throw new MeshAuditError(`${path}: cannot open the lock file: ${osErrorText(err)}`, ExitCode.Incomplete);
  }
  try {
    if (!(await handle.stat()).isFile())
      throw new MeshAuditError(
        `${path}: the lock file is not a regular file; refusing to use the folder`,
        ExitCode.Incomplete,
      );
    await waitForFlock(
      flock,
      handle,
      'exnb',
      timeoutSeconds,
      `${dir}: another mesh-audit run`,
      'is writing this output folder',
    );
    await handle.truncate(0);
    await handle.write(`${process.pid}\n`, 0);
  } catch (err) {
    await handle.close().catch(() => undefined);
    if (err instanceof MeshAuditError) throw err;
    throw new MeshAuditError(`${path}: cannot lock the output folder: ${osErrorText(err)}`, ExitCode.Incomplete);
  }
  return {
    // Closing the only descriptor drops the flock.
    release: () => handle.close().catch(() => undefined),
  };
}

/**
 * A shared lock on the output folder that holds `historyDir` (the folder itself, or up to two levels
 * above it: `<out>/history/<host>` is what a scan keeps), for a run that only reads it — `evaluate
 * --history` on the folder a nightly scan writes. It waits while a scan holds the folder (up to
 * `timeoutSeconds`, then exit 3 naming the holder), so the history is never read while it is pruned;
 * readers do not wait for one another. Nothing is created: no lock file there means no scanner's
 * folder, and no lock is taken. The file is opened read-only, never followed if it is a symlink.
 * `scratchDir`: this run's own checked output folder, if it has one.
 */
export async function lockForReading(
  historyDir: string,
  timeoutSeconds: number,
  scratchDir: string | undefined,
): Promise<OutputLock | undefined> {
  // The single executable loads flock(2) through an unnamed file in a folder this run has checked and
  // may write (./flock.ts): never in the scan's folder. With no output folder of its own (`--out -`)
  // it reads the history without the lock (docs/command-line.md, --history).
  if (EMBEDDED !== undefined && scratchDir === undefined) return undefined;
  for (const dir of [historyDir, join(historyDir, '..'), join(historyDir, '..', '..')]) {
    const path = join(dir, LOCK_FILE);
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
        continue;
      throw new MeshAuditError(
        `${path}: cannot open the lock file of the folder holding ${historyDir}: ${osErrorText(err)}`,
        ExitCode.Incomplete,
      );
    }
    try {
      if (!(await handle.stat()).isFile())
        throw new MeshAuditError(
          `${path}: the lock file is not a regular file; refusing to read ${historyDir}`,
          ExitCode.Incomplete,
        );
      const flock = loadFlock(scratchDir ?? dir);
      await waitForFlock(
        flock,
        handle,
        'shnb',
        timeoutSeconds,
        `${historyDir}: another mesh-audit run`,
        'is writing this history',
      );
    } catch (err) {
      await handle.close().catch(() => undefined);
      if (err instanceof MeshAuditError) throw err;
      throw new MeshAuditError(
        `${path}: cannot lock ${historyDir} for reading: ${osErrorText(err)}`,
        ExitCode.Incomplete,
      );
    }
    return { release: () => handle.close().catch(() => undefined) };
  }
  return undefined;
}
