import { compareText } from '../text/compare.js';
import { engineAddedKeys } from '../engine/engine-env.js';
import type { SafeValueMaker } from '../secret/value.js';
import type {
  Collected,
  Container,
  DaemonInfo,
  DockerInfo,
  ImageRecord,
  ImagesView,
  LabelKeys,
  NetworkRecord,
  Problem,
  ProcView,
  VolumeRecord,
} from '../snapshot/types.js';
import {
  EngineHttpError,
  loadDockerode,
  ReadOnlyDocker,
  shortImageId,
  type ContainerSummary,
  type ImageSummary,
} from './docker-api.js';
import { networkRecords, usersOf, volumeRecords, type Attachments } from './engine-objects.js';
import type { DockerEndpoint } from './docker-endpoint.js';
import { daemonInfoOf, imageRecordOf, tagsOf } from './images.js';
import { containerFromInspect, type ContainerInspect } from './inspect.js';
import type { CollectContext, Collector, Slice } from './contract.js';
import type { ProcPart } from './proc-reader.js';
import { NOT_RUNNING } from './proc.js';
import type { CachedContainer, EngineAnswer, ReadCache, ReadTicket } from './read-cache.js';

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
  /** serve's: the signature of a running container's processes (processSignature, src/collect/proc.ts). */
  signatureOf?: (pid: number) => Promise<string | null>;
  procUnavailable?: string;
  /** Work of the caller's done while the engine makes the list (the longest wait of a collection). */
  whileListing?: () => void;
  /** Told the container list as soon as it comes, before any inspect (work the caller can start early). */
  listed?: (summaries: readonly ContainerSummary[]) => void;
  /** The label keys whose values on networks and volumes are kept as written (they name modules and resources). */
  labelKeys?: LabelKeys;
  /** serve's: containers and images not changed since the last read are taken from it (src/collect/read-cache.ts). */
  cache?: { store: ReadCache; ticket: ReadTicket };
}

