import { lstat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { ExitCode, MeshAuditError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';

/**
 * Writes a node_exporter textfile (`--prom-file PATH`) where operators put it: the textfile
 * collector's folder, often owned by the exporter's user, not ours. The file is a regular file, mode
 * 0644 (the exporter runs as another user), never a symlink into our own reports; written to an
 * exclusive, no-follow temp file in that folder (named `.NAME.….tmp`: the collector reads only
 * `*.prom`), fsynced and renamed over the old one, so the collector never reads half a file and a
 * symlink planted at PATH is replaced, not followed. Refused: a name not ending in `.prom`, a folder
 * that is a symlink or that anyone may write to, and a folder at PATH.
 */
export async function writeTextfile(path: string, data: string): Promise<string> {
  const target = resolve(path);
  const dir = dirname(target);
  const name = basename(target);
  const refuse = (why: string): never => {
    throw new MeshAuditError(`--prom-file ${path}: ${why}`, ExitCode.Incomplete);
  };
  if (!name.endsWith('.prom') || name === '.prom')
    refuse("the name must end in '.prom' (node_exporter's textfile collector reads only those)");
  const folder = await lstat(dir).catch((err: unknown) =>
    refuse(`cannot use folder ${dir} (${(err as NodeJS.ErrnoException).code ?? 'error'})`),
  );
  if (folder.isSymbolicLink()) refuse(`folder ${dir} is a symlink; refusing to write through it`);
  if (!folder.isDirectory()) refuse(`${dir} is not a folder`);
  if ((folder.mode & 0o002) !== 0) refuse(`folder ${dir} is world-writable; refusing to write there`);
  const existing = await lstat(target).catch(() => null);
  if (existing && existing.isDirectory()) refuse('is a folder');
  try {
    return await writeFileAtomic(dir, name, data, undefined, 0o644);
  } catch (err) {
    return refuse(`cannot write (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
