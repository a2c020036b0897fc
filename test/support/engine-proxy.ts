import {
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import { tempDir } from './cli.js';

/**
 * A recording, fault-injecting proxy in front of a real Engine API: it listens on a fresh unix
 * socket in a private folder (mode 0700 under /tmp, removed when the test process ends) and forwards
 * HTTP to the engine's own unix socket. No TCP, no bridge: unix sockets only.
 *
 * Every request is recorded as it arrives (method and path with query), before any fault applies,
 * including upgrade (attach/exec-style hijack) and CONNECT requests, which are recorded and refused
 * (the socket is closed; they are never forwarded).
 *
 * Faults apply per request: the first rule whose matcher accepts the request decides (a rule with
 * `times` stops matching after that many uses); a request no rule matches is forwarded untouched.
 */
export interface ProxiedRequest {
  method: string;
  /** Path and query exactly as the client sent them, e.g. `/v1.41/containers/json?all=true`. */
  url: string;
  /** The path without the query. */
  path: string;
  /** Bytes of request body the client sent. */
  bodyBytes: number;
  /** Which rule's fault was applied (its label, or its fault kind), or null when forwarded untouched. */
  fault: string | null;
  /** The client connection it came on (1, 2, … in the order they were opened); 0 for refused ones. */
  connection?: number;
}

export type Fault =
  /** Wait `ms` before forwarding (the client sees nothing meanwhile). */
  | { kind: 'latency'; ms: number }
  /** Send the status line and headers of a 200, then nothing, ever (until the client gives up). */
  | { kind: 'hang' }
  /** Forward, then deliver the engine's real answer one byte every `everyMs` ms. */
  | { kind: 'drip'; everyMs: number }
  /** Answer `status` with this body (the engine never sees the request). */
  | { kind: 'status'; status: number; body: string }
  /** Destroy the client's connection: at once (`when: 'request'`), or after the headers and half the real body. */
  | { kind: 'reset'; when?: 'request' | 'mid-body' }
  /** 404 as the engine answers for a container that is gone (`No such container: …`). */
  | { kind: 'not-found' }
  /** The engine's real answer cut in half, with a Content-Length that matches the cut (a clean, short reply). */
  | { kind: 'truncate' }
  /** A 200 whose body is not JSON at all. */
  | { kind: 'not-json'; body?: string }
  /**
   * A 200 of `bytes` (default 50 MB) that is valid JSON: the engine's real object with a huge
   * `MeshAuditPadding` string in front. Sent chunked (no Content-Length) unless `declareLength`.
   */
  | { kind: 'huge'; bytes?: number; declareLength?: boolean };

export interface RequestInfo {
  method: string;
  url: string;
  path: string;
  /** The path without an API version prefix (`/v1.41/containers/json` → `/containers/json`). */
  unversioned: string;
}

export interface FaultRule {
  match: (request: RequestInfo) => boolean;
  fault: Fault;
  /** Apply to this many matching requests only (default: every one). */
  times?: number;
  label?: string;
}

export interface EngineProxy {
  /** `unix://<socket>`, for `--docker-host` or `DOCKER_HOST`. */
  dockerHost: string;
  socketPath: string;
  /** The private folder that holds the socket. */
  dir: string;
  /** Every request seen since the start (or the last `clearRecord`). */
  requests: ProxiedRequest[];
  /** Replaces the fault rules for the requests that come after. */
  setFaults(rules: FaultRule[]): void;
  clearRecord(): void;
  /** Cuts every answer still open (a streamed one: the engine's events), as a restarted engine or a lost link does. */
  cutOpenAnswers(): number;
  close(): Promise<void>;
}

/** Strips an API version prefix: `/v1.41/_ping` → `/_ping`. */
export const unversioned = (path: string): string => path.replace(/^\/v\d+(?:\.\d+)?(?=\/)/, '');

/** Matchers for the requests a scan makes. */
export const on = {
  any: (): FaultRule['match'] => () => true,
  ping: (): FaultRule['match'] => (r) => r.unversioned === '/_ping',
  version: (): FaultRule['match'] => (r) => r.unversioned === '/version',
  list: (): FaultRule['match'] => (r) => r.unversioned === '/containers/json',
  /** The inspect of one container, by full id or name (as the client may address it either way). */
  inspect:
    (...idsOrNames: string[]): FaultRule['match'] =>
    (r) => {
      const m = /^\/containers\/([^/]+)\/json$/.exec(r.unversioned);
      return m !== null && idsOrNames.includes(decodeURIComponent(m[1]!));
    },
  inspectAny: (): FaultRule['match'] => (r) => /^\/containers\/[^/]+\/json$/.test(r.unversioned),
};

interface Upstream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** `unix:///path` (as `engine().dockerHost`) or a bare absolute path → the socket path. */
function socketOf(dockerHost: string): string {
  const path = dockerHost.startsWith('unix://') ? dockerHost.slice('unix://'.length) : dockerHost;
  if (!path.startsWith('/'))
    throw new Error(`engine proxy: only a unix socket engine can be proxied, not ${dockerHost}`);
  return path;
}

export async function engineProxy(upstreamDockerHost: string, initialFaults: FaultRule[] = []): Promise<EngineProxy> {
  const upstreamSocket = socketOf(upstreamDockerHost);
  const dir = tempDir('ma-proxy-', '/tmp');
  const socketPath = join(dir, 'engine.sock');
  const requests: ProxiedRequest[] = [];
  let rules: { rule: FaultRule; used: number }[] = initialFaults.map((rule) => ({ rule, used: 0 }));

  // Everything that could keep the test process alive or the client waiting: ended in close().
  const timers = new Set<NodeJS.Timeout>();
  const openResponses = new Set<ServerResponse>();
  const upstreamRequests = new Set<ClientRequest>();
  let closed = false;

  const later = (ms: number, fn: () => void): NodeJS.Timeout => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  };

  const toUpstream = (method: string, url: string, headers: IncomingHttpHeaders): ClientRequest => {
    const up = httpRequest({
      socketPath: upstreamSocket,
      method,
      path: url,
      headers: { ...headers, connection: 'close' },
      agent: false,
    });
    upstreamRequests.add(up);
    up.on('close', () => upstreamRequests.delete(up));
    return up;
  };

  /** The engine's whole answer, for faults that reshape it. */
  const fetchUpstream = (method: string, url: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const up = toUpstream(method, url, headers);
      up.on('error', reject);
      up.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      up.end(body);
    });

  /** Headers of the engine's answer fit for a body we send ourselves (our own length, no chunking). */
  const ownHeaders = (headers: IncomingHttpHeaders, length: number | null): Record<string, string | string[]> => {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined || k === 'content-length' || k === 'transfer-encoding' || k === 'connection') continue;
      out[k] = v;
    }
    if (length !== null) out['content-length'] = String(length);
    return out;
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const up = toUpstream(req.method ?? 'GET', req.url ?? '/', req.headers);
    up.on('error', () => res.destroy());
    up.on('response', (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, ownHeaders(upRes.headers, null));
      // At once, as the engine sends them: a streamed answer (the events) may have no body for a long time.
      res.flushHeaders();
      upRes.pipe(res);
      upRes.on('error', () => res.destroy());
    });
    res.on('close', () => up.destroy());
    up.end(body);
  };

  const apply = async (
    fault: Fault,
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    info: RequestInfo,
  ): Promise<void> => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    switch (fault.kind) {
      case 'latency': {
        const t = later(fault.ms, () => forward(req, res, body));
        res.on('close', () => {
          clearTimeout(t);
          timers.delete(t);
        });
        return;
      }
      case 'hang':
        res.writeHead(200, { 'content-type': 'application/json', 'api-version': '1.41' });
        res.flushHeaders();
        return;
      case 'drip': {
        const up = await fetchUpstream(method, url, req.headers, body);
        res.writeHead(up.status, ownHeaders(up.headers, up.body.length));
        let i = 0;
        const tick = (): void => {
          if (res.destroyed || closed) return;
          if (i >= up.body.length) return void res.end();
          res.write(up.body.subarray(i, i + 1));
          i += 1;
          later(fault.everyMs, tick);
        };
        tick();
        return;
      }
      case 'status': {
        const payload = Buffer.from(fault.body);
        res.writeHead(fault.status, {
          'content-type': 'application/json',
          'api-version': '1.41',
          'content-length': String(payload.length),
        });
        res.end(payload);
        return;
      }
      case 'reset': {
        if (fault.when !== 'mid-body') return void req.socket.destroy();
        const up = await fetchUpstream(method, url, req.headers, body);
        res.writeHead(up.status, ownHeaders(up.headers, up.body.length));
        res.write(up.body.subarray(0, Math.floor(up.body.length / 2)), () => later(50, () => req.socket.destroy()));
        return;
      }
      case 'not-found': {
        const id = /^\/containers\/([^/]+)\//.exec(info.unversioned)?.[1] ?? '';
        const payload = Buffer.from(JSON.stringify({ message: `No such container: ${decodeURIComponent(id)}` }) + '\n');
        res.writeHead(404, {
          'content-type': 'application/json',
          'api-version': '1.41',
          'content-length': String(payload.length),
        });
        res.end(payload);
        return;
      }
      case 'truncate': {
        const up = await fetchUpstream(method, url, req.headers, body);
        const cut = up.body.subarray(0, Math.floor(up.body.length / 2));
        res.writeHead(up.status, ownHeaders(up.headers, cut.length));
        res.end(cut);
        return;
      }
      case 'not-json': {
        const payload = Buffer.from(
          fault.body ?? '<!doctype html><html><body><h1>502 Bad Gateway</h1>not the engine</body></html>\n',
        );
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(payload.length) });
        res.end(payload);
        return;
      }
      case 'huge': {
        const up = await fetchUpstream(method, url, req.headers, body);
        const real = up.body.toString('utf8').trim();
        const total = fault.bytes ?? 50 * 1024 * 1024;
        // `{"MeshAuditPadding":"xxxx…", <the real object's members>}`, or for an array `[ "xxxx…", <items> ]`.
        const isArray = real.startsWith('[');
        const head = Buffer.from(isArray ? '["' : '{"MeshAuditPadding":"');
        const rest = real.slice(1).trim();
        const tail = Buffer.from('"' + (rest === ']' || rest === '}' ? '' : ',') + rest);
        const padding = Math.max(0, total - head.length - tail.length);
        res.writeHead(200, ownHeaders(up.headers, fault.declareLength ? head.length + padding + tail.length : null));
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = padding;
        res.write(head);
        const pump = (): void => {
          while (left > 0) {
            if (res.destroyed || closed) return;
            const n = Math.min(left, chunk.length);
            left -= n;
            if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end(tail);
        };
        pump();
        return;
      }
    }
  };

  const refuse =
    (kind: string) =>
    (req: IncomingMessage, socket: Duplex): void => {
      requests.push({
        method: req.method ?? '?',
        url: req.url ?? '',
        path: (req.url ?? '').split('?')[0]!,
        bodyBytes: 0,
        fault: `refused ${kind}`,
      });
      socket.destroy();
    };

  const connections = new WeakMap<object, number>();
  let connectionCount = 0;
  const server: Server = createServer((req, res) => {
    if (!connections.has(req.socket)) connections.set(req.socket, ++connectionCount);
    openResponses.add(res);
    res.on('close', () => openResponses.delete(res));
    const url = req.url ?? '/';
    const path = url.split('?')[0]!;
    const info: RequestInfo = { method: req.method ?? 'GET', url, path, unversioned: unversioned(path) };
    const entry = rules.find((r) => (r.rule.times === undefined || r.used < r.rule.times) && r.rule.match(info));
    if (entry) entry.used += 1;
    const record: ProxiedRequest = {
      method: info.method,
      url,
      path,
      bodyBytes: 0,
      fault: entry ? (entry.rule.label ?? entry.rule.fault.kind) : null,
      connection: connections.get(req.socket)!,
    };
    requests.push(record);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      chunks.push(c);
      record.bodyBytes += c.length;
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (!entry) {
        forward(req, res, body);
        return;
      }
      apply(entry.rule.fault, req, res, body, info).catch(() => res.destroy());
    });
  });
  server.on('upgrade', refuse('upgrade'));
  server.on('connect', refuse('connect'));
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    dockerHost: `unix://${socketPath}`,
    socketPath,
    dir,
    requests,
    setFaults(next) {
      rules = next.map((rule) => ({ rule, used: 0 }));
    },
    clearRecord() {
      requests.length = 0;
    },
    cutOpenAnswers() {
      const open = [...openResponses];
      for (const res of open) res.destroy();
      for (const up of upstreamRequests) up.destroy();
      return open.length;
    },
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const up of upstreamRequests) up.destroy();
      for (const res of openResponses) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
