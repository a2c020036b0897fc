import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { inspect } from 'node:util';
import Modem from 'docker-modem';
import type { ContainerInspect } from './inspect.js';
import type { DockerEndpoint } from './docker-endpoint.js';

// docker-modem logs whole response bodies (container env, credentials included) under DEBUG=modem
// or DEBUG=*, and that would reach stderr, which cron mails. Switch its debug output off for good.
{
  const requireFromModem = createRequire(createRequire(import.meta.url).resolve('docker-modem'));
  (requireFromModem('debug') as { disable(): string }).disable();
}

export interface ContainerSummary {
  Id: string;
  Names?: string[];
  State?: string;
}

export interface EngineVersion {
  Version: string;
  ApiVersion: string;
  MinAPIVersion?: string;
}

/** The engine answered with an HTTP status (404 for a container gone between list and inspect). */
export class EngineHttpError extends Error {
  constructor(
    readonly statusCode: number,
    what: string,
  ) {
    super(`${what}: the engine answered HTTP ${statusCode}`);
  }
}

/** The largest answer read from the engine; a list of thousands of containers is a few MB. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * The only door to the Docker Engine: ping, version, info, list and inspect — all GET requests.
 * Nothing here can create, start, stop, exec or pull; errors never carry response bodies.
 * Every answer is bounded in time (its own limit and the collection's deadline, even when
 * docker-modem never settles), in size (`maxResponseBytes`), and checked to be the JSON expected.
 */
export class ReadOnlyDocker {
  private constructor(
    private readonly modem: Modem,
    readonly endpoint: DockerEndpoint,
    readonly apiVersion: string,
    readonly serverVersion: string,
    private readonly requestTimeoutMs: number,
    private readonly deadline: AbortSignal,
  ) {}

  /**
   * Connects and negotiates the API version: asks the engine (unversioned `/version`) which version
   * it speaks and uses that, never a pinned old one.
   */
  static async connect(endpoint: DockerEndpoint, options: { requestTimeoutMs: number; deadline: AbortSignal; maxResponseBytes?: number }): Promise<ReadOnlyDocker> {
    const base = { ...modemOptions(endpoint), agent: boundedAgent(endpoint, options.maxResponseBytes ?? MAX_RESPONSE_BYTES) } as Modem.ConstructorOptions;
    const probe = new Modem(base);
    const limits = { requestTimeoutMs: options.requestTimeoutMs, deadline: options.deadline };
    await call('ping', limits, (abortSignal) => get(probe, '/_ping', abortSignal));
    const version = checked('version', await call('version', limits, (abortSignal) => get(probe, '/version', abortSignal)), isEngineVersion);
    const modem = new Modem({ ...base, version: `v${version.ApiVersion}` });
    return new ReadOnlyDocker(modem, endpoint, version.ApiVersion, version.Version, options.requestTimeoutMs, options.deadline);
  }

  private get limits(): Limits {
    return { requestTimeoutMs: this.requestTimeoutMs, deadline: this.deadline };
  }

  async info(): Promise<Record<string, unknown>> {
    return checked('info', await call('info', this.limits, (abortSignal) => get(this.modem, '/info', abortSignal)), isObject);
  }

  async listContainers(): Promise<ContainerSummary[]> {
    const list = await call('list containers', this.limits, (abortSignal) => get(this.modem, '/containers/json?', abortSignal, { all: true }));
    return checked('list containers', list, (v): v is ContainerSummary[] => Array.isArray(v) && v.every((c) => isObject(c) && isContainerId(c['Id'])));
  }

  async inspectContainer(id: string): Promise<ContainerInspect> {
    const what = `inspect ${id.slice(0, 12)}`;
    if (!isContainerId(id)) throw new Error(`${what}: not a container id`);
    const inspect = await call(what, this.limits, (abortSignal) => get(this.modem, `/containers/${id}/json?`, abortSignal));
    return checked(what, inspect, (v): v is ContainerInspect => isObject(v) && isContainerId(v['Id']) && typeof v['Name'] === 'string');
  }
}

/**
 * The one request this module makes: a GET through docker-modem, the transport dockerode is built on.
 * dockerode itself is not loaded: its entry point pulls in gRPC and protobufjs for BuildKit sessions,
 * ~85 ms of start-up for a tool that only reads (test/bench/startup.bench.ts).
 */
function get(modem: Modem, path: string, abortSignal: AbortSignal, query?: Record<string, string | number | boolean>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    modem.dial(
      {
        path,
        method: 'GET',
        ...(query ? { options: query } : {}),
        abortSignal,
        statusCodes: { 200: true },
      } as Modem.DialOptions,
      (err, data) => (err ? reject(err) : resolve(data)),
    );
  });
}

interface Limits {
  requestTimeoutMs: number;
  deadline: AbortSignal;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
/** A container id goes into a request path: nothing but what ids are made of (no `/`, no `..`). */
const isContainerId = (v: unknown): v is string => typeof v === 'string' && /^[0-9A-Za-z][0-9A-Za-z_.-]*$/.test(v) && !v.includes('..');
const isEngineVersion = (v: unknown): v is EngineVersion =>
  isObject(v) && typeof v['Version'] === 'string' && typeof v['ApiVersion'] === 'string' && /^\d+\.\d+$/.test(v['ApiVersion']);

/**
 * docker-modem hands back the raw bytes when an answer is not JSON (a truncated or foreign body):
 * anything but the JSON expected is refused here, in one line, without quoting it.
 */
function checked<T>(what: string, value: unknown, check: (v: unknown) => v is T): T {
  if (check(value)) return value;
  throw new Error(`${what}: ${Buffer.isBuffer(value) || typeof value === 'string' ? 'the engine\'s answer is not JSON' : 'the engine\'s answer is not the JSON expected'}`);
}

/** The engine sent more than the limit: the connection is cut and nothing of it is kept. */
class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`answer larger than ${Math.round(limit / (1024 * 1024))} MB`);
  }
}

