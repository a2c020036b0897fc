import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import type { Container, FileRecord, HostListenerView, ImageRecord, ProcView } from '../snapshot/types.js';
import type { ComposePool } from './compose-pool.js';
import type { ContainerSummary, EngineVersion } from './docker-api.js';
import type { ContainerInspect } from './inspect.js';

/*
 * What `serve` keeps from one read of the host for the next (issue 44): each read is still a whole scan — the same
 * collectors, the same snapshot — but a container the engine has said nothing of since it was inspected is not
 * inspected again, an image id is not inspected again (its content is its id), and a file whose lstat is the same
 * is not read and digested again. A scan (`scan`, `snapshot`, `premigrate`) has no cache.
 *
 * What tells the cache that something is stale:
 * - a container: an engine event naming it (`forgetContainer`), or an event the cache could not read (`forgetEngine`);
 * - an image: any image event (`forgetImages`: tags move between ids);
 * - the engine's image list: any image event (`forgetImages`); its network and volume lists: any network or volume
 *   event but a container's connect or disconnect (`forgetListed`: the lists' entries say nothing of who uses them,
 *   the containers' inspects do); its `/info` (the daemon's settings): what forgets the whole engine (a daemon's
 *   reload event, one not understood, the stream cut);
 * - the engine's `/version` (a read then only pings the engine): whatever forgets the whole engine, and the events
 *   stream cut, as it is when the engine stops (`renew`): another engine or version only comes with a restart. Podman
 *   answers `/version` by running dpkg, runc and conmon: 1.3 to 2 s of each read on a loaded 2-CPU machine;
 * - a file: nothing needs to: its lstat (device, inode, size, mode, owner, modification and change times to the
 *   nanosecond) is compared at each read, and any write changes the change time;
 * - the engine's container list: while the events stream is heard, the list as the last read had it stands for the
 *   engine's, each container an event named since inspected again (gone: no longer listed; new: listed now). Kept
 *   only from a read begun after the stream was open (`eventsHeard`), until the stream is lost (`eventsLost`), the
 *   engine is forgotten, or a read could not inspect a container (`containerListing`, `listingRead`);
 * - all of it: the events stream lost (what happened meanwhile is unknown), the config read again, and every resync
 *   (`renew`), which also makes a new HMAC key.
 *
 * A Compose file is a file like the others: its facts are reused while its lstat is the same. The Compose files' reader
 * (its worker thread, compose-pool.ts) is kept from one read to the next, and stopped by `close` when serve stops.
 *
 * The host's listeners: the socket tables are read at every read, and the holders of the listening sockets taken
 * again when the listening rows are the same and every holder is the same process still holding them
 * (src/collect/host-listeners.ts, readHostListenersKept); what is not the same walks every process's fds again.
 *
 * A container's /proc (its sockets, its processes) changes without any event: it is kept with the signature of its
 * processes (processSignature, src/collect/proc.ts: each process's pid, start time and name, and the sockets they
 * hold), and serve's poll (src/collect/host-watch.ts) reads that signature every few seconds; one that moved drops the
 * container's /proc (`forgetProc`), as a file change drops those of the containers with files bound into them.
 *
 * The slices of the host that watches follow as a whole (src/scan.ts: the ledger, the files, the daemon, the host's
 * listeners) are kept with what they were read from (`keepSlice`): a slice is read again when a watch said its source
 * changed (`sourceChanged`), when its key (what else it was read with) is another, or when it had a problem (what
 * could not be read is tried again at every read, never kept as unknown).
 * The HMAC key lives as long as what was digested with it is kept (the values of one read must compare with the
 * next's): until the next `renew`, in this process's memory only, never written.
 *
 * A read may be under way when an event comes: what that read keeps of the object named is not kept (it may have
 * been read before the change). `begin()` gives each read its ticket; a `keep…` with a ticket older than the last
 * word on that object is dropped. The resident reads again after any change anyway (src/serve/resident.ts).
 */

/** A container as one read saw it: its inspect (for its /proc) and the record made of it (without /proc). */
export interface CachedContainer {
  inspect: ContainerInspect;
  container: Container;
  attachment: { networks: string[]; volumes: string[] };
  /** Its /proc as read, and the signature of its processes read just before (none: read it again). */
  proc?: KeptProc;
}

