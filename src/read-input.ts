import { readFile } from 'node:fs/promises';
import { MeshAuditError } from './errors.js';

/** Reads a file the user named (policy, snapshot, config): a missing or unreadable one is a usage error. */
export async function readInput(path: string, what: string): Promise<string> {
  try {
    // Read whole, then decoded once: readFile(path, 'utf8') decodes chunk by chunk, and was a third of
    // the time of reading a fleet's snapshots.
    return (await readFile(path)).toString('utf8');
  } catch (err) {
    throw new MeshAuditError(`${path}: cannot read ${what} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * JSON.parse, with an error that gives the position only: V8's messages quote the text around the
 * mistake, and a wrongly named file may hold secrets.
 */
export function parseJsonInput(text: string, path: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    const where = position === undefined ? '' : ` at line ${text.slice(0, Number(position)).split('\n').length}`;
    throw new MeshAuditError(`${path}: ${what} is not valid JSON${where}`);
  }
}
