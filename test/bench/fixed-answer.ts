/*
 * The serve benchmark's reference for /v1/status (test/bench/serve.bench.ts): a Node HTTP server on a unix socket that
 * answers every request with the same status-shaped body and headers as serve (src/serve/answers.ts), with no work
 * behind it. Asked interleaved with serve, its latencies are what this machine gives any such server at that moment:
 * a tail both share is the machine's, one only serve has is serve's.
 *
 * Usage: node dist/test/bench/fixed-answer.js SOCKET (stops on SIGTERM).
 */
import { createServer } from 'node:http';

const socket = process.argv[2];
if (socket === undefined) throw new Error('usage: fixed-answer.js SOCKET');
const at = new Date().toISOString();
const status = {
  state: 'clean',
  host: 'reference',
  counts: { error: 0, warning: 0, note: 0 },
  since: at,
  lastFullRead: at,
  lastRead: at,
  notChecked: [],
};
const body = `${JSON.stringify(status, null, 2)}\n`;
const server = createServer((_req, res) => {
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
});
server.listen(socket);
process.once('SIGTERM', () => server.close(() => process.exit(0)));