/** A running container's /proc as one read saw it, and the signature of its processes taken just before. */
export interface KeptProc {
  view: Extract<ProcView, { available: true }>;
  signature: string;
}

/** The engine's answers kept whole between reads (engineAnswer). */
export type EngineAnswer = 'info' | 'images' | 'networks' | 'volumes';

/** What the watches follow as a whole: the files (a watched folder), the host's sockets, the daemon (its events). */
export type WatchedSource = 'files' | 'listeners' | 'daemon';

/** A running container whose /proc is kept: what serve's poll looks at. */
export interface WatchedProcess {
  id: string;
  pid: number;
  signature: string;
}

/** One read's place in the cache's order of events. */
export interface ReadTicket {
  readonly seq: number;
}

/** What a read took from the cache and what it had to read: the count `serve --verbose` and the benchmark show. */
export interface CacheUse {
  containersReused: number;
  containersInspected: number;
  imagesReused: number;
  filesReused: number;
  filesRead: number;
  /** Whether the host listeners' holders were taken from the last read (1) or every process's fds walked (0). */
  listenersReused: number;
  /** Running containers whose /proc was taken from the last read. */
  procsReused: number;
  /** Slices of the host (ledger, files, daemon, listeners) taken whole from the last read. */
  slicesReused: number;
}

const noUse = (): CacheUse => ({
  containersReused: 0,
  containersInspected: 0,
  imagesReused: 0,
  filesReused: 0,
  filesRead: 0,
  listenersReused: 0,
  procsReused: 0,
  slicesReused: 0,
});

/**
 * What serve keeps of one read of the host's listeners for the next (readHostListenersKept, host-listeners.ts): the
 * listening rows of the socket tables as they were, and for each process found holding one, its start time, what it
 * was and the sockets it held.
 */
export interface KeptListeners {
  rows: string;
  holders: { pid: number; startTime: string; holder: string; inodes: number[] }[];
  view: Extract<HostListenerView, { available: true }>;
}

/** What of a file's lstat says whether it is the same file with the same content, and how it was read. */
export function fileStamp(stat: BigIntStats, reading: string): string {
  return [reading, stat.dev, stat.ino, stat.size, stat.mode, stat.uid, stat.gid, stat.mtimeNs, stat.ctimeNs].join(':');
}

/** Whether a kept holder (its JSON, made by host-listeners.ts) is a process of container `id`, or may be. */
function mayBeHeldBy(holder: string, id: string): boolean {
  try {
    return (JSON.parse(holder) as { containerId?: unknown }).containerId === id;
  } catch {
    return true;
  }
}

export class ReadCache {
  private currentKey = randomBytes(32);
  private seq = 0;
  /** The seq of the last word on each container (an event), and of the last drop of them all. */
  private readonly touched = new Map<string, number>();
  private enginesDropped = 0;
  private imagesDropped = 0;
  private listedDropped = 0;
  private allDropped = 0;
  private readonly containers = new Map<string, CachedContainer>();
  /** Each container's network mode as last inspected ('' when the engine gave none), kept while it is listed. */
  private readonly networkModes = new Map<string, string>();
  private readonly images = new Map<string, ImageRecord>();
  private readonly files = new Map<string, { stamp: string; record: FileRecord }>();
  private version: EngineVersion | undefined;
  /** Since when (a seq) the engine's events have been heard without a break; null: they are not. */
  private hearingSince: number | null = null;
  /** The container list as the last read had it (by id), and each container an event named since (its seq). */
  private listing: ReadonlyMap<string, ContainerSummary> | undefined;
  private readonly named = new Map<string, number>();
  /** The engine's settings (`/info`) and its lists as a read had them, kept until an event may have moved them. */
  private readonly answers = new Map<EngineAnswer, unknown>();
  /** What the read under way used; `use()` gives it and starts again. */
  private used = noUse();
  private compose: ComposePool | undefined;
  private listeners: KeptListeners | undefined;
  /** When a watch last said each source changed (a seq). */
  private readonly changedAt: Record<WatchedSource, number> = { files: 0, listeners: 0, daemon: 0 };
  private readonly slices = new Map<
    string,
    { seq: number; key: string; from: readonly WatchedSource[]; slice: { problems: readonly unknown[] } }
  >();

