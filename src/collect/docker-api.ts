import { createRequire } from 'node:module';
import type http from 'node:http';
import { withMountsInOrder, type ContainerInspect, type ImageInspect } from './inspect.js';
import type { DockerEndpoint } from './docker-endpoint.js';
import type { EngineKind } from '../snapshot/types.js';
import { deferUnusedDockerodeModules } from './docker-deferred.js';
import { engineAgent, RequestTimeoutError, ResponseTooLargeError, tlsFiles } from './engine-agent.js';

export interface ContainerSummary {
  Id: string;
  Names?: string[];
  State?: string;
  /** As the engine lists them: unchecked (only a hint before the inspect, which is what is recorded). */
  Labels?: unknown;
}

export interface ImageSummary {
  Id: string;
  RepoTags?: string[] | null;
}

/** One network of `GET /networks` (Docker and Podman's compatible service answer the same shape). */
export interface NetworkSummary {
  Name: string;
  Id?: string;
  Created?: string;
  Scope?: string;
  Driver?: string;
  Internal?: boolean;
  Labels?: Record<string, string> | null;
}

/** One volume of `GET /volumes` (its `Volumes` list). */
export interface VolumeSummary {
  Name: string;
  Driver?: string;
  Mountpoint?: string;
  CreatedAt?: string;
  Scope?: string;
  Labels?: Record<string, string> | null;
}

export interface EngineVersion {
  Version: string;
  ApiVersion: string;
  MinAPIVersion?: string;
  Os?: unknown;
  KernelVersion?: unknown;
  /** What the engine is made of: Docker names an `Engine`, Podman a `Podman Engine` (API 1.25 and later). */
  Components?: { Name?: unknown }[];
}

/**
 * Which engine answered, as it names itself in `GET /version`: Podman's compatible service lists a
 * `Podman Engine` component, Docker an `Engine`; anything else (no components, another name) is unknown.
 */
