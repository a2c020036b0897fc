import { StringDecoder } from 'node:string_decoder';
import { ReadOnlyDocker } from './docker-api.js';
import type { DockerEndpoint } from './docker-endpoint.js';

/*
 * The engine's events, for `serve`: what tells it that a container, an image, a network or a volume changed, or that
 * the daemon reloaded. Each event is read for its type and the id of what it names (a container's: that container
 * is read again, src/collect/read-cache.ts), nothing else. An event line longer than MAX_EVENT_LINE (a label of a
 * megabyte is in every event of its container) is not parsed: it is a change of something unknown, and everything
 * the engine said before is read again. A stream that ends, fails or cannot be opened is knowledge lost, told at
 * once; it is opened again, and its return is told too (what happened in between is then read whole).
 */

/** The actions that change what a scan reads (exec_*, attach, top, … do not), of the types below. */
export const WATCHED_EVENTS = [
  'create',
  'start',
  'restart',
  'die',
  'stop',
  'destroy',
  'rename',
  'update',
  'oom',
  'pause',
  'unpause',
  'health_status',
  'tag',
  'untag',
  'delete',
  'import',
  'load',
  'pull',
  'connect',
  'disconnect',
  'reload',
] as const;

export const WATCHED_TYPES = ['container', 'image', 'network', 'volume', 'daemon'] as const;

/**
 * What an event says changed: one container (by its full id, and where it is going when the event says), the images,
 * the networks or volumes (their lists), or something else of the engine's.
 */
export type EngineChange =
  | { type: 'container'; id: string; going?: ContainerGoing }
  | { type: 'image' }
  | { type: 'listed' }
  | { type: 'engine' };

/**
 * Where a container's event says it is going: `down` (it died or was stopped: a restart, or its restart policy, may
 * start it again within a moment), `up` (it started, or is gone for good: what a `down` waited for has come).
 */
export type ContainerGoing = 'down' | 'up';

// Podman's compatible API says `remove` where Docker says `destroy`.
const GOING: Readonly<Record<string, ContainerGoing>> = {
  die: 'down',
  stop: 'down',
  start: 'up',
  destroy: 'up',
  remove: 'up',
};

/** Longer event lines are not parsed (they are a change of something unknown). */
export const MAX_EVENT_LINE = 64 * 1024;

const CONTAINER_ID = /^[0-9a-f]{64}$/;

const field = (o: unknown, key: string): unknown =>
  typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[key] : undefined;
const containerId = (id: unknown): string | undefined =>
  typeof id === 'string' && CONTAINER_ID.test(id) ? id : undefined;

/**
 * One event line's change; anything not understood is a change of the engine's, unnamed. A network's connect and
 * disconnect change a container's inspect: they name it in their `container` attribute (a restart of a container
 * disconnects and connects it).
 */
export function changeOf(line: string): EngineChange {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return { type: 'engine' };
  }
  const type = field(event, 'Type');
  const actor = field(event, 'Actor');
  if (type === 'image') return { type: 'image' };
  if (type === 'container') {
    const id = containerId(field(actor, 'ID'));
    if (id === undefined) return { type: 'engine' };
    const action = field(event, 'Action');
    const going = typeof action === 'string' && Object.hasOwn(GOING, action) ? GOING[action] : undefined;
    return going !== undefined ? { type: 'container', id, going } : { type: 'container', id };
  }
  if (type === 'network') {
    const action = field(event, 'Action');
    if (action !== 'connect' && action !== 'disconnect') return { type: 'listed' };
    const id = containerId(field(field(actor, 'Attributes'), 'container'));
    return id !== undefined ? { type: 'container', id } : { type: 'engine' };
  }
  if (type === 'volume') return { type: 'listed' };
  return { type: 'engine' };
}

/**
 * The stream's lines, each told as it ends; a line past `max` characters is told as unknown once its end comes,
 * without being kept.
 */
export function eventLines(
  told: (change: EngineChange) => void,
  max = MAX_EVENT_LINE,
): (chunk: Buffer | string) => void {
  let pending = '';
  let overlong = false;
  // A character cut between two chunks is joined again.
  const decoder = new StringDecoder('utf8');
  return (chunk) => {
    let text = pending + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    pending = '';
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n')) {
      const line = text.slice(0, end);
      text = text.slice(end + 1);
      if (overlong || line.length > max) told({ type: 'engine' });
      else if (line.trim() !== '') told(changeOf(line));
      overlong = false;
    }
    if (text.length > max) overlong = true;
    else if (!overlong) pending = text;
  };
}

