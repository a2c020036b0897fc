import { createRequire } from 'node:module';
import Docker from 'dockerode';
import type { ContainerInspect } from './inspect.js';
import type { DockerEndpoint } from './docker-endpoint.js';

// docker-modem logs whole response bodies (container env, credentials included) under DEBUG=modem
// or DEBUG=*, and that would reach stderr, which cron mails. Switch its debug output off for good.
{
  const requireFromModem = createRequire(createRequire(import.meta.url).resolve('docker-modem'));
  (requireFromModem('debug') as { disable(): string }).disable();
}

/** dockerode accepts an abort signal on these calls; its type definitions do not say so. */
interface AbortableCalls {
  ping(options: { abortSignal: AbortSignal }): Promise<unknown>;
  version(options: { abortSignal: AbortSignal }): Promise<unknown>;
  info(options: { abortSignal: AbortSignal }): Promise<unknown>;
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

/**
 * The only door to the Docker Engine: ping, version, info, list and inspect — all GET requests.
 * Nothing here can create, start, stop, exec or pull; errors never carry response bodies.
 */
export class ReadOnlyDocker {
  private constructor(
    private readonly docker: Docker,
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
  static async connect(endpoint: DockerEndpoint, options: { requestTimeoutMs: number; deadline: AbortSignal }): Promise<ReadOnlyDocker> {
    const base = modemOptions(endpoint);
    const probe = new Docker(base) as unknown as AbortableCalls;
    const signal = () => AbortSignal.any([AbortSignal.timeout(options.requestTimeoutMs), options.deadline]);
    await call('ping', () => probe.ping({ abortSignal: signal() }));
    const version = (await call('version', () => probe.version({ abortSignal: signal() }))) as unknown as EngineVersion;
    const docker = new Docker({ ...base, version: `v${version.ApiVersion}` });
    return new ReadOnlyDocker(docker, endpoint, version.ApiVersion, version.Version, options.requestTimeoutMs, options.deadline);
  }

  private signal(): AbortSignal {
    return AbortSignal.any([AbortSignal.timeout(this.requestTimeoutMs), this.deadline]);
  }

  async info(): Promise<Record<string, unknown>> {
    return (await call('info', () => (this.docker as unknown as AbortableCalls).info({ abortSignal: this.signal() }))) as Record<string, unknown>;
  }

  async listContainers(): Promise<ContainerSummary[]> {
    return (await call('list containers', () => this.docker.listContainers({ all: true, abortSignal: this.signal() }))) as ContainerSummary[];
  }

  async inspectContainer(id: string): Promise<ContainerInspect> {
    return (await call(`inspect ${id.slice(0, 12)}`, () =>
      this.docker.getContainer(id).inspect({ abortSignal: this.signal() } as Docker.ContainerInspectOptions),
    )) as unknown as ContainerInspect;
  }
}

function modemOptions(endpoint: DockerEndpoint): Docker.DockerOptions {
  if (endpoint.socketPath !== undefined) return { socketPath: endpoint.socketPath };
  return {
    protocol: endpoint.protocol,
    host: endpoint.host,
    port: endpoint.port,
    ...(endpoint.username !== undefined ? { username: endpoint.username } : {}),
  };
}

/**
 * Runs one request and turns any failure into an error that says what failed in one line.
 * dockerode errors carry the response body in `json`: it is dropped here, never printed.
 */
async function call<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const e = err as { statusCode?: unknown; code?: unknown; name?: unknown; message?: unknown };
    if (typeof e.statusCode === 'number') throw new EngineHttpError(e.statusCode, what);
    if (e.name === 'AbortError' || e.name === 'TimeoutError' || e.code === 'ABORT_ERR') throw new Error(`${what}: no answer in time`);
    const code = typeof e.code === 'string' ? e.code : undefined;
    throw new Error(`${what}: ${code ? describeErrno(code) : 'request failed'}`);
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
    case 'ETIMEDOUT':
      return 'connection timed out (ETIMEDOUT)';
    default:
      return code;
  }
}
