import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { inspect } from 'node:util';
import type { DockerEndpoint } from './docker-endpoint.js';

/*
 * The connections under dockerode (docker-modem sends every request through the `agent` it is given).
 * docker-modem itself has three gaps this agent closes, for every request it carries:
 * - no limit on an answer's size (it buffers the whole body): each answer's bytes are counted and the
 *   request fails, its connection cut, past the limit;
 * - a request whose connection is cut in the middle of the answer never settles (docker-modem listens
 *   only for the answer's end and the request's errors): such an answer becomes an error of its request;
 * - a time limit for each request, whole answer included, kept here rather than given to docker-modem as
 *   an AbortSignal: a signal per request cost ~0.2 ms of CPU each (listeners added and removed on it by
 *   node's http client and by docker-modem), 50-70 ms of a scan of 300 containers on a 2-CPU machine;
 * - it util.inspect()s each request's options (showHidden, depth null) even with its debugging off; the
 *   options hold this agent (its live sockets and their requests): it prints as one word.
 * Over ssh the connection is the docker CLI's: `ssh HOST docker system dial-stdio` with the user's ssh
 * configuration, keys and known hosts. docker-modem's own ssh (ssh2) would use only SSH_AUTH_SOCK and
 * accept any host key.
 */

/** The engine sent more than the limit: the connection is cut and nothing of it is kept. */
export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`answer larger than ${limit >= 1024 * 1024 ? `${Math.round(limit / (1024 * 1024))} MB` : `${limit} bytes`}`);
  }
}

/** The connection closed before the whole answer came. */
export class IncompleteAnswerError extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('the connection was cut in the middle of the answer');
  }
}

/** The request's time limit passed (connection, request and whole answer). */
export class RequestTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(readonly limitMs: number) {
    super(`no answer in ${limitMs} ms`);
  }
}

/** Makes `value` print as `[word]` under util.inspect (what docker-modem prints is never used). */
export function cheapToInspect<T extends object>(value: T, word: string): T {
  Object.defineProperty(value, inspect.custom, { value: () => `[${word}]`, enumerable: false });
  return value;
}

/** ca.pem, cert.pem and key.pem of DOCKER_CERT_PATH (default ~/.docker), the ones that exist. */
export function tlsFiles(env: NodeJS.ProcessEnv = process.env): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const dir = env['DOCKER_CERT_PATH'] || join(homedir(), '.docker');
  const files: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  for (const name of ['ca', 'cert', 'key'] as const) {
    try {
      files[name] = readFileSync(join(dir, `${name}.pem`));
    } catch {
      // absent: the system's CAs, no client certificate
    }
  }
  return files;
}

export interface AnswerLimits {
  maxResponseBytes: number;
  /** Each request's own limit, from the moment it is handed to the agent to its answer's end. */
  requestTimeoutMs: number;
}

/**
 * The agent for one engine: connections kept open between requests (a scan sends hundreds), TLS always
 * verified (against DOCKER_CERT_PATH/ca.pem, else the system's CAs), each answer bounded in size and
 * time and required whole.
 */
export function engineAgent(
  endpoint: DockerEndpoint,
  limits: AnswerLimits | 'stream',
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {},
): http.Agent {
  const keep = { keepAlive: true, keepAliveMsecs: 1000 };
  const agent =
    endpoint.protocol === 'https'
      ? new https.Agent({ ...keep, ...tls, rejectUnauthorized: true })
      : new http.Agent(keep);
  // Cast: @types/node does not let these two be replaced. `createConnection` is the Agent's documented
  // hook (here for ssh); `addRequest` is the one every request on this agent passes through, the place
  // to bound each answer whoever made the request (docker-modem does, not us).
  const internals = agent as unknown as {
    createConnection: (...args: unknown[]) => Duplex | undefined;
    addRequest: (req: http.ClientRequest, ...rest: unknown[]) => void;
  };
  if (endpoint.protocol === 'ssh') internals.createConnection = () => sshDialStdio(endpoint);
  const addRequest = internals.addRequest.bind(agent);
  internals.addRequest = (req, ...rest) => {
    // The events stream (`serve`) is an answer that never ends: bounded by its reader, line by line (engine-events.ts).
    if (limits !== 'stream') bound(req, limits);
    addRequest(req, ...rest);
  };
  return cheapToInspect(agent, 'Agent');
}

/** The size and time limits and the cut-answer check, on one request. */
function bound(req: http.ClientRequest, { maxResponseBytes: limit, requestTimeoutMs }: AnswerLimits): void {
  let failed = false;
  const fail = (error: Error) => {
    if (failed) return;
    failed = true;
    clearTimeout(timer);
    // Told to docker-modem (which listens for the request's errors only), then the connection is cut.
    if (req.listenerCount('error') > 0) req.emit('error', error);
    req.destroy();
  };
  const timer = setTimeout(() => fail(new RequestTimeoutError(requestTimeoutMs)), requestTimeoutMs);
  req.once('close', () => clearTimeout(timer));
  req.on('response', (res: http.IncomingMessage) => {
    res.once('end', () => clearTimeout(timer));
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      fail(new ResponseTooLargeError(limit));
      return;
    }
    let received = 0;
    res.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) fail(new ResponseTooLargeError(limit));
    });
    res.on('close', () => {
      if (!res.complete) fail(new IncompleteAnswerError());
    });
  });
}

/** One connection: an `ssh` child whose stdin and stdout carry the HTTP, ended with the socket. */
function sshDialStdio(endpoint: DockerEndpoint): Duplex {
  const args = ['-o', 'BatchMode=yes', '-p', String(endpoint.port ?? 22)];
  if (endpoint.username !== undefined) args.push('-l', endpoint.username);
  args.push('--', endpoint.host ?? '', 'docker', 'system', 'dial-stdio');
  const child = spawn('ssh', args, { stdio: ['pipe', 'pipe', 'ignore'] });
  const socket = Duplex.from({ readable: child.stdout, writable: child.stdin });
  child.on('error', (err) => socket.destroy(err));
  socket.on('close', () => child.kill());
  // What http.Agent calls on a net.Socket; a pipe has nothing to set.
  const nothing = function (this: Duplex) {
    return this;
  };
  return Object.assign(socket, {
    setKeepAlive: nothing,
    setNoDelay: nothing,
    setTimeout: nothing,
    ref: nothing,
    unref: nothing,
  });
}
