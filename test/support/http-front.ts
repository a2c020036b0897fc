import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A small HTTP server on 127.0.0.1 put in front of the real Alertmanager (test/support/alertmanager.ts)
 * by the delivery tests: a redirect, a reverse proxy that checks the Authorization header, a proxy that
 * holds a post, an endless reply. Each request is recorded (method, path, headers, body size).
 */

export interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  bytes: number;
}

export interface Front {
  /** http://127.0.0.1:PORT */
  url: string;
  seen: Seen[];
  /** Resolves at the first request that `seen` matches. */
  waitFor(match: (s: Seen) => boolean): Promise<Seen>;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer, seen: Seen) => void | Promise<void>;

export async function startFront(handler: Handler): Promise<Front> {
  const seen: Seen[] = [];
  const waiters: { match: (s: Seen) => boolean; resolve: (s: Seen) => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const entry: Seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, bytes: body.length };
      seen.push(entry);
      for (const w of waiters.splice(0)) {
        if (w.match(entry)) w.resolve(entry);
        else waiters.push(w);
      }
      Promise.resolve(handler(req, res, body, entry)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    waitFor: (match) => {
      const found = seen.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends the request on to `target` (the real Alertmanager) and its answer back, as a reverse proxy does. */
export function forward(target: string, req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, host: new URL(target).host };
    delete headers['authorization'];
    const upstream = request(new URL(req.url ?? '/', target), { method: req.method ?? 'GET', headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('end', resolve);
    });
    upstream.on('error', reject);
    upstream.end(body);
  });
}