export interface EngineWatchHandlers {
  /** Something the scan reads changed (what, as far as the event says). */
  changed(change?: EngineChange): void;
  /** The engine can no longer be heard (`cause` says why, as a person reads it). */
  lost(cause: string): void;
  /** Heard again: every change since `lost` is unknown, so everything is read again. */
  back(cause: string): void;
  /** The stream is open (the first time, and after each `back`): every change from now on is told, until `lost`. */
  heard?(): void;
}

export const STREAM_CUT = "the engine's events stream was cut: changes are not heard until it is open again";
export const ENGINE_UNREACHABLE =
  'the engine cannot be reached: its containers, images, networks and volumes are unknown';

/** The events stream, or an error when its answer's head does not come within `ms` (the request is then ended). */
async function eventsWithin(
  endpoint: DockerEndpoint,
  filters: object,
  signal: AbortSignal,
  ms: number,
): Promise<NodeJS.ReadableStream> {
  const own = new AbortController();
  const stop = () => own.abort();
  signal.addEventListener('abort', stop, { once: true });
  const timer = setTimeout(stop, ms);
  let stream: NodeJS.ReadableStream;
  try {
    stream = await Promise.race([
      ReadOnlyDocker.events(endpoint, filters, own.signal),
      new Promise<never>((_, reject) => own.signal.addEventListener('abort', () => reject(new Error('no answer')))),
    ]);
  } catch (e) {
    // Its connection and agent go with it (ReadOnlyDocker.events ends them on abort).
    own.abort();
    signal.removeEventListener('abort', stop);
    throw e;
  } finally {
    clearTimeout(timer);
  }
  // serve's stop ends the stream while it lives, and lets go of it once it ended: a stream cut a hundred times
  // must not leave a hundred listeners on serve's stop.
  const release = () => signal.removeEventListener('abort', stop);
  stream.once('end', release);
  stream.once('close', release);
  stream.once('error', release);
  return stream;
}

/**
 * Listens to the engine's events until `signal` aborts. `retryMs`: how long to wait before opening a lost stream
 * again (doubled twice at most while it keeps failing: an engine back is heard within 4 × `retryMs`).
 */
export function watchEngineEvents(
  endpoint: DockerEndpoint,
  handlers: EngineWatchHandlers,
  options: { signal: AbortSignal; retryMs: number; requestTimeoutMs: number },
): void {
  let failures = 0;
  let lostCause: string | null = null;
  // Read through a function: the signal aborts while an attempt awaits.
  const stopped = (): boolean => options.signal.aborted;
  const lose = (cause: string) => {
    if (lostCause !== null && lostCause !== cause) handlers.back(lostCause);
    if (lostCause !== cause) handlers.lost(cause);
    lostCause = cause;
  };
  const again = () => {
    if (options.signal.aborted) return;
    failures = Math.min(failures + 1, 3);
    setTimeout(() => void open(), options.retryMs * 2 ** (failures - 1)).unref();
  };
  const open = async (): Promise<void> => {
    if (options.signal.aborted) return;
    let stream: NodeJS.ReadableStream;
    try {
      // A ping first: an engine that does not answer is told apart from a stream that was cut.
      const probe = AbortSignal.any([options.signal, AbortSignal.timeout(options.requestTimeoutMs)]);
      const engine = await ReadOnlyDocker.connect(endpoint, {
        requestTimeoutMs: options.requestTimeoutMs,
        deadline: probe,
      });
      engine.close();
      // Podman's compatible API takes the type filter; the action names are Docker's, so Podman gets the type only.
      const filters =
        engine.kind === 'docker'
          ? { type: [...WATCHED_TYPES], event: [...WATCHED_EVENTS] }
          : { type: [...WATCHED_TYPES] };
      // An engine that takes the request and never answers it is not listened to forever: its answer's head is awaited
      // as long as any request's (the stream's body, by its nature, has no such limit).
      stream = await eventsWithin(endpoint, filters, options.signal, options.requestTimeoutMs);
    } catch {
      if (stopped()) return;
      lose(ENGINE_UNREACHABLE);
      again();
      return;
    }
    failures = 0;
    if (lostCause !== null) handlers.back(lostCause);
    lostCause = null;
    handlers.heard?.();
    let ended = false;
    const end = () => {
      if (ended || options.signal.aborted) return;
      ended = true;
      lose(STREAM_CUT);
      again();
    };
    stream.on(
      'data',
      eventLines((change) => handlers.changed(change)),
    );
    stream.once('end', end);
    stream.once('error', end);
    stream.once('close', end);
  };
  void open();
}