  /** The key every value of this cache's reads is digested with (src/secret/value.ts). */
  get key(): Buffer {
    return this.currentKey;
  }

  /** A read starts (reads never overlap: src/serve/resident.ts); the words older than it no longer matter. */
  begin(): ReadTicket {
    this.used = noUse();
    this.touched.clear();
    return { seq: this.seq };
  }

  /** Whether containers are kept from an earlier read (the next read is not a whole one). */
  warm(): boolean {
    return this.containers.size > 0;
  }

  /** What the last read took from the cache and read anew. */
  use(): CacheUse {
    return { ...this.used };
  }

  /** Whether the last read took nothing from an earlier one: a whole read, as a scan's. */
  wasWhole(): boolean {
    const u = this.used;
    return (
      u.containersReused + u.imagesReused + u.filesReused + u.listenersReused + u.procsReused + u.slicesReused === 0
    );
  }

  /**
   * The container as the last read inspected it, when no event named it since and the list shows it in the state its
   * inspect said (`listedState`: the check that no event was missed; another state: inspected again).
   */
  container(id: string, listedState: string | undefined): CachedContainer | undefined {
    const kept = this.containers.get(id);
    const hit = kept !== undefined && kept.inspect.State?.Status === listedState ? kept : undefined;
    if (hit !== undefined) this.used.containersReused++;
    else this.used.containersInspected++;
    return hit;
  }

  keepContainer(ticket: ReadTicket, id: string, entry: CachedContainer): void {
    // A container's network mode is set when it is made: known past the events that drop its inspect.
    this.networkModes.set(id, entry.inspect.HostConfig?.NetworkMode ?? '');
    if (this.stale(ticket, this.touched.get(id) ?? 0, this.enginesDropped)) return;
    this.containers.set(id, entry);
  }

  /** The engine's `/version` answer as a read had it, when nothing said since that the engine changed. */
  engineVersion(): EngineVersion | undefined {
    return this.version;
  }

  keepEngineVersion(ticket: ReadTicket, version: EngineVersion): void {
    if (this.stale(ticket, this.enginesDropped)) return;
    this.version = version;
  }

  /**
   * The engine's answer to `name` as a read had it, when nothing said since that it moved: the image list until any
   * image event, the network and volume lists until a network's or volume's (`forgetListed`), `/info` (the daemon's
   * settings) until a daemon event or one not understood (`forgetEngine`).
   */
  engineAnswer(name: EngineAnswer): unknown {
    const kept = this.answers.get(name);
    if (kept !== undefined) this.used.slicesReused++;
    return kept;
  }

  keepEngineAnswer(ticket: ReadTicket, name: EngineAnswer, answer: unknown): void {
    if (this.stale(ticket, this.droppedOf(name), this.enginesDropped)) return;
    this.answers.set(name, answer);
  }

  private droppedOf(name: EngineAnswer): number {
    if (name === 'images') return this.imagesDropped;
    return name === 'networks' || name === 'volumes' ? this.listedDropped : 0;
  }

  image(id: string): ImageRecord | undefined {
    const hit = this.images.get(id);
    if (hit !== undefined) this.used.imagesReused++;
    return hit;
  }

  keepImage(ticket: ReadTicket, id: string, record: ImageRecord): void {
    if (this.stale(ticket, this.imagesDropped, this.enginesDropped)) return;
    this.images.set(id, record);
  }

  /** The record of `path` read when its lstat was `stamp`, if it is still that. */
  file(path: string, stamp: string): FileRecord | undefined {
    const hit = this.files.get(path);
    if (hit !== undefined && hit.stamp === stamp) {
      this.used.filesReused++;
      return hit.record;
    }
    this.used.filesRead++;
    return undefined;
  }

  keepFile(ticket: ReadTicket, path: string, stamp: string, record: FileRecord): void {
    if (this.stale(ticket, 0, 0)) return;
    this.files.set(path, { stamp, record });
  }

  /** Files no longer named by the last read are let go (the cache holds what one read holds, no more). */
  keepOnlyFiles(paths: ReadonlySet<string>): void {
    for (const path of this.files.keys()) if (!paths.has(path)) this.files.delete(path);
  }

