import { lstatSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fsName, isByteName, nameFromBytes } from '../fs/path-bytes.js';

/** Symlinks followed in one path at most: Linux's own limit (past it, ELOOP). */
export const MAX_SYMLINKS = 40;
/** The longest path a resolution may hold on its way (PATH_MAX). */
export const MAX_RESOLVED_LENGTH = 4096;

/** A host path with every symlink in it followed, as the host's kernel would; or why it is not known. */
export type ResolvedHostPath =
  | { state: 'resolved'; path: string }
  | { state: 'missing' }
  | { state: 'unread'; reason: string };

/**
 * `hostPath` (absolute, a path on the host) with its symlinks followed under the (already resolved) root, component
 * by component with lstat and readlink: an absolute link target starts again from the host's root, never from this
 * machine's (the scanner in a container reads the host at `--root`), `..` never climbs above it. Bounded: at most
 * MAX_SYMLINKS links and MAX_RESOLVED_LENGTH characters; past either, or on a read error other than "not there", the
 * path is unread (not known), never missing. Nothing is opened.
 */
export function resolveHostPath(realRoot: string, hostPath: string): ResolvedHostPath {
  if (!isByteName(hostPath)) return { state: 'unread', reason: 'its name stands for no file name bytes' };
  let pending = hostPath.split('/');
  const done: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      done.pop();
      continue;
    }
    done.push(part);
    const fsPath = join(realRoot, ...done);
    let isLink: boolean;
    try {
      const stat = lstatSync(fsName(fsPath));
      isLink = stat.isSymbolicLink();
      // A file taken for a folder: what ENOTDIR says.
      if (!isLink && !stat.isDirectory() && pending.some((p) => p !== '' && p !== '.')) return { state: 'missing' };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'missing' };
      return { state: 'unread', reason: `/${done.join('/')}: ${code ?? 'not readable'}` };
    }
    if (!isLink) continue;
    if (++links > MAX_SYMLINKS) return { state: 'unread', reason: `more than ${MAX_SYMLINKS} symlinks (a loop?)` };
    let target: string;
    try {
      target = nameFromBytes(readlinkSync(fsName(fsPath), { encoding: 'buffer' }));
    } catch (error) {
      return {
        state: 'unread',
        reason: `/${done.join('/')}: ${(error as NodeJS.ErrnoException).code ?? 'not readable'}`,
      };
    }
    done.pop();
    if (target.startsWith('/')) done.length = 0;
    pending = [...target.split('/'), ...pending];
    if (pending.join('/').length + done.join('/').length > MAX_RESOLVED_LENGTH)
      return { state: 'unread', reason: `longer than ${MAX_RESOLVED_LENGTH} characters once resolved` };
  }
  return { state: 'resolved', path: '/' + done.join('/') };
}