export interface DockerCollection {
  docker: DockerInfo | null;
  containers: Container[];
  images: ImagesView;
  /** `GET /info` with what `/version` said at connect. */
  daemonInfo: Collected<DaemonInfo>;
  /** null: not read (a problem says why). */
  networks: NetworkRecord[] | null;
  volumes: VolumeRecord[] | null;
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
 * What the collection is when the engine was not read (not reached, or the collector failed): no container is
 * known, nor gone; everything asked of the engine unavailable for `reason`.
 */
export function engineUnread(reason: string, problems: Problem[], notes: Problem[] = []): DockerCollection {
  const unread = { available: false as const, reason };
  return {
    docker: null,
    containers: [],
    images: unread,
    daemonInfo: unread,
    networks: null,
    volumes: null,
    problems,
    notes,
  };
}

/** The engine's slice of the snapshot: the engine, its containers, images, settings, networks and volumes. */
export type EnginePart = Omit<DockerCollection, 'problems' | 'notes'>;

export interface EngineContext extends CollectContext {
  /** Whether the containers' /proc can be read, and how. */
  proc: ProcPart;
  /** Told the container list before any inspect (src/collect/compose-start.ts). */
  listed?: (summaries: readonly ContainerSummary[]) => void;
}

/** The engine's collector (src/collect/contract.ts): every container through the Engine API, with its /proc. */
export const engineCollector: Collector<EngineContext, EnginePart> = {
  async collect({ endpoint, safe, settings, proc, listed, progress, cache }) {
    progress(`reading containers from ${endpoint.url}`);
    return sliceOf(
      await collectDocker({
        endpoint,
        safe,
        ...(cache !== undefined ? { cache } : {}),
        deadlineMs: settings.dockerTimeoutSeconds * 1000,
        labelKeys: settings.labels,
        ...(listed !== undefined ? { listed } : {}),
        ...(proc.reader !== undefined
          ? {
              readProc: proc.reader.read,
              signatureOf: proc.reader.signature,
              // The process table is read while the engine lists, unless the containers' /proc are kept: read
              // when a container's /proc is (it is the whole of /proc, most of a read after one container's event).
              ...(cache?.store.warm() ? {} : { whileListing: proc.reader.readProcessTable }),
            }
          : { procUnavailable: proc.reason ?? 'not read' }),
      }),
    );
  },
  unread: ({ endpoint }, reason) =>
    sliceOf(
      engineUnread(`the engine at ${endpoint.url} was not read: ${reason}`, [
        { source: 'docker', subject: endpoint.url, message: `the engine at ${endpoint.url} not read: ${reason}` },
      ]),
    ),
};

function sliceOf({ problems, notes, ...part }: DockerCollection): Slice<EnginePart> {
  return { part, problems, notes };
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
  const knownVersion = options.cache?.store.engineVersion();
  try {
    api = await ReadOnlyDocker.connect(options.endpoint, {
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      deadline,
      ...(knownVersion !== undefined ? { knownVersion } : {}),
    });
  } catch (err) {
    problems.push({
      source: 'docker',
      subject: options.endpoint.url,
      message: `cannot reach the Docker engine at ${options.endpoint.url}: ${(err as Error).message}`,
    });
    return engineUnread(`the engine at ${options.endpoint.url} was not reached`, problems, notes);
  }
  if (options.cache !== undefined) options.cache.store.keepEngineVersion(options.cache.ticket, api.version);
  try {
    return await collectWith(api, options, problems, notes);
  } finally {
    api.close();
  }
}

/** What one collection writes its problems and notes into (in the order they happen). */
interface Findings {
  problems: Problem[];
  notes: Problem[];
}

async function collectWith(
  api: ReadOnlyDocker,
  options: DockerCollectOptions,
  problems: Problem[],
  notes: Problem[],
): Promise<DockerCollection> {
  const said: Findings = { problems, notes };
  const docker = dockerInfoOf(api, options, notes);
  // The image list and /info are asked for with the container list, once each: no request per container (serve's are
  // kept until an event may have moved them).
  const imageListing = keptOrAsked(options, 'images', () => api.listImages());
  const infoAnswer = keptOrAsked(options, 'info', () => api.info());
  const daemonInfo = () => daemonInfoOfAnswer(infoAnswer, api, options, problems);
  // A container that could not be inspected (listing or reading it) leaves the list unkept: the next read asks for it.
  const problemsBefore = problems.length;
  let listing: ContainersListed;
  try {
    listing = await containersListed(api, options, said);
  } catch (err) {
    const message = `cannot list containers: ${(err as Error).message}`;
    problems.push({ source: 'docker', subject: options.endpoint.url, message });
    await imageListing;
    const images: ImagesView = { available: false, reason: message };
    return {
      docker,
      containers: [],
      images,
      daemonInfo: await daemonInfo(),
      networks: null,
      volumes: null,
      problems,
      notes,
    };
  }
  const { summaries, inspected: given } = listing;
  options.listed?.(summaries);
  // Each list once per scan, asked while the containers are inspected; their attachments come from the inspects (serve
  // keeps the lists until a network's or a volume's event).
  const networkList = keptOrAsked(options, 'networks', () => api.listNetworks());
  const volumeList = keptOrAsked(options, 'volumes', () => api.listVolumes());
  const attachments: Attachments = new Map();
  // 8 at once, on connections kept open: 300 inspects took 312 ms one at a time and ~160 ms at 8 on
  // a 2-CPU machine, and more gained nothing (test/bench/scan.bench.ts).
  const inspected = await mapLimited(summaries, options.concurrency ?? DEFAULT_INSPECT_CONCURRENCY, (summary) =>
    containerOf(api, summary, options, attachments, said, given.get(summary.Id)),
  );
  const cache = options.cache;
  if (cache !== undefined) {
    cache.store.keepOnlyContainers(new Set(summaries.map((s) => s.Id)));
    cache.store.listingRead(cache.ticket, summaries, problems.length === problemsBefore);
  }
  const containers = inspected
    .filter((c): c is Container => c !== null)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const images = await collectImages(api, containers, await imageListing, options, problems, notes);
  const rawNetworks = await listedOrNull('networks', 'networks', networkList, options, problems);
  const rawVolumes = await listedOrNull('volumes', 'volumes', volumeList, options, problems);
  return {
    docker,
    containers,
    images,
    daemonInfo: await daemonInfo(),
    networks:
      rawNetworks &&
      listRecords(options, rawNetworks, 'networks', attachments, () =>
        networkRecords(rawNetworks, attachments, options.safe, options.labelKeys),
      ),
    volumes:
      rawVolumes &&
      listRecords(options, rawVolumes, 'volumes', attachments, () =>
        volumeRecords(rawVolumes, attachments, options.safe, options.labelKeys),
      ),
    problems,
    notes,
  };
}

/** The records last made of a list serve keeps (src/collect/read-cache.ts), with what they were made from. */
const recordsOfList = new WeakMap<object, { key: Buffer; labelKeys: unknown; users: string; records: unknown }>();

/**
 * The records of a network or volume list: with serve's cache, the last ones while the list is the one kept, digested
 * with the same key, and used by the same containers (speed: each label value is an HMAC, and the same records let
 * the subjects' memo take the set whole: src/facts/incremental-subjects.ts).
 */
function listRecords<R>(
  options: DockerCollectOptions,
  list: readonly object[],
  pick: 'networks' | 'volumes',
  attachments: Attachments,
  make: () => R[],
): R[] {
  const key = options.cache?.store.key;
  if (key === undefined) return make();
  // In name order: the containers' order moves (one an event named is listed last), what uses what does not.
  const users = JSON.stringify([...usersOf(attachments, pick)].sort(([a], [b]) => compareText(a, b)));
  const last = recordsOfList.get(list);
  if (last !== undefined && last.key === key && last.labelKeys === options.labelKeys && last.users === users)
    return last.records as R[];
  const records = make();
  recordsOfList.set(list, { key, labelKeys: options.labelKeys, users, records });
  return records;
}

/** The engine as it said at connect; an engine that names neither Docker nor Podman is a note. */
function dockerInfoOf(api: ReadOnlyDocker, options: DockerCollectOptions, notes: Problem[]): DockerInfo {
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
  return {
    endpoint: options.endpoint.url,
    serverVersion: api.serverVersion,
    apiVersion: api.apiVersion,
    kind: api.kind,
    local: options.readProc !== undefined,
  };
}

/** `GET /info`'s answer with what `/version` said at connect; a failed one is a problem. */
async function daemonInfoOfAnswer(
  infoAnswer: Promise<Settled<Record<string, unknown>>>,
  api: ReadOnlyDocker,
  options: DockerCollectOptions,
  problems: Problem[],
): Promise<Collected<DaemonInfo>> {
  const answer = await infoAnswer;
  if (answer.ok) return { available: true, ...daemonInfoOf(answer.value, api.version) };
  const reason = `cannot read the daemon's settings: ${answer.error.message}`;
  problems.push({ source: 'daemon', subject: options.endpoint.url, message: reason });
  return { available: false, reason };
}

/** The containers a read reads: listed (their summaries) and those already inspected to list them, by id. */
interface ContainersListed {
  summaries: ContainerSummary[];
  inspected: ReadonlyMap<string, ContainerInspect>;
}

/**
 * The container list: the engine's, or serve's while the engine's events are heard (src/collect/read-cache.ts,
 * containerListing): the last read's, each container an event named since inspected now — listed as its inspect says,
 * or no longer listed when the engine no longer knows it. One that cannot be inspected is a problem, as in a list's
 * read (and the next read asks for the list). Throws when the engine's list cannot be had.
 */
async function containersListed(
  api: ReadOnlyDocker,
  options: DockerCollectOptions,
  said: Findings,
): Promise<ContainersListed> {
  const kept = options.cache?.store.containerListing();
  if (kept === undefined) {
    const asked = api.listContainers();
    options.whileListing?.();
    return { summaries: await asked, inspected: new Map() };
  }
  const inspected = new Map<string, ContainerInspect>();
  const summaries = [...kept.listed];
  await mapLimited(kept.named, options.concurrency ?? DEFAULT_INSPECT_CONCURRENCY, async (id) => {
    let inspect: ContainerInspect;
    try {
      inspect = await api.inspectContainer(id);
    } catch (err) {
      // Removed since: the engine lists it no more.
      if (err instanceof EngineHttpError && err.statusCode === 404) return;
      said.problems.push({
        source: 'docker',
        subject: id.slice(0, 12),
        message: `cannot inspect container ${id.slice(0, 12)}: ${(err as Error).message}`,
      });
      return;
    }
    inspected.set(id, inspect);
    summaries.push({
      Id: inspect.Id,
      Names: [inspect.Name],
      ...(inspect.State?.Status !== undefined ? { State: inspect.State.Status } : {}),
      Labels: inspect.Config?.Labels,
    });
  });
  return { summaries, inspected };
}

/** The record last made of each container taken from the cache (see recordWithProc). */
const recordsOfKept = new WeakMap<CachedContainer, Container>();

/**
 * A container taken from the cache, with its /proc: the record made at the last read while its /proc is the one kept
 * then, or one not read for the same reason (a container not running), so that what compares reads (serve's subjects,
 * src/facts/incremental-subjects.ts) knows it unchanged by identity alone.
 */
function recordWithProc(cached: CachedContainer, proc: ProcView): Container {
  const last = recordsOfKept.get(cached);
  if (last !== undefined && sameProc(last.proc, proc)) return last;
  const record = { ...cached.container, proc };
  recordsOfKept.set(cached, record);
  return record;
}

const sameProc = (a: ProcView | undefined, b: ProcView): boolean =>
  a === b || (a !== undefined && !a.available && !b.available && a.reason === b.reason);

/**
 * One listed container, inspected (its networks and volumes recorded in `attachments`), with its /proc when it can
 * be read; null when it could not be inspected: gone since the list (a note) or refused (a problem).
 */
async function containerOf(
  api: ReadOnlyDocker,
  summary: ContainerSummary,
  options: DockerCollectOptions,
  attachments: Attachments,
  said: Findings,
  given?: ContainerInspect,
): Promise<Container | null> {
  const label = summary.Names?.[0]?.replace(/^\//, '') ?? summary.Id.slice(0, 12);
  const cached = options.cache?.store.container(summary.Id, summary.State);
  if (cached !== undefined) {
    attachments.set(cached.container.name, cached.attachment);
    const kept = options.cache!.store.proc(summary.Id);
    if (kept !== undefined) return recordWithProc(cached, kept);
    // Not running when it was inspected, and still as it was then (an event naming it drops it from the cache): its
    // view is what its inspect says, and the record made with it stands, without going through /proc (speed: most of
    // a host's containers, at each event). Its scope cannot have left it out since: a reload renews the cache, and an
    // ignore entry that expires only brings a container into scope.
    const last = recordsOfKept.get(cached) ?? cached.container;
    if (options.readProc !== undefined && !last.proc.available && last.proc.reason === NOT_RUNNING) return last;
    const proc = await procOf(cached.inspect, options);
    if (proc.signature !== null && proc.view.available)
      options.cache!.store.keepProc(options.cache!.ticket, summary.Id, { view: proc.view, signature: proc.signature });
    return recordWithProc(cached, proc.view);
  }
  let inspect: ContainerInspect;
  try {
    inspect = given ?? (await api.inspectContainer(summary.Id));
  } catch (err) {
    if (err instanceof EngineHttpError && err.statusCode === 404) {
      said.notes.push({
        source: 'docker',
        subject: label,
        message: `container ${label} went away between list and inspect`,
      });
    } else {
      said.problems.push({
        source: 'docker',
        subject: label,
        message: `cannot inspect container ${label}: ${(err as Error).message}`,
      });
    }
    return null;
  }
  const attachment = {
    networks: Object.keys(inspect.NetworkSettings?.Networks ?? {}),
    volumes: (inspect.Mounts ?? []).flatMap((m) => (m.Type === 'volume' && m.Name ? [m.Name] : [])),
  };
  attachments.set(inspect.Name.replace(/^\//, ''), attachment);
  const proc = await procOf(inspect, options);
  const container = containerFromInspect(inspect, options.safe, proc.view);
  options.cache?.store.keepContainer(options.cache.ticket, summary.Id, {
    inspect,
    container,
    attachment,
  });
  if (proc.signature !== null && proc.view.available)
    options.cache?.store.keepProc(options.cache.ticket, summary.Id, { view: proc.view, signature: proc.signature });
  return container;
}

/**
 * A container's /proc; with serve's cache, the signature of its processes too (processSignature, taken before the read:
 * a change while it is read moves the next signature, and the poll reads the container again). null: none taken.
 */
async function procOf(
  inspect: ContainerInspect,
  options: DockerCollectOptions,
): Promise<{ view: ProcView; signature: string | null }> {
  if (!options.readProc)
    return { view: { available: false, reason: options.procUnavailable ?? 'not read' }, signature: null };
  const pid = inspect.State?.Running ? (inspect.State.Pid ?? 0) : 0;
  const signature =
    options.cache !== undefined && options.signatureOf && pid > 0 ? await options.signatureOf(pid) : null;
  try {
    return { view: await options.readProc(inspect), signature };
  } catch (err) {
    return { view: { available: false, reason: `reading /proc failed: ${(err as Error).message}` }, signature: null };
  }
}

/** A list asked for earlier, or null when it could not be read (a problem says why). */
async function listedOrNull<T>(
  what: string,
  source: Problem['source'],
  list: Promise<Settled<T>>,
  options: DockerCollectOptions,
  problems: Problem[],
): Promise<T | null> {
  const answer = await list;
  if (answer.ok) return answer.value;
  problems.push({
    source,
    subject: options.endpoint.url,
    message: `cannot list ${what}: ${answer.error.message}`,
  });
  return null;
}

/** serve's answer to `name` as kept (src/collect/read-cache.ts, engineAnswer), else asked now and kept when given. */
function keptOrAsked<T>(options: DockerCollectOptions, name: EngineAnswer, ask: () => Promise<T>): Promise<Settled<T>> {
  const cache = options.cache;
  // What was kept under `name` is what `ask` gave for it (below).
  const kept = cache?.store.engineAnswer(name) as T | undefined;
  if (kept !== undefined) return Promise.resolve({ ok: true as const, value: kept });
  return settle(ask()).then((answer) => {
    if (answer.ok && cache !== undefined) cache.store.keepEngineAnswer(cache.ticket, name, answer.value);
    return answer;
  });
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: Error };
/** A request started now and awaited later, without an unhandled rejection in between. */
const settle = <T>(pending: Promise<T>): Promise<Settled<T>> =>
  pending.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error as Error }),
  );

/**
 * Each image in use, read once per distinct image id (its own Config.Env — what a container holds
 * without anyone having written it — under the same HMAC key as the containers' env, its user, labels
 * and healthcheck), and which image each tag names now, from the one image list. An image that cannot
 * be read leaves `imageEnv` absent on its containers and is missing from the images — unknown, not
 * empty — and says so, naming the image; a list that cannot be read leaves every image fact unknown.
 */
async function collectImages(
  api: ReadOnlyDocker,
  containers: Container[],
  listing: Settled<ImageSummary[]>,
  options: DockerCollectOptions,
  problems: Problem[],
  notes: Problem[],
): Promise<ImagesView> {
  const imageIds = [
    ...new Set(containers.flatMap((c) => (c.imageId !== undefined && c.imageId !== '' ? [c.imageId] : []))),
  ].sort();
  const records = new Map<string, ImageRecord>();
  // The containers of each image, grouped once rather than filtered again per image.
  const usersOf = new Map<string, Container[]>();
  for (const c of containers) {
    if (c.imageId === undefined) continue;
    const users = usersOf.get(c.imageId);
    if (users === undefined) usersOf.set(c.imageId, [c]);
    else users.push(c);
  }
  await mapLimited(imageIds, options.concurrency ?? DEFAULT_INSPECT_CONCURRENCY, async (imageId) => {
    const users = usersOf.get(imageId) ?? [];
    const label = `${users[0]?.image ?? ''} (${shortImageId(imageId)})`;
    const cached = options.cache?.store.image(imageId);
    if (cached !== undefined) {
      records.set(imageId, cached);
      return;
    }
    try {
      const record = imageRecordOf(await api.inspectImage(imageId), options.safe);
      records.set(imageId, record);
      options.cache?.store.keepImage(options.cache.ticket, imageId, record);
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
  for (const [i, c] of containers.entries()) {
    const env = c.imageId !== undefined ? records.get(c.imageId)?.env : undefined;
    if (env !== undefined) c.imageEnv = env;
    // serve keeps a container's record from read to read (src/collect/read-cache.ts): one whose image is now gone or
    // unreadable must not keep the env the image had at an earlier read. A record of its own, without it: unknown.
    else if (c.imageEnv !== undefined) {
      const without = { ...c };
      delete without.imageEnv;
      containers[i] = without;
    }
  }
  if (!listing.ok) {
    const reason = `cannot list images: ${listing.error.message}`;
    problems.push({ source: 'images', subject: options.endpoint.url, message: reason });
    return { available: false, reason };
  }
  const images = [...records.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { available: true, images, tags: tagsOf(listing.value) };
}
