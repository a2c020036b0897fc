import type { ScopeJudge } from '../scope.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { LabelKeys, Problem } from '../snapshot/types.js';
import type { DockerEndpoint } from './docker-endpoint.js';
import type { ReadCache, ReadTicket } from './read-cache.js';

/*
 * The collector contract (issue 43). A collector reads one slice of the snapshot: given the scan's context (and the
 * slices it depends on, read before it), it gives its part, the problems of what it could not read (its facts
 * unknown) and its notes (what it left unread by the way the scan is set up). `unread` is the same slice when its
 * `collect` threw: not read, with a problem that says so. src/scan.ts only composes collectors: it runs them in the
 * order their dependencies need, each through `collectIsolated`, and joins their parts.
 */

/** What of the scan's settings (src/config.ts, ScanSettings) the collectors read. */
export interface CollectSettings {
  root: string;
  ledger: string;
  hostname: string | undefined;
  labels: LabelKeys;
  managedRoots: string[];
  maxFiles: number;
  dockerTimeoutSeconds: number;
}

/** What every collector is given. */
export interface CollectContext {
  settings: CollectSettings;
  /** What the run looks at; what is out of scope is not read (src/scope.ts). None: everything. */
  scope: ScopeJudge | undefined;
  /** Where the engine is, resolved once per scan. */
  endpoint: DockerEndpoint;
  /** The scan's one HMAC key: every raw value becomes a SafeValue with it, where it is read. */
  safe: SafeValueMaker;
  /** Progress for a person watching. */
  progress: (message: string) => void;
  /** serve's: what the last read saw and nothing says has changed (src/collect/read-cache.ts); none for a scan. */
  cache?: { store: ReadCache; ticket: ReadTicket };
}

/** One collector's slice of the snapshot. */
export interface Slice<Part> {
  part: Part;
  problems: Problem[];
  notes: Problem[];
}

export interface Collector<Context extends CollectContext, Part> {
  collect(context: Context): Promise<Slice<Part>>;
  /** The slice when `collect` threw for `reason`: every fact it reads unknown, a problem naming the source. */
  unread(context: Context, reason: string): Slice<Part>;
}

/** A collector's call, isolated: its exception is its own source's problem, never the run's. */
export function collectIsolated<Context extends CollectContext, Part>(
  collector: Collector<Context, Part>,
  context: Context,
): Promise<Slice<Part>> {
  return isolated(
    () => collector.collect(context),
    (reason) => collector.unread(context, reason),
  );
}

/**
 * One reader's call. An exception thrown inside it (a defect, or input nobody foresaw) is that source's problem,
 * never the run's: `unread` gives the source as not read, with a problem that says what and why, so every fact taken
 * from it is unknown and the other sources are still read. The reason names the error's kind only: its message may
 * quote what was being read (V8's JSON errors do), and that may be a secret.
 */
export async function isolated<T>(read: () => T | Promise<T>, unread: (reason: string) => T): Promise<T> {
  try {
    return await read();
  } catch (error) {
    return unread(`its reader failed unexpectedly (${faultKind(error)})`);
  }
}

/** An unexpected error's kind, in words that quote nothing read. */
function faultKind(error: unknown): string {
  if (error instanceof RangeError && /call stack/i.test(error.message)) return 'stack overflow';
  if (error instanceof Error) return /^[A-Za-z]{1,40}$/.test(error.name) ? error.name : 'Error';
  return 'a thrown non-error';
}