export function engineKindOf(version: EngineVersion): EngineKind {
  const names = Array.isArray(version.Components)
    ? version.Components.map((c) => (isObject(c) ? c['Name'] : undefined))
    : [];
  if (names.includes('Podman Engine')) return 'podman';
  if (names.includes('Engine')) return 'docker';
  return 'unknown';
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
 * The only door to the Docker Engine, through dockerode: ping, version, info, the container, image,
 * network and volume lists, container and image inspect — all GET requests. Nothing here can create,
 * start, stop, exec or pull; errors never carry response bodies. Every answer is bounded in time (its
 * own limit and the collection's deadline, even when docker-modem never settles), in size
 * (`maxResponseBytes`, engine-agent.ts), and checked to be the JSON expected.
 */
export class ReadOnlyDocker {
  private constructor(
    private readonly docker: DockerodeCalls,
    private readonly agent: http.Agent,
    readonly endpoint: DockerEndpoint,
    readonly apiVersion: string,
    readonly serverVersion: string,
    readonly kind: EngineKind,
    private readonly limits: Limits,
    /** What `GET /version` answered at connect (the daemon's facts read it again, with no request). */
    readonly version: EngineVersion,
  ) {}

  /**
   * Connects and negotiates the API version: asks the engine (unversioned `/version`) which version
   * it speaks and uses that, never a pinned old one. dockerode is loaded here, on first use: only the
   * commands that talk to an engine pay for it.
   */
  static async connect(
    endpoint: DockerEndpoint,
    options: {
      requestTimeoutMs: number;
      deadline: AbortSignal;
      maxResponseBytes?: number;
      /** serve's: the engine's `/version` as a read had it (src/collect/read-cache.ts): pinged, not asked again. */
      knownVersion?: EngineVersion;
    },
  ): Promise<ReadOnlyDocker> {
    const Docker = await loadDockerode();
    const tls = endpoint.protocol === 'https' ? tlsFiles() : {};
    const agent = engineAgent(
      endpoint,
      { maxResponseBytes: options.maxResponseBytes ?? MAX_RESPONSE_BYTES, requestTimeoutMs: options.requestTimeoutMs },
      tls,
    );
    let docker: DockerodeCalls;
    try {
      docker = withoutDockerEnv(() => new Docker({ ...modemOptions(endpoint), ...tls, agent }) as DockerodeCalls);
    } catch (err) {
      agent.destroy();
      throw err;
    }
    const limits = limitsOf(options.requestTimeoutMs, options.deadline, agent);
    try {
      // Both at once (one round trip less); a failing ping is what is reported, as when it came first.
      const [pinged, answered] = await Promise.allSettled([
        call('ping', limits, () => docker.ping()),
        options.knownVersion ?? call('version', limits, () => docker.version()),
      ]);
      if (pinged.status === 'rejected') throw pinged.reason;
      if (answered.status === 'rejected') throw answered.reason;
      const version = checked('version', answered.value, isEngineVersion);
      docker.modem.version = `v${version.ApiVersion}`;
      return new ReadOnlyDocker(
        docker,
        agent,
        endpoint,
        version.ApiVersion,
        version.Version,
        engineKindOf(version),
        limits,
        version,
      );
    } catch (err) {
      agent.destroy();
      limits.release();
      throw err;
    }
  }

  /**
   * `GET /events` (for `serve`): the engine's stream of what changes, from now on, of the kinds `filters` names (the
   * Engine API's JSON filter form). Its own connection, without the per-answer limits a stream cannot have; ended
   * by `signal`.
   */
  static async events(endpoint: DockerEndpoint, filters: object, signal: AbortSignal): Promise<NodeJS.ReadableStream> {
    const Docker = await loadDockerode();
    const tls = endpoint.protocol === 'https' ? tlsFiles() : {};
    const agent = engineAgent(endpoint, 'stream', tls);
    signal.addEventListener('abort', () => agent.destroy(), { once: true });
    const docker = withoutDockerEnv(() => new Docker({ ...modemOptions(endpoint), ...tls, agent }) as DockerodeCalls);
    return docker.getEvents({ filters: JSON.stringify(filters), abortSignal: signal });
  }

  /** Closes the connections kept open (nothing is pending once the collection is over). */
  close(): void {
    this.agent.destroy();
    this.limits.release();
  }

  async info(): Promise<Record<string, unknown>> {
    return checked('info', await call('info', this.limits, () => this.docker.info()), isObject);
  }

  async listContainers(): Promise<ContainerSummary[]> {
    const list = await call('list containers', this.limits, () => this.docker.listContainers({ all: true }));
    return checked(
      'list containers',
      list,
      (v): v is ContainerSummary[] => Array.isArray(v) && v.every((c) => isObject(c) && isContainerId(c['Id'])),
    );
  }

  /** `GET /images/json`, once per scan: which image each tag names now. */
  async listImages(): Promise<ImageSummary[]> {
    const list = await call('list images', this.limits, () => this.docker.listImages({}));
    return checked(
      'list images',
      list,
      (v): v is ImageSummary[] => Array.isArray(v) && v.every((i) => isObject(i) && typeof i['Id'] === 'string'),
    );
  }

  async inspectContainer(id: string): Promise<ContainerInspect> {
    const what = `inspect ${id.slice(0, 12)}`;
    if (!isContainerId(id)) throw new Error(`${what}: not a container id`);
    const inspect = await call(what, this.limits, () => this.docker.getContainer(id).inspect());
    return withMountsInOrder(
      checked(
        what,
        inspect,
        (v): v is ContainerInspect => isObject(v) && isContainerId(v['Id']) && typeof v['Name'] === 'string',
      ),
    );
  }

  /** `GET /networks`: every network, once per scan (attachments come from the container inspects). */
  async listNetworks(): Promise<NetworkSummary[]> {
    const list = await call('list networks', this.limits, () => this.docker.listNetworks({}));
    return checked(
      'list networks',
      list,
      (v): v is NetworkSummary[] => Array.isArray(v) && v.every((n) => isObject(n) && typeof n['Name'] === 'string'),
    );
  }

  /** `GET /volumes`: every volume, once per scan. */
  async listVolumes(): Promise<VolumeSummary[]> {
    const answer = await call('list volumes', this.limits, () => this.docker.listVolumes({}));
    const list = checked(
      'list volumes',
      answer,
      (v): v is { Volumes: unknown } =>
        isObject(v) && (v['Volumes'] === null || v['Volumes'] === undefined || Array.isArray(v['Volumes'])),
    ).Volumes;
    return checked(
      'list volumes',
      list ?? [],
      (v): v is VolumeSummary[] => Array.isArray(v) && v.every((x) => isObject(x) && typeof x['Name'] === 'string'),
    );
  }

  /** `GET /images/{id}/json`, for the image's own Config.Env. */
  async inspectImage(id: string): Promise<ImageInspect> {
    const what = `inspect image ${shortImageId(id)}`;
    if (!isImageId(id)) throw new Error(`${what}: not an image id`);
    const inspect = await call(what, this.limits, () => this.docker.getImage(id).inspect());
    return checked(
      what,
      inspect,
      (v): v is ImageInspect =>
        isObject(v) &&
        typeof v['Id'] === 'string' &&
        (v['Config'] === undefined || v['Config'] === null || isObject(v['Config'])),
    );
  }
}

/** `sha256:0123456789ab`, as the docker CLI shortens an image id. */
export const shortImageId = (id: string): string => (id.startsWith('sha256:') ? id.slice(0, 19) : id.slice(0, 12));

/** The part of dockerode used here: GET requests only. */
interface DockerodeCalls {
  modem: { version?: string };
  ping(): Promise<unknown>;
  version(): Promise<unknown>;
  info(): Promise<unknown>;
  listContainers(options: { all: boolean }): Promise<unknown>;
  listImages(options: Record<string, never>): Promise<unknown>;
  getContainer(id: string): { inspect(): Promise<unknown> };
  getImage(id: string): { inspect(): Promise<unknown> };
  listNetworks(options: Record<string, never>): Promise<unknown>;
  listVolumes(options: Record<string, never>): Promise<unknown>;
  getEvents(options: { filters: string; abortSignal: AbortSignal }): Promise<NodeJS.ReadableStream>;
}

type DockerodeConstructor = new (options: Record<string, unknown>) => unknown;

let dockerode: DockerodeConstructor | undefined;
// Written exactly so: the bundler of the single executable follows this form (scripts/package/bundle.ts).
const require = createRequire(import.meta.url);

/**
 * dockerode, loaded once (without the modules of features a scan never uses: docker-deferred.ts),
 * with two of docker-modem's habits switched off before any request:
 * - under DEBUG=modem (or DEBUG=*) it logs whole answers — container env, credentials included — to
 *   stderr, which cron mails: its `debug` is disabled for good;
 * - it follows an engine's redirects with requests of its own, outside our agent and its limits:
 *   none are followed (an engine never redirects; a redirect is an error).
 */
export async function loadDockerode(): Promise<DockerodeConstructor> {
  if (dockerode) return dockerode;
  deferUnusedDockerodeModules();
  // Cast: @types/dockerode types the constructor with every feature's options; we pass only the
  // modem's and call through DockerodeCalls, the GET-only subset this facade allows.
  const loaded = ((await import('dockerode')) as unknown as { default: DockerodeConstructor }).default;
  // The very modules docker-modem loads (one copy of each in node_modules, and in the single executable).
  (require('debug') as { disable(): string }).disable();
  (require('docker-modem/lib/http.js') as { maxRedirects: number }).maxRedirects = 0;
  dockerode = loaded;
  return loaded;
}

/**
 * docker-modem reads DOCKER_HOST (and with it DOCKER_CERT_PATH, DOCKER_TLS_VERIFY, …) itself when it
 * is made, and fills with it whatever options are not given: a tcp DOCKER_HOST would put its host under
 * a --docker-host socket, and make it read cert files that may not exist. The endpoint is already resolved
 * (docker-endpoint.ts,
 * with --docker-host and the config file): the modem is made with DOCKER_HOST out of sight.
 */
function withoutDockerEnv<T>(make: () => T): T {
  const saved = process.env['DOCKER_HOST'];
  delete process.env['DOCKER_HOST'];
  try {
    return make();
  } finally {
    if (saved !== undefined) process.env['DOCKER_HOST'] = saved;
  }
}

/** docker-modem's options for the endpoint (over ssh: plain HTTP on the agent's ssh connections). */
function modemOptions(endpoint: DockerEndpoint): Record<string, unknown> {
  if (endpoint.socketPath !== undefined) return { socketPath: endpoint.socketPath, protocol: 'http' };
  return {
    protocol: endpoint.protocol === 'https' ? 'https' : 'http',
    host: endpoint.host,
    port: endpoint.port,
    pathPrefix: '/',
  };
}

interface Limits {
  requestTimeoutMs: number;
  deadline: AbortSignal;
  /** What stops each request's wait; all of them are stopped when the deadline passes. */
  inFlight: Set<() => void>;
  /** Takes the listener off the deadline once the connections are closed (see limitsOf). */
  release(): void;
}

/**
 * The limits of one engine's requests: one listener on the deadline for all of them, which stops every
 * wait and cuts every connection of the agent (the requests on them fail; no later one is sent).
 */
function limitsOf(requestTimeoutMs: number, deadline: AbortSignal, agent: http.Agent): Limits {
  const inFlight = new Set<() => void>();
  const stopAll = () => {
    for (const stop of [...inFlight]) stop();
    agent.destroy();
  };
  if (deadline.aborted) stopAll();
  else deadline.addEventListener('abort', stopAll, { once: true });
  // A timeout signal with a listener is held until it fires (AbortSignal.timeout: dockerTimeoutSeconds, 60 s), and
  // with it this agent: serve's reads, one after another, kept the last minute's agents. Closed, nothing is left.
  return { requestTimeoutMs, deadline, inFlight, release: () => deadline.removeEventListener('abort', stopAll) };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
/** A container id goes into a request path: nothing but what ids are made of (no `/`, no `..`). */
const isContainerId = (v: unknown): v is string =>
  typeof v === 'string' && /^[0-9A-Za-z][0-9A-Za-z_.-]*$/.test(v) && !v.includes('..');
/** An image id (`sha256:<hex>`) goes into a request path too. */
const isImageId = (v: unknown): v is string => typeof v === 'string' && /^(sha256:)?[0-9a-f]{12,64}$/.test(v);
const isEngineVersion = (v: unknown): v is EngineVersion =>
  isObject(v) &&
  typeof v['Version'] === 'string' &&
  typeof v['ApiVersion'] === 'string' &&
  /^\d+\.\d+$/.test(v['ApiVersion']);

/**
 * docker-modem hands back the raw bytes when an answer is not JSON (a truncated or foreign body):
 * anything but the JSON expected is refused here, in one line, without quoting it.
 */
function checked<T>(what: string, value: unknown, check: (v: unknown) => v is T): T {
  if (check(value)) return value;
  throw new Error(
    `${what}: ` +
      (Buffer.isBuffer(value) || typeof value === 'string'
        ? "the engine's answer is not JSON"
        : "the engine's answer is not the JSON expected"),
  );
}

/**
 * Runs one request under its own time limit and the collection's deadline, and turns any failure
 * into an error that says what failed in one line. The agent ends a request past its limit, and all of
 * them at the deadline (engine-agent.ts, limitsOf); the wait is also raced against both here, with a
 * timer that keeps the process alive, so that no request can outlive them even if docker-modem never
 * settled it. docker-modem's errors carry the answer's body in `json`: it is dropped here, never printed.
 */
async function call<T>(what: string, limits: Limits, run: () => Promise<T>): Promise<T> {
  if (limits.deadline.aborted) throw new Error(`${what}: no answer in time`);
  let stop = (): void => undefined;
  const stopped = new Promise<never>((_, reject) => {
    stop = () => reject(new RequestTimeoutError(limits.requestTimeoutMs));
  });
  const timer = setTimeout(stop, limits.requestTimeoutMs);
  limits.inFlight.add(stop);
  try {
    return await Promise.race([run(), stopped]);
  } catch (err) {
    const e = err as { statusCode?: unknown; code?: unknown; name?: unknown; message?: unknown };
    if (err instanceof ResponseTooLargeError)
      throw new Error(`${what}: the engine's answer is too large (${err.message}); not read`);
    if (typeof e.statusCode === 'number') throw new EngineHttpError(e.statusCode, what);
    if (err instanceof RequestTimeoutError || e.name === 'TimeoutError') throw new Error(`${what}: no answer in time`);
    const code = typeof e.code === 'string' ? e.code : undefined;
    throw new Error(`${what}: ${code ? describeErrno(code) : 'request failed'}`);
  } finally {
    clearTimeout(timer);
    limits.inFlight.delete(stop);
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
      if (/CERT|TLS|SSL/.test(code))
        return (
          `the engine's TLS certificate is not trusted (${code}): ` +
          'check DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem)'
        );
      return code;
  }
}
