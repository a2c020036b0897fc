import { EngineHttp, ResponseTooLargeError } from './engine-http.js';
import type { ContainerInspect } from './inspect.js';
import type { DockerEndpoint } from './docker-endpoint.js';

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
 * Every answer is bounded in time (its own limit and the collection's deadline), in size
 * (`maxResponseBytes`), and checked to be the JSON expected.
 */
export class ReadOnlyDocker {
  private constructor(
    private readonly http: EngineHttp,
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
    const http = new EngineHttp(endpoint, options.maxResponseBytes ?? MAX_RESPONSE_BYTES);
    const limits = { requestTimeoutMs: options.requestTimeoutMs, deadline: options.deadline };
    try {
      await call('ping', limits, (signal) => answerOf(http, '/_ping', signal, 'ping'));
      const version = checked('version', await call('version', limits, (signal) => answerOf(http, '/version', signal, 'json')), isEngineVersion);
      return new ReadOnlyDocker(http, endpoint, version.ApiVersion, version.Version, options.requestTimeoutMs, options.deadline);
    } catch (err) {
      http.close();
      throw err;
    }
  }

  /** Closes the connections kept open (nothing is pending once the collection is over). */
  close(): void {
    this.http.close();
  }

  private get limits(): Limits {
    return { requestTimeoutMs: this.requestTimeoutMs, deadline: this.deadline };
  }

  private getJson(what: string, path: string): Promise<unknown> {
    return call(what, this.limits, (signal) => answerOf(this.http, `/v${this.apiVersion}${path}`, signal, 'json'));
  }

  async info(): Promise<Record<string, unknown>> {
    return checked('info', await this.getJson('info', '/info'), isObject);
  }

  async listContainers(): Promise<ContainerSummary[]> {
    const list = await this.getJson('list containers', '/containers/json?all=1');
    return checked('list containers', list, (v): v is ContainerSummary[] => Array.isArray(v) && v.every((c) => isObject(c) && isContainerId(c['Id'])));
  }

  async inspectContainer(id: string): Promise<ContainerInspect> {
    const what = `inspect ${id.slice(0, 12)}`;
    if (!isContainerId(id)) throw new Error(`${what}: not a container id`);
    const inspect = await this.getJson(what, `/containers/${id}/json`);
    return checked(what, inspect, (v): v is ContainerInspect => isObject(v) && isContainerId(v['Id']) && typeof v['Name'] === 'string');
  }
}

/** Something that is not the answer expected (its bytes are never quoted). */
class NotJsonError extends Error {}

/** The answer's JSON (the text, for `ping`); any status but 200 is thrown with it (call() makes it an EngineHttpError). */
async function answerOf(http: EngineHttp, path: string, signal: AbortSignal, kind: 'json' | 'ping'): Promise<unknown> {
  const answer = await http.get(path, signal);
  if (answer.status !== 200) throw Object.assign(new Error(`HTTP ${answer.status}`), { statusCode: answer.status });
  if (kind === 'ping') return answer.body.toString('utf8');
  try {
    return JSON.parse(answer.body.toString('utf8')) as unknown;
  } catch {
    throw new NotJsonError();
  }
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

/** Anything but the JSON expected is refused here, in one line, without quoting it. */
function checked<T>(what: string, value: unknown, check: (v: unknown) => v is T): T {
  if (check(value)) return value;
  throw new Error(`${what}: the engine's answer is not the JSON expected`);
}

/**
 * Runs one request under its own time limit and the collection's deadline, and turns any failure
 * into an error that says what failed in one line. The wait is also raced against the limits, with a
 * timer that keeps the process alive, so that no request can outlive them. Errors never carry what
 * the engine answered.
 */
async function call<T>(what: string, limits: Limits, run: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
  const ownLimit = new AbortController();
  const timer = setTimeout(() => ownLimit.abort(), limits.requestTimeoutMs);
  const signal = AbortSignal.any([ownLimit.signal, limits.deadline]);
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
    if (err instanceof NotJsonError) throw new Error(`${what}: the engine's answer is not JSON`);
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
      // Node's TLS failures: UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, …
      if (/CERT|TLS|SSL/.test(code)) return `the engine's TLS certificate is not trusted (${code}): check DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem)`;
      return code;
  }
}
