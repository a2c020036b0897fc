import { readFileSync } from 'node:fs';
import http from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import type { DockerEndpoint } from './docker-endpoint.js';

/*
 * The HTTP under the Docker API facade (docker-api.ts): GET only, one answer at a time per connection,
 * each answer bounded in size and required to be complete. It replaced docker-modem (dockerode's
 * transport), which loads ssh2 and its native helpers at import (~60 ms of every scan's start), has no
 * size limit, never settled a request whose connection was cut mid-answer, and util.inspect()ed every
 * request's options (agent and live sockets included) even with its debugging off.
 */

const require = createRequire(import.meta.url);
/** Loaded only for the endpoints that use them (TLS alone costs ~9 ms of a start). */
const httpsModule = (): typeof https => require('node:https') as typeof https;
const childProcess = (): typeof import('node:child_process') => require('node:child_process') as typeof import('node:child_process');

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

export interface EngineAnswer {
  status: number;
  body: Buffer;
}

/** Connections to one engine, kept open between requests (a scan sends hundreds). */
export class EngineHttp {
  private readonly agent: http.Agent;

  constructor(
    private readonly endpoint: DockerEndpoint,
    private readonly maxResponseBytes: number,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const keep = { keepAlive: true, keepAliveMsecs: 1000 };
    if (endpoint.protocol === 'https') {
      // Always verified (against DOCKER_CERT_PATH/ca.pem, else the system's CAs): an audit that could
      // be answered by anyone on the path is worse than none.
      this.agent = new (httpsModule().Agent)({ ...keep, ...tlsFiles(env), rejectUnauthorized: true });
    } else {
      this.agent = new http.Agent(keep);
      if (endpoint.protocol === 'ssh') {
        // Like the docker CLI: the engine's own API over `ssh HOST docker system dial-stdio`, with the
        // user's ssh configuration, keys and known hosts; never a password prompt (BatchMode).
        (this.agent as unknown as { createConnection: () => Duplex }).createConnection = () => sshDialStdio(endpoint);
      }
    }
  }

  /** GET `path`; resolves with the status and the whole body, or rejects (time limits are the caller's). */
  get(path: string, signal: AbortSignal): Promise<EngineAnswer> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error: Error | null, answer?: EngineAnswer) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve(answer!);
      };
      const target =
        this.endpoint.socketPath !== undefined
          ? { socketPath: this.endpoint.socketPath }
          : this.endpoint.protocol === 'ssh'
            ? {}
            : { host: this.endpoint.host, port: this.endpoint.port };
      const req = (this.endpoint.protocol === 'https' ? httpsModule() : http).request({
        ...target,
        agent: this.agent,
        method: 'GET',
        path,
        // Over a socket or a pipe there is no host name: `docker`, as the docker CLI sends. Over TCP the
        // real one, which is also the name a TLS certificate is checked against.
        headers: this.endpoint.host !== undefined && this.endpoint.protocol !== 'ssh' ? { Accept: 'application/json' } : { Host: 'docker', Accept: 'application/json' },
        signal,
      });
      /** Too large: said at once, and the connection is cut (no error emitted on it: the answer is ours to end). */
      const refuse = () => {
        settle(new ResponseTooLargeError(this.maxResponseBytes));
        req.destroy();
      };
      req.on('error', (err) => settle(err));
      req.on('response', (res) => {
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > this.maxResponseBytes) return refuse();
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          received += chunk.length;
          if (received > this.maxResponseBytes) {
            chunks.length = 0;
            return refuse();
          }
          chunks.push(chunk);
        });
        res.on('end', () => settle(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks, received) }));
        res.on('close', () => {
          if (!res.complete) settle(new IncompleteAnswerError());
        });
        res.on('error', (err) => settle(err));
      });
      req.end();
    });
  }

  /** Closes the connections kept open. */
  close(): void {
    this.agent.destroy();
  }
}

/** ca.pem, cert.pem and key.pem of DOCKER_CERT_PATH (default ~/.docker), the ones that exist. */
function tlsFiles(env: NodeJS.ProcessEnv): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
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

/** One connection: an `ssh` child whose stdin and stdout carry the HTTP, ended with the socket. */
function sshDialStdio(endpoint: DockerEndpoint): Duplex {
  const args = ['-o', 'BatchMode=yes', '-p', String(endpoint.port ?? 22)];
  if (endpoint.username !== undefined) args.push('-l', endpoint.username);
  args.push('--', endpoint.host ?? '', 'docker', 'system', 'dial-stdio');
  const child = childProcess().spawn('ssh', args, { stdio: ['pipe', 'pipe', 'ignore'] });
  const socket = Duplex.from({ readable: child.stdout, writable: child.stdin });
  child.on('error', (err) => socket.destroy(err));
  socket.on('close', () => child.kill());
  // What http.Agent calls on a net.Socket; a pipe has nothing to set.
  const nothing = function (this: Duplex) {
    return this;
  };
  return Object.assign(socket, { setKeepAlive: nothing, setNoDelay: nothing, setTimeout: nothing, ref: nothing, unref: nothing });
}