  /** Containers no longer listed are let go. */
  keepOnlyContainers(ids: ReadonlySet<string>): void {
    for (const id of this.containers.keys()) if (!ids.has(id)) this.containers.delete(id);
    for (const id of this.networkModes.keys()) if (!ids.has(id)) this.networkModes.delete(id);
  }

  /**
   * An event named the container. When it may have changed the host's listeners as the last read found them, they are
   * read again too (hostListenersMoved).
   */
  forgetContainer(id: string): void {
    const mode = this.containers.get(id)?.inspect.HostConfig?.NetworkMode ?? this.networkModes.get(id);
    this.containers.delete(id);
    this.touched.set(id, ++this.seq);
    this.named.set(id, this.seq);
    if (this.hostListenersMoved(id, mode)) this.sourceChanged('listeners');
  }

  /**
   * Whether an event naming container `id` (network mode `mode`, none: not known) may have moved the host's listeners
   * the last read found: yes for one in the host's network namespace (the host's, or another container's, which may be
   * the host's) that held one of them then, or one not known, or when no holders were kept. A container in the host's
   * namespace that held none of them cannot have closed one; one it opens later is a new listening row of the socket
   * tables, which serve's poll sees (src/collect/host-watch.ts), as it sees any process's.
   */
  private hostListenersMoved(id: string, mode: string | undefined): boolean {
    if (mode !== undefined && mode !== 'host' && !mode.startsWith('container:')) return false;
    const kept = this.listeners;
    if (mode === undefined || kept === undefined) return true;
    return kept.holders.some((h) => mayBeHeldBy(h.holder, id));
  }

  /** The container's /proc as kept, when nothing said it changed since. */
  proc(id: string): KeptProc['view'] | undefined {
    const kept = this.containers.get(id)?.proc;
    if (kept !== undefined) this.used.procsReused++;
    return kept?.view;
  }

  /** The /proc of a container read by the read with `ticket`, with the signature taken before it was read. */
  keepProc(ticket: ReadTicket, id: string, proc: KeptProc): void {
    const entry = this.containers.get(id);
    const files = proc.view.boundFiles.length > 0 ? this.changedAt.files : 0;
    if (entry === undefined || this.stale(ticket, this.touched.get(id) ?? 0, this.enginesDropped, files)) return;
    // A bound file that could not be read is tried again at the next read, never kept as unknown.
    if (proc.view.boundFiles.some((b) => b.error !== undefined)) return;
    entry.proc = proc;
  }

  /** The running containers whose /proc is kept, with the signature it was read under (serve's poll). */
  watchedProcesses(): WatchedProcess[] {
    const watched: WatchedProcess[] = [];
    for (const [id, entry] of this.containers) {
      const pid = entry.inspect.State?.Pid ?? 0;
      if (entry.proc !== undefined && pid > 0) watched.push({ id, pid, signature: entry.proc.signature });
    }
    return watched;
  }

  /** The poll saw the container's processes or sockets move: its /proc is read again. */
  forgetProc(id: string): void {
    const entry = this.containers.get(id);
    if (entry !== undefined) delete entry.proc;
    this.touched.set(id, ++this.seq);
  }

  /**
   * A watch says `source` changed: the slices read from it are read again. A file changed may be one bound into a
   * container: those containers' /proc (the file as each sees it) are read again too.
   */
  sourceChanged(source: WatchedSource): void {
    this.changedAt[source] = ++this.seq;
    if (source !== 'files') return;
    for (const entry of this.containers.values()) if (entry.proc?.view.boundFiles.length) delete entry.proc;
  }

  /** The slice `name` as the last read kept it, when none of its sources changed since and `key` is the same. */
  slice(name: string, key: string): { problems: readonly unknown[] } | undefined {
    const kept = this.slices.get(name);
    if (kept === undefined || kept.key !== key || kept.from.some((s) => this.changedAt[s] > kept.seq)) return undefined;
    this.used.slicesReused++;
    return kept.slice;
  }

