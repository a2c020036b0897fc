import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { parseProcNet, type ProcNetProtocol, type ProcNetRow } from './proc-net.js';

/** Reading /proc, as the container collector (proc.ts) and the host's sockets (host-listeners.ts) both do. */

export const codeOf = (err: unknown): string | undefined =>
  err !== null && typeof err === 'object' && 'code' in err && typeof err.code === 'string' ? err.code : undefined;

/** Gone mid-walk: the normal fate of a process or fd we were about to read. */
export const isVanished = (err: unknown): boolean => {
  const code = codeOf(err);
  return code === 'ENOENT' || code === 'ESRCH';
};

/** A reason for a person; never the raw error (which could quote more than a path). */
export function describeReadError(err: unknown, what: string): string {
  switch (codeOf(err)) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied reading ${what}`;
    case 'ENOENT':
      return `${what} does not exist`;
    case 'ESRCH':
      return `process gone while reading ${what}`;
    default:
      return `cannot read ${what} (${codeOf(err) ?? (err instanceof Error ? err.name : 'error')})`;
  }
}

const NET_TABLES: readonly ProcNetProtocol[] = ['tcp', 'tcp6', 'udp', 'udp6'];

/**
 * Every row of the socket tables of a process's network namespace (`/proc/<pid>/net/{tcp,tcp6,udp,udp6}`).
 * Only the IPv6 tables may be missing (a kernel without IPv6); any other failure throws an Error whose
 * message is the reason (describeReadError).
 */
export function readNetTables(procRoot: string, pid: number): ProcNetRow[] {
  const endian = endianness();
  const rows: ProcNetRow[] = [];
  for (const protocol of NET_TABLES) {
    const path = `${procRoot}/${pid}/net/${protocol}`;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if (codeOf(err) === 'ENOENT' && protocol.endsWith('6')) continue;
      throw new Error(describeReadError(err, path));
    }
    rows.push(...parseProcNet(text, protocol, endian));
  }
  return rows;
}
