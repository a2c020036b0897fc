import { compareText } from '../text/compare.js';
import type { ListeningSocket } from '../snapshot/types.js';

/** Pure parsing of `/proc/<pid>/net/{tcp,tcp6,udp,udp6}`: no I/O here. */

export type ProcNetProtocol = ListeningSocket['protocol'];

/** One socket line of a /proc/net table. */
export interface ProcNetRow {
  protocol: ProcNetProtocol;
  address: string;
  port: number;
  /** Kernel socket state (`st` column, hex in the file): 0x0A LISTEN, 0x07 CLOSE (an unconnected UDP socket). */
  state: number;
  /** Socket inode, as in `/proc/<pid>/fd/N -> socket:[inode]`; 0 for sockets no process owns (TIME_WAIT). */
  inode: number;
  remoteAddress: string;
  remotePort: number;
}

/** Byte order the kernel used for each 32-bit address word: that of the host that wrote the file. */
export type Endianness = 'LE' | 'BE';

export const TCP_LISTEN = 0x0a;
export const UDP_UNCONNECTED = 0x07;

const HEX = /^[0-9A-Fa-f]+$/;

/** The 4 bytes of one 32-bit word as the kernel printed it with `%08X` of a host-order read. */
function wordBytes(hex8: string, endian: Endianness): number[] {
  const bytes = [0, 2, 4, 6].map((i) => parseInt(hex8.slice(i, i + 2), 16));
  return endian === 'LE' ? bytes.reverse() : bytes;
}

function ipv4(bytes: readonly number[]): string {
  return bytes.join('.');
}

/** RFC 5952 text of 16 bytes: lower case, no leading zeros, the longest (first) run of 2+ zero groups as `::`. */
export function formatIpv6(bytes: readonly number[]): string {
  // IPv4-mapped (::ffff:a.b.c.d): first 80 bits zero, then 0xffff.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return '::ffff:' + ipv4(bytes.slice(12, 16));
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number): string => g.toString(16);
  if (bestLen < 2) return groups.map(hex).join(':');
  const head = groups.slice(0, bestStart).map(hex).join(':');
  const tail = groups
    .slice(bestStart + bestLen)
    .map(hex)
    .join(':');
  return `${head}::${tail}`;
}

/** `0100007F:752F` -> `{address: '127.0.0.1', port: 29999}`; null when malformed. */
function parseEndpoint(field: string, v6: boolean, endian: Endianness): { address: string; port: number } | null {
  const colon = field.indexOf(':');
  if (colon < 0) return null;
  const addr = field.slice(0, colon);
  const portHex = field.slice(colon + 1);
  if (!HEX.test(addr) || !HEX.test(portHex) || portHex.length > 4) return null;
  if (addr.length !== (v6 ? 32 : 8)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < addr.length; i += 8) bytes.push(...wordBytes(addr.slice(i, i + 8), endian));
  return { address: v6 ? formatIpv6(bytes) : ipv4(bytes), port: parseInt(portHex, 16) };
}

/**
 * Parses the text of `/proc/net/{tcp,tcp6,udp,udp6}` (or `/proc/<pid>/net/…`). The header and any
 * malformed line are skipped. Addresses are 32-bit words in the writing host's byte order
 * (`endian`, little-endian by default: x86-64, arm64); ports are plain hex.
 */
export function parseProcNet(text: string, protocol: ProcNetProtocol, endian: Endianness = 'LE'): ProcNetRow[] {
  const v6 = protocol === 'tcp6' || protocol === 'udp6';
  const rows: ProcNetRow[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
    if (fields.length < 10 || !/^\d+:$/.test(fields[0] ?? '')) continue;
    const local = parseEndpoint(fields[1]!, v6, endian);
    const remote = parseEndpoint(fields[2]!, v6, endian);
    const st = fields[3]!;
    const inode = fields[9]!;
    if (!local || !remote || !HEX.test(st) || !/^\d+$/.test(inode)) continue;
    rows.push({
      protocol,
      address: local.address,
      port: local.port,
      state: parseInt(st, 16),
      inode: Number(inode),
      remoteAddress: remote.address,
      remotePort: remote.port,
    });
  }
  return rows;
}

const isUnspecified = (address: string): boolean => address === '0.0.0.0' || address === '::';

/**
 * Sockets waiting for peers: TCP in LISTEN, UDP unconnected (state 07, remote all zeros).
 * With `inodes`, only sockets whose inode is in the set (the ones a process holds in its fds:
 * a host-network container's table is the whole host's). Deduplicated (SO_REUSEPORT gives several
 * rows for one address) and sorted by protocol, address, port.
 */
export function listeningSockets(rows: readonly ProcNetRow[], inodes?: ReadonlySet<number>): ListeningSocket[] {
  const seen = new Map<string, ListeningSocket>();
  for (const row of rows) {
    const tcp = row.protocol === 'tcp' || row.protocol === 'tcp6';
    const listening = tcp
      ? row.state === TCP_LISTEN
      : row.state === UDP_UNCONNECTED && isUnspecified(row.remoteAddress) && row.remotePort === 0;
    if (!listening) continue;
    if (inodes && !inodes.has(row.inode)) continue;
    const key = `${row.protocol} ${row.address} ${row.port}`;
    if (!seen.has(key)) seen.set(key, { protocol: row.protocol, address: row.address, port: row.port });
  }
  return [...seen.values()].sort(
    (a, b) => compareText(a.protocol, b.protocol) || compareText(a.address, b.address) || a.port - b.port,
  );
}