  /** Keeps a slice read by the read with `ticket` from `from`; one with problems is not kept (it is read again). */
  keepSlice(
    ticket: ReadTicket,
    name: string,
    key: string,
    from: readonly WatchedSource[],
    slice: { problems: readonly unknown[] },
  ): void {
    if (slice.problems.length > 0 || this.stale(ticket, ...from.map((s) => this.changedAt[s]))) {
      this.slices.delete(name);
      return;
    }
    this.slices.set(name, { seq: ticket.seq, key, from, slice });
  }

  /** A network or a volume was made, removed or changed: their lists are asked for again. */
  forgetListed(): void {
    this.answers.delete('networks');
    this.answers.delete('volumes');
    this.listedDropped = ++this.seq;
  }

  forgetImages(): void {
    this.images.clear();
    this.answers.delete('images');
    this.imagesDropped = ++this.seq;
  }

  /** An engine event not understood: nothing the engine said before is kept. */
  forgetEngine(): void {
    this.listing = undefined;
    this.containers.clear();
    this.images.clear();
    this.answers.clear();
    this.touched.clear();
    this.version = undefined;
    this.enginesDropped = ++this.seq;
    // The daemon's events (a reload) and those not understood may concern its settings, and any container's sockets.
    this.sourceChanged('daemon');
    this.sourceChanged('listeners');
  }

  /** Everything dropped and a new key made: the next read is a whole read, as a scan's. */
  renew(): void {
    this.forgetEngine();
    this.files.clear();
    this.listeners = undefined;
    this.slices.clear();
    this.allDropped = ++this.seq;
    this.currentKey = randomBytes(32);
  }

  /** The engine's events stream is open: from now on each change of a container is told (until `eventsLost`). */
  eventsHeard(): void {
    this.hearingSince = ++this.seq;
    this.listing = undefined;
  }

  /** The events stream is cut, or the engine cannot be reached: no container list stands for the engine's. */
  eventsLost(): void {
    this.hearingSince = null;
    this.listing = undefined;
  }

  /**
   * The container list to read by instead of asking the engine for it, while its events are heard: the last read's
   * list without the containers an event named since (`listed`), and those (`named`: each inspected again, gone or
   * new). None: the list is asked for.
   */
  containerListing(): { listed: ContainerSummary[]; named: string[] } | undefined {
    if (this.listing === undefined || this.hearingSince === null) return undefined;
    const listed: ContainerSummary[] = [];
    for (const [id, summary] of this.listing) if (!this.named.has(id)) listed.push(summary);
    return { listed, named: [...this.named.keys()] };
  }

  /**
   * The read with `ticket` made its container list (`summaries`: asked for, or the kept one with the named containers
   * inspected again): the names before it are answered. The list is kept for the next read only when every container
   * was inspected (`whole`) and the events were heard since before the read began; else the next read asks for it.
   */
  listingRead(ticket: ReadTicket, summaries: readonly ContainerSummary[], whole: boolean): void {
    for (const [id, seq] of this.named) if (seq <= ticket.seq) this.named.delete(id);
    const heard = this.hearingSince !== null && this.hearingSince <= ticket.seq;
    this.listing =
      whole && heard && !this.stale(ticket, this.enginesDropped) ? new Map(summaries.map((s) => [s.Id, s])) : undefined;
  }

  /** Which `renew` the cache is in (0 before the first): one whole read kept per renewal (serve's history). */
  renewals(): number {
    return this.allDropped;
  }

  /** The host's listeners as the last read found them (none after `renew`). */
  hostListeners(): KeptListeners | undefined {
    return this.listeners;
  }

  /** What of this read's listeners the next can take again (`reused`: this read took them from the last). */
  keepHostListeners(ticket: ReadTicket, kept: KeptListeners | undefined, reused: boolean): void {
    if (reused) this.used.listenersReused++;
    this.listeners = this.stale(ticket, 0) ? undefined : kept;
  }

  /** The Compose files' reader kept across reads: the one made by the first read that needs one (`make`). */
  composePool(make: () => ComposePool): ComposePool {
    return (this.compose ??= make());
  }

  /** Stops what the cache keeps running (the Compose worker): serve is stopping. */
  async close(): Promise<void> {
    const pool = this.compose;
    this.compose = undefined;
    await pool?.close();
  }

  private stale(ticket: ReadTicket, ...words: number[]): boolean {
    return Math.max(this.allDropped, ...words) > ticket.seq;
  }
}
