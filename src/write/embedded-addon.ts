/*
 * A native addon carried inside the single executable (a SEA asset: scripts/package/bundle.ts lists
 * them), loaded with no file of its own on the host. dlopen(3) loads only files, so the addon's bytes
 * go into an unnamed file (O_TMPFILE) in a folder the run has already checked and may write (the
 * output folder), are loaded through /proc/self/fd, and disappear with the last reference: nothing is
 * written outside --out, nothing is left behind even by a run killed outright, nothing is read from
 * the repository and no program is started. Where the file system has no O_TMPFILE (NFS), a named
 * file is created exclusively without following links and removed as soon as it is loaded.
 */
import { closeSync, constants, openSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { getAsset } from 'node:sea';
import { trackPending, untrackPending } from './pending.js';

/** Linux's O_TMPFILE (__O_TMPFILE | O_DIRECTORY), which node:fs does not export. */
const O_TMPFILE = 0o20000000 | constants.O_DIRECTORY;
/** What open(2) answers where the file system cannot make an unnamed file. */
const NO_TMPFILE = new Set(['EOPNOTSUPP', 'ENOTSUP', 'EISDIR', 'EINVAL']);

const loaded = new Map<string, unknown>();

/** Loads the addon stored as SEA asset `asset`, once per process, through a file in folder `dir`. */
export function loadEmbeddedAddon(asset: string, dir: string): unknown {
  let exports = loaded.get(asset);
  if (exports === undefined) {
    exports = loadAddonBytes(Buffer.from(getAsset(asset)), dir);
    loaded.set(asset, exports);
  }
  return exports;
}

/**
 * The bundle's stand-in for an addon's own `require('….node')` (scripts/package/bundle.ts): the
 * exports loadEmbeddedAddon loaded.
 */
export function embeddedAddon(asset: string): unknown {
  const exports = loaded.get(asset);
  if (exports === undefined) throw new Error(`${asset}: required before loadEmbeddedAddon loaded it`);
  return exports;
}

/** An addon's compiled bytes loaded through a file in `dir` that is gone once loaded; its exports. */
export function loadAddonBytes(bytes: Buffer, dir: string): unknown {
  let fd: number;
  try {
    fd = openSync(dir, O_TMPFILE | constants.O_RDWR | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if (!NO_TMPFILE.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    return loadFromNamedFile(bytes, dir);
  }
  try {
    writeFileSync(fd, bytes);
    return dlopen(`/proc/self/fd/${fd}`, dir);
  } finally {
    closeSync(fd);
  }
}

function loadFromNamedFile(bytes: Buffer, dir: string): unknown {
  const path = join(dir, `.mesh-audit-addon.${process.pid}.${randomBytes(6).toString('hex')}.node`);
  // Tracked before it exists: a run stopped by a signal meanwhile removes it (write/pending.ts).
  trackPending(path);
  try {
    const fd = openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
    try {
      writeFileSync(fd, bytes);
    } finally {
      closeSync(fd);
    }
    return dlopen(path, dir);
  } finally {
    try {
      unlinkSync(path);
    } catch {
      // not created
    }
    untrackPending(path);
  }
}

function dlopen(path: string, dir: string): unknown {
  const module = { exports: {} as unknown };
  try {
    process.dlopen(module, path);
  } catch (err) {
    // dlopen's own words; "failed to map segment" is what a file system mounted noexec answers.
    throw new Error(
      `the addon could not be loaded through a file in ${dir}, whose file system must allow executable mappings (not ` +
        `mounted noexec): ${(err as Error).message}`,
    );
  }
  return module.exports;
}