/**
 * The agent of every request (one per connection, no keep-alive), for two gaps of docker-modem:
 * - it buffers a whole answer before parsing it and offers no size limit: the bytes each connection
 *   receives are counted and the connection is cut past the limit;
 * - it never settles a request whose connection is cut in the middle of an answer (it only listens
 *   for the answer's end and the request's errors): an answer that closes incomplete is turned into
 *   an error of its request.
 * (Over ssh, docker-modem brings its own agent; these then do not apply, and the time limits remain.)
 */
function boundedAgent(endpoint: DockerEndpoint, limit: number): http.Agent {
  const agent = endpoint.protocol === 'https' ? new https.Agent({ keepAlive: false }) : new http.Agent({ keepAlive: false });
  const internals = agent as unknown as {
    createConnection: (...args: unknown[]) => Duplex | undefined;
    addRequest: (req: http.ClientRequest, ...rest: unknown[]) => void;
  };
  const create = internals.createConnection.bind(agent);
  internals.createConnection = (...args: unknown[]) => {
    const socket = create(...args);
    let received = 0;
    socket?.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) socket.destroy(new ResponseTooLargeError(limit));
    });
    return socket;
  };
  const addRequest = internals.addRequest.bind(agent);
  internals.addRequest = (req, ...rest) => {
    req.on('response', (res: http.IncomingMessage) => {
      res.on('close', () => {
        if (!res.complete && req.listenerCount('error') > 0) req.emit('error', Object.assign(new Error('the connection was cut in the middle of the answer'), { code: 'ECONNRESET' }));
      });
    });
    addRequest(req, ...rest);
  };
  return cheapToInspect(agent, 'Agent');
}

/**
 * docker-modem `util.inspect()`s every request's options (showHidden, depth null) whether or not its
 * debug output is on; the options hold the agent, with its live sockets and their requests, and the
 * abort signal. That walk cost more CPU than the requests themselves, and grew with the requests in
 * flight: these objects print as one word instead (what is printed is never used).
 */
function cheapToInspect<T extends object>(value: T, word: string): T {
  Object.defineProperty(value, inspect.custom, { value: () => `[${word}]`, enumerable: false });
  return value;
}

function modemOptions(endpoint: DockerEndpoint): Modem.ConstructorOptions {
  // docker-modem starts from DOCKER_HOST's own defaults and only then applies these options: a tcp
  // or ssh DOCKER_HOST would leave its host (and protocol) in place, and a host wins over socketPath —
  // the engine chosen by --docker-host would be silently replaced by DOCKER_HOST's. Clear them.
  if (endpoint.socketPath !== undefined) return { socketPath: endpoint.socketPath, host: undefined, port: undefined, protocol: 'http' } as Modem.ConstructorOptions;
  return {
    protocol: endpoint.protocol,
    host: endpoint.host,
    port: endpoint.port,
    ...(endpoint.username !== undefined ? { username: endpoint.username } : {}),
  };
}

/**
 * Runs one request under its own time limit and the collection's deadline, and turns any failure
 * into an error that says what failed in one line. The wait is raced against the limits with a timer
 * that keeps the process alive: docker-modem never settles a request whose connection is cut in the
 * middle of an answer, and the process would otherwise just end, with no report, when nothing else is
 * pending. docker-modem errors carry the response body in `json`: it is dropped here, never printed.
 */
async function call<T>(what: string, limits: Limits, run: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
  const ownLimit = new AbortController();
  const timer = setTimeout(() => ownLimit.abort(), limits.requestTimeoutMs);
  const signal = cheapToInspect(AbortSignal.any([ownLimit.signal, limits.deadline]), 'AbortSignal');
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(Object.assign(new Error('aborted'), { name: 'TimeoutError' }));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([run(signal), aborted]);
  } catch (err) {
    const e = err as { statusCode?: unknown; code?: unknown; name?: unknown; message?: unknown };
    if (err instanceof ResponseTooLargeError) throw new Error(`${what}: the engine's answer is too large (${err.message}); not read`);
    if (typeof e.statusCode === 'number') throw new EngineHttpError(e.statusCode, what);
    if (signal.aborted || e.name === 'AbortError' || e.name === 'TimeoutError' || e.code === 'ABORT_ERR') throw new Error(`${what}: no answer in time`);
    const code = typeof e.code === 'string' ? e.code : undefined;
    throw new Error(`${what}: ${code ? describeErrno(code) : 'request failed'}`);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

function describeErrno(code: string): string {
  switch (code) {
    case 'ENOENT':
      return 'no engine socket there (ENOENT)';
    case 'EACCES':
    case 'EPERM':
      return `permission denied on the engine socket (${code}): run as root or in the docker group`;
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)';
    case 'ECONNRESET':
      return 'the engine closed the connection before its answer was complete (ECONNRESET)';
    case 'ETIMEDOUT':
      return 'connection timed out (ETIMEDOUT)';
    default:
      return code;
  }
}
