import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { ExitCode, MeshAuditError } from '../errors.js';
import type { StatusAnswer } from './status.js';

/*
 * How `mesh-audit serve` answers: HTTP/1.1 on a unix socket (or on loopback when asked), GET and HEAD only —
 * it reads and tells, nothing a request sends changes what it holds. SECURITY.md says who may read the socket.
 */

/** What the server can be asked; each is read at the time of the request, never cached here. */
export interface Answers {
  /** The status and its body, as the resident holds them (src/serve/resident.ts makes them once per change). */
  status(): StatusAnswer;
  /** The JSON report (the same schema as mesh-audit.json); null before the first read has ended. */
  findings(): string | null;
  /** The Prometheus exposition of the same metrics as the textfile; null before the first read has ended. */
  metrics(): string | null;
}

/** Where to answer: a unix socket (the default), or a loopback TCP port when asked (`--listen`). */
export type Where = { socket: string; group?: string } | { host: '127.0.0.1' | '::1'; port: number };

/** The group that may read the socket (its file mode 0660), when the host has one of that name. */
export const SOCKET_GROUP = 'mesh-audit';
export const SOCKET_MODE = 0o660;

const JSON_TYPE = 'application/json; charset=utf-8';
/** The text exposition format's media type, as Prometheus asks for it. */
const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function send(res: ServerResponse, head: boolean, code: number, type: string, body: string): void {
  res.writeHead(code, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(head ? undefined : body);
}

/** One request: the routes, GET and HEAD only (405 with `Allow` otherwise), 404 for any other path. */
export function answer(req: IncomingMessage, res: ServerResponse, answers: Answers): void {
  const head = req.method === 'HEAD';
  if (req.method !== 'GET' && !head) {
    res.setHeader('allow', 'GET, HEAD');
    send(res, false, 405, JSON_TYPE, '{"error":"only GET and HEAD are answered"}\n');
    return;
  }
  // The path alone: a query string changes nothing here.
  const path = (req.url ?? '/').split('?')[0];
  switch (path) {
    case '/v1/status':
      send(res, head, 200, JSON_TYPE, answers.status().body);
      return;
    case '/v1/findings':
    case '/metrics': {
      const body = path === '/metrics' ? answers.metrics() : answers.findings();
      if (body === null) send(res, head, 503, JSON_TYPE, '{"state":"starting"}\n');
      else send(res, head, 200, path === '/metrics' ? METRICS_TYPE : JSON_TYPE, body);
      return;
    }
    case '/healthz': {
      const { status } = answers.status();
      const ok = status.state === 'clean';
      send(res, head, ok ? 200 : 503, 'text/plain; charset=utf-8', `${status.state}\n`);
      return;
    }
    default:
      send(res, head, 404, JSON_TYPE, '{"error":"not found: /v1/status, /v1/findings, /metrics, /healthz"}\n');
  }
}

/** The id of a group named in /etc/group, or undefined when the host has none of that name. */
export function groupId(name: string, groupFile = '/etc/group'): number | undefined {
  let text: string;
  try {
    text = readFileSync(groupFile, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [group, , gid] = line.split(':');
    if (group === name && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  return undefined;
}

/** Whether something answers on a unix socket: a socket file left by a process that died answers nothing. */
function answersOn(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/**
 * Makes the socket's place ready: its folder made when missing (0755: the group must reach the socket, whose own
 * mode guards it); a socket file nobody answers on (a serve that died) removed; anything else there — a live serve,
 * a file that is not a socket — refused.
 */
async function prepareSocket(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  let kind: 'none' | 'socket' | 'other' = 'none';
  try {
    kind = lstatSync(path).isSocket() ? 'socket' : 'other';
  } catch {
    // nothing there: the usual case
  }
  if (kind === 'other') throw new MeshAuditError(`--socket ${path}: something that is not a socket is there`);
  if (kind === 'socket') {
    if (await answersOn(path)) throw new MeshAuditError(`--socket ${path}: another process answers there`);
    unlinkSync(path);
  }
}

/** Starts answering; resolves once listening. The socket gets mode 0660, and the `mesh-audit` group if there is one. */
export async function listen(where: Where, answers: Answers): Promise<Server> {
  if ('socket' in where) await prepareSocket(where.socket);
  const server = createServer((req, res) => answer(req, res, answers));
  // A client that sends nothing is not kept forever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new MeshAuditError(`cannot answer on ${describe(where)}: ${e.code ?? e.message}`, ExitCode.Usage)),
    );
    if ('socket' in where) server.listen(where.socket, resolve);
    else server.listen(where.port, where.host, resolve);
  });
  if ('socket' in where) {
    chmodSync(where.socket, SOCKET_MODE);
    const gid = groupId(where.group ?? SOCKET_GROUP);
    if (gid !== undefined && process.getuid?.() === 0) chownSync(where.socket, 0, gid);
  }
  return server;
}

export const describe = (where: Where): string =>
  'socket' in where ? where.socket : `${where.host.includes(':') ? `[${where.host}]` : where.host}:${where.port}`;
