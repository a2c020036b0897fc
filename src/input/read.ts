import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { MeshAuditError } from '../errors.js';
import { kindInWords, kindOf } from '../fs/file-kind.js';

/** A file that is there but is not a regular file: never read (a FIFO would block the run forever). */
export class NotRegularFile extends Error {
  readonly code = 'ENOTREG';
  constructor(readonly kind: string) {
    super(`is ${kind}, not a regular file: not read`);
  }
}

/**
 * The bytes of a regular file. Opened non-blocking (opening a FIFO for reading would otherwise wait
 * for a writer forever), then checked with fstat on the open descriptor to be a regular file before
 * anything is read: a FIFO, socket, device or folder throws NotRegularFile. Other failures throw the
 * file system's error (with its `code`).
 */
export async function readRegularInput(path: string): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotRegularFile(kindInWords(kindOf(stats)));
    return await handle.readFile();
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Reads a file the user named (policy, snapshot, config, waivers, report): a missing or unreadable one is a usage
 * error.
 */
export async function readInput(path: string, what: string): Promise<string> {
  try {
    // Read whole, then decoded once: readFile(path, 'utf8') decodes chunk by chunk, and was a third of
    // the time of reading a fleet's snapshots.
    return (await readRegularInput(path)).toString('utf8');
  } catch (err) {
    if (err instanceof NotRegularFile) throw new MeshAuditError(`${path}: cannot read ${what}: it ${err.message}`);
    throw new MeshAuditError(`${path}: cannot read ${what} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
