import { engineAddedKeys } from '../engine-env.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { Container, DockerInfo, Problem, ProcView } from '../snapshot/types.js';
import { EngineHttpError, loadDockerode, ReadOnlyDocker, shortImageId } from './docker-api.js';
import type { DockerEndpoint } from './docker-endpoint.js';
import { containerFromInspect, envFromList, type ContainerInspect } from './inspect.js';

export interface DockerCollectOptions {
  endpoint: DockerEndpoint;
  safe: SafeValueMaker;
  /** Each request's own limit, whole answer included (not only inactivity). */
  requestTimeoutMs?: number;
  /** The whole collection's limit. */
  deadlineMs?: number;
  concurrency?: number;
  /** Reads /proc for one container; omitted when /proc is unavailable (the reason goes in `procUnavailable`). */
  readProc?: (inspect: ContainerInspect) => Promise<ProcView>;
  procUnavailable?: string;
  /** Work of the caller's done while the engine makes the list (the longest wait of a collection). */
  whileListing?: () => void;
}

export interface DockerCollection {
  docker: DockerInfo | null;
  containers: Container[];
  problems: Problem[];
  notes: Problem[];
}

/** Inspects in flight at once (see collectDocker). */
export const DEFAULT_INSPECT_CONCURRENCY = 8;

/** Runs `work` over `items` with at most `limit` at a time, keeping the input order in the result. */
async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Every container, running or stopped, inspected with bounded concurrency. An engine that cannot be
 * reached is one problem (the scan goes on with files and ledger); a container gone between list and
 * inspect is a note, not an error.
 */
export async function collectDocker(options: DockerCollectOptions): Promise<DockerCollection> {
  // The client is loaded before the deadline starts: the deadline is the engine's time, and loading
  // dockerode on a busy machine can take a good part of a short one.
  await loadDockerode();
  const deadline = AbortSignal.timeout(options.deadlineMs ?? 60_000);
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  let api: ReadOnlyDocker;
  try {
    api = await ReadOnlyDocker.connect(options.endpoint, {
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      deadline,
    });
  } catch (err) {
    problems.push({
      source: 'docker',
      subject: options.endpoint.url,
      message: `cannot reach the Docker engine at ${options.endpoint.url}: ${(err as Error).message}`,
    });
    return { docker: null, containers: [], problems, notes };
  }
  try {
    return await collectWith(api, options, problems, notes);
  } finally {
    api.close();
  }
}

async function collectWith(
  api: ReadOnlyDocker,
  options: DockerCollectOptions,
  problems: Problem[],
  notes: Problem[],
): Promise<DockerCollection> {
  const docker: DockerInfo = {
    endpoint: options.endpoint.url,
    serverVersion: api.serverVersion,
    apiVersion: api.apiVersion,
    kind: api.kind,
    local: options.readProc !== undefined,
  };
  if (api.kind === 'unknown') {
    notes.push({
      source: 'docker',
      subject: options.endpoint.url,
      message:
        `the engine at ${options.endpoint.url} names neither Docker nor Podman in its version: MA1004 reports ` +
        `a key an engine may write into a container by itself (${[...engineAddedKeys('unknown')].join(', ')}) only ` +
        `when an earlier snapshot of the file named it`,
    });
  }
  let summaries;
  try {
    const listing = api.listContainers();
    options.whileListing?.();
    summaries = await listing;
  } catch (err) {
    problems.push({
      source: 'docker',
      subject: options.endpoint.url,
      message: `cannot list containers: ${(err as Error).message}`,
    });
    return { docker, containers: [], problems, notes };
  }
  // 8 at once, on connections kept open: 300 inspects took 312 ms one at a time and ~160 ms at 8 on
  // a 2-CPU machine, and more gained nothing (test/bench/scan.bench.ts).
  const inspected = await mapLimited(
    summaries,
    options.concurrency ?? DEFAULT_INSPECT_CONCURRENCY,
    async (summary): Promise<Container | null> => {
      const label = summary.Names?.[0]?.replace(/^\//, '') ?? summary.Id.slice(0, 12);
      let inspect: ContainerInspect;
      try {
        inspect = await api.inspectContainer(summary.Id);
      } catch (err) {
        if (err instanceof EngineHttpError && err.statusCode === 404) {
          notes.push({
            source: 'docker',
            subject: label,
            message: `container ${label} went away between list and inspect`,
          });
        } else {
          problems.push({
            source: 'docker',
            subject: label,
            message: `cannot inspect container ${label}: ${(err as Error).message}`,
          });
        }
        return null;
      }
      let proc: ProcView = { available: false, reason: options.procUnavailable ?? 'not read' };
      if (options.readProc) {
        try {
          proc = await options.readProc(inspect);
        } catch (err) {
          proc = { available: false, reason: `reading /proc failed: ${(err as Error).message}` };
        }
      }
      return containerFromInspect(inspect, options.safe, proc);
    },
  );
  const containers = inspected
    .filter((c): c is Container => c !== null)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  await addImageEnv(api, containers, options, problems, notes);
  return { docker, containers, problems, notes };
}

/**
 * Each image's own Config.Env (what a container holds without anyone having written it), read once per
 * distinct image id, under the same HMAC key as the containers' env. An image that cannot be read
 * leaves `imageEnv` absent on its containers — unknown, not empty — and says so, naming the image.
 */
async function addImageEnv(
  api: ReadOnlyDocker,
  containers: Container[],
  options: DockerCollectOptions,
  problems: Problem[],
  notes: Problem[],
): Promise<void> {
  const imageIds = [
    ...new Set(containers.flatMap((c) => (c.imageId !== undefined && c.imageId !== '' ? [c.imageId] : []))),
  ].sort();
  const envs = new Map<string, Container['env']>();
  await mapLimited(imageIds, options.concurrency ?? DEFAULT_INSPECT_CONCURRENCY, async (imageId) => {
    const users = containers.filter((c) => c.imageId === imageId);
    const label = `${users[0]?.image ?? ''} (${shortImageId(imageId)})`;
    try {
      const image = await api.inspectImage(imageId);
      envs.set(imageId, envFromList(image.Config?.Env, options.safe));
    } catch (err) {
      const names = users.map((c) => c.name).join(', ');
      if (err instanceof EngineHttpError && err.statusCode === 404) {
        notes.push({
          source: 'docker',
          subject: label,
          message: `image ${label} of ${names} is gone from the engine: its own env is not known`,
        });
      } else {
        problems.push({
          source: 'docker',
          subject: label,
          message: `cannot inspect image ${label} of ${names}: ${(err as Error).message}`,
        });
      }
    }
  });
  for (const c of containers) {
    const env = c.imageId !== undefined ? envs.get(c.imageId) : undefined;
    if (env !== undefined) c.imageEnv = env;
  }
}
