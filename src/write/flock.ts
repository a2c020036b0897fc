/*
 * flock(2), from fs-ext (a native addon: Node has no flock), loaded the first time a lock is taken, so
 * that commands that write no report load no native code. From npm or a clone it is the compiled addon
 * in node_modules. A single executable carries the addon as a SEA asset instead (it has no
 * node_modules): write/embedded-addon.ts loads it, and the bundle's fs-ext gets it from there
 * (scripts/package/bundle.ts).
 */
import { createRequire } from 'node:module';
import { EMBEDDED } from '../runtime/embedded.js';
import { loadEmbeddedAddon } from './embedded-addon.js';

const require = createRequire(import.meta.url);

/** The SEA asset holding fs-ext's compiled addon (scripts/package/bundle.ts, ADDON_ASSETS). */
export const FS_EXT_ASSET = 'fs_ext.node';

type FsExt = typeof import('fs-ext');
export type Flock = FsExt['flock'];
let fsExt: FsExt | undefined;

/**
 * fs-ext's flock. `scratchDir` is a folder the run has checked and may write: in a single executable
 * the addon is loaded through an unnamed file there (nothing stays).
 */
export function loadFlock(scratchDir: string): Flock {
  if (fsExt === undefined) {
    if (EMBEDDED !== undefined) loadEmbeddedAddon(FS_EXT_ASSET, scratchDir);
    fsExt = require('fs-ext') as FsExt;
  }
  return fsExt.flock;
}
