import { compareText } from '../text/compare.js';
import type { NamedKeys, PastEnvFile, PastLedgerEntry, PastSnapshot } from '../snapshot/past.js';
import type { LedgerRecord, RememberedTarget, Snapshot } from '../snapshot/types.js';
import { fileReadings, type EnvReading } from './env-readings.js';
import { lookupsOf, type SnapshotLookups } from './lookups.js';

const time = (iso: string): number => Date.parse(iso);
const later = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : time(b) > time(a) ? b : a;

/** A target a ledger id no longer has, as the scanner remembers it. */
export interface FormerTarget {
  id: string;
  type: string;
  target: string;
  /** When the id was last seen with this target. */
  last_seen: string;
  /** When the move was first seen (the new entry's applied_at where the ledger has it). */
  changed_at: string;
  /** The id's target now, or null when the id is gone from the ledger. */
  current_target: string | null;
}

/** Earlier snapshots as a later run uses them: parsed ones, or what the history's index kept of them. */
export type HistoryInput = readonly (Snapshot | PastSnapshot)[];

const namedKeys = (reading: EnvReading | null): NamedKeys | null =>
  reading === null ? null : [...Object.keys(reading.values), ...reading.caller].sort();

/** What rememberFormerTargets reads of a snapshot: all of PastSnapshot but its env files. */
type PastLedgerView = Omit<PastSnapshot, 'envFiles'>;

const ledgerViews = new WeakMap<Snapshot, PastLedgerView>();
/**
 * The ledger part of pastOf, made once per snapshot. Speed: the current snapshot's former targets need
 * only this; its env files' keys (every env file's readings, sorted: 170 ms and 18 MB kept on a host of
 * 10,000 containers) are for the runs after it, and made only when the snapshot is kept (pastOf).
 */
function pastLedgerView(snapshot: Snapshot): PastLedgerView {
  const cached = ledgerViews.get(snapshot);
  if (cached) return cached;
  const view: PastLedgerView = {
    takenAt: snapshot.takenAt,
    hostname: snapshot.host.hostname,
    ledger: { available: snapshot.ledger.available, entries: pastEntriesOf(snapshot.ledger.entries) },
    formerTargets: snapshot.memory?.formerTargets ?? [],
  };
  ledgerViews.set(snapshot, view);
  return view;
}

const pastEntries = new WeakMap<readonly LedgerRecord[], PastLedgerEntry[]>();
/** A ledger's entries as the history keeps them, made once per list (serve's reads share the ledger they kept). */
function pastEntriesOf(records: readonly LedgerRecord[]): PastLedgerEntry[] {
  const cached = pastEntries.get(records);
  if (cached) return cached;
  const entries: PastLedgerEntry[] = [];
  for (const r of records) {
    if (r.entry.target === undefined) continue;
    entries.push({
      valid: r.valid,
      target: r.entry.target,
      ...(r.entry.id !== undefined ? { id: r.entry.id } : {}),
      ...(r.entry.type !== undefined ? { type: r.entry.type } : {}),
      ...(r.entry.applied_at !== undefined ? { appliedAt: r.entry.applied_at } : {}),
    });
  }
  pastEntries.set(records, entries);
  return entries;
}

const pastCache = new WeakMap<Snapshot, PastSnapshot>();
/** What later runs need of a snapshot (pure; src/snapshot/past.ts), made once per snapshot. */
export function pastOf(snapshot: Snapshot): PastSnapshot {
  const cached = pastCache.get(snapshot);
  if (cached) return cached;
  const envFiles: PastEnvFile[] = [];
  for (const f of snapshot.files) {
    if (!f.env) continue;
    const readings = fileReadings(f);
    envFiles.push({
      path: f.path,
      composeOnly: readings.composeOnly,
      docker: namedKeys(readings.docker),
      podman: namedKeys(readings.podman),
      compose: namedKeys(readings.compose),
    });
  }
  const past: PastSnapshot = { ...pastLedgerView(snapshot), envFiles };
  pastCache.set(snapshot, past);
  return past;
}

const isSnapshot = (s: Snapshot | PastSnapshot): s is Snapshot => 'schema' in s;

/** The history as later runs use it, in its order. */
export const pastOfAll = (history: HistoryInput): PastSnapshot[] => history.map((s) => (isSnapshot(s) ? pastOf(s) : s));

/**
 * The earlier snapshots of the current one's host, in the order given (the history's: oldest
 * first). A snapshot taken "after" the current one (a clock that went back) is still used; the
 * current snapshot itself, when the history folder holds it too, is not counted twice.
 */
export function earlierOf(current: Snapshot, history: HistoryInput): PastSnapshot[] {
  const out: PastSnapshot[] = [];
  for (const s of history) {
    if (s === current) continue;
    const past = isSnapshot(s) ? pastOf(s) : s;
    if (past.hostname === current.host.hostname && past.takenAt !== current.takenAt) out.push(past);
  }
  return out;
}

/** Notes about the history used with a snapshot (pure): snapshots from the snapshot's future. */
export function historyNotes(current: Snapshot, history: HistoryInput): string[] {
  const ahead = earlierOf(current, history).filter((s) => time(s.takenAt) > time(current.takenAt));
  if (ahead.length === 0) return [];
  return [
    `${ahead.length} history snapshot(s) of ${current.host.hostname} were taken after this one ` +
      `(latest ${ahead
        .map((s) => s.takenAt)
        .sort()
        .at(-1)}, this one ${current.takenAt}): ` +
      'the clock went back or history was copied; they were used in the order of their files',
  ];
}

/** Whether a target is on the host in this snapshot: true, false, or null when its source was not read. */
function presenceIn(snapshot: Snapshot, lookups: SnapshotLookups): (type: string, target: string) => boolean | null {
  // Not listed is gone only when every container was listed and inspected.
  const allListed = snapshot.docker !== null && !snapshot.problems.some((p) => p.source === 'docker');
  // Networks and volumes: absent from a list the engine gave is gone; no list (not read, older snapshot) is unknown.
  const { networkNames: networks, volumeNames: volumes } = lookups;
  return (type, target) => {
    if (type === 'container') return lookups.containerNamed(target) !== undefined ? true : allListed ? false : null;
    if (type === 'network') return networks === null ? null : networks.has(target);
    if (type === 'volume') return volumes === null ? null : volumes.has(target);
    if (type === 'file') {
      const file = lookups.filesByPath.get(target);
      if (!file || file.error !== undefined || file.kind === 'unknown') return null;
      return file.kind !== 'missing';
    }
    return null;
  };
}

const keyOf = (id: string, target: string) => JSON.stringify([id, target]);

/** A valid ledger entry with an id: one the memory follows. */
type ObservedEntry = PastLedgerEntry & { id: string };
const observed = (rec: PastLedgerEntry): rec is ObservedEntry => rec.valid && rec.id !== undefined;

/** Tonight's ledger as the memory reads it. */
interface Tonight {
  /** Whether tonight's ledger was read: when not, no id's target tonight is known. */
  known: boolean;
  /** Each id's first entry tonight. */
  byId: Map<string, PastLedgerEntry>;
  /** The ids tonight's ledger gives two targets. */
  twoTargets: Set<string>;
}

/**
 * The id's target as last known: today's ledger when it was read (null: gone from it); undefined when not read
 * tonight.
 */
const targetTonight = (tonight: Tonight, id: string): string | null | undefined =>
  tonight.known ? (tonight.byId.get(id)?.target ?? null) : undefined;

/** One ledger's sight of a moved id: when, its target and type, and its entry's applied_at. */
interface Observation {
  at: string;
  target: string;
  type: string;
  appliedAt?: string;
}

/**
 * The memory of former targets as of `current` (pure): what earlier snapshots remembered, plus
 * every move the ledgers of the history and of `current` show. The ledger keeps only an id's current
 * target (097): this table is what remembers the old ones, carried forward in each kept snapshot so
 * that pruning history does not lose it. An entry ends when its target is gone from the host, or
 * when the id is back at it; a source not read (engine, ledger, a file) ends nothing.
 */
export function rememberFormerTargets(
  current: Snapshot,
  history: HistoryInput,
  lookups: SnapshotLookups = lookupsOf(current),
): RememberedTarget[] {
  const earlier = earlierOf(current, history);
  const now = pastLedgerView(current);
  const timeline: PastLedgerView[] = [...earlier, now];
  const tonight = tonightOf(now);
  const seen = observationsOf(timeline, movedIds(earlier, now, tonight));
  const table = rememberedIn(timeline);
  addLedgerMoves(table, seen, tonight, current.takenAt);
  return stillRemembered(table, tonight, presenceIn(current, lookups), current.takenAt);
}

/** Tonight's ledger read by id (empty when it was not read). */
function tonightOf(now: PastLedgerView): Tonight {
  const tonight: Tonight = { known: now.ledger.available, byId: new Map(), twoTargets: new Set() };
  if (tonight.known)
    for (const r of now.ledger.entries) {
      if (!observed(r)) continue;
      const first = tonight.byId.get(r.id);
      if (first === undefined) tonight.byId.set(r.id, r);
      else if (first.target !== r.target) tonight.twoTargets.add(r.id);
    }
  return tonight;
}

/**
 * The ids whose moves are followed. Most ids never moved: only those seen with two targets, or with a target other
 * than today's, are followed.
 */
function movedIds(earlier: readonly PastLedgerView[], now: PastLedgerView, tonight: Tonight): Set<string> {
  const moved = new Set(tonight.twoTargets);
  const lastTarget = new Map<string, string>();
  // The history's index shares one list among the nights whose ledger did not change (src/snapshot/history-index.ts):
  // a ledger followed again right after itself moves nothing, so each run of equal nights is followed once.
  let followed: readonly PastLedgerEntry[] | undefined;
  for (const snap of earlier) {
    if (!snap.ledger.available || snap.ledger.entries === followed) continue;
    followed = snap.ledger.entries;
    for (const rec of snap.ledger.entries) {
      if (!observed(rec)) continue;
      const id = rec.id;
      const before = lastTarget.get(id);
      if (
        (before !== undefined && before !== rec.target) ||
        (tonight.known && rec.target !== (tonight.byId.get(id)?.target ?? null))
      )
        moved.add(id);
      lastTarget.set(id, rec.target);
    }
  }
  // Tonight's entries against each id's last target before tonight (its own repeats tonight are compared above).
  // Speed: one lookup per entry, where following tonight like the earlier nights took three.
  if (tonight.known && now.ledger.entries !== followed && lastTarget.size > 0)
    for (const rec of now.ledger.entries) {
      if (!observed(rec)) continue;
      const before = lastTarget.get(rec.id);
      if (before !== undefined && before !== rec.target) moved.add(rec.id);
    }
  return moved;
}

/** Each moved id's observations, in the timeline's order, from every ledger that was read. */
function observationsOf(timeline: readonly PastLedgerView[], moved: Set<string>): Map<string, Observation[]> {
  const seen = new Map<string, Observation[]>();
  // The entries of moved ids, picked once per ledger list (shared lists: once for every night that has it).
  const movedIn = new Map<readonly PastLedgerEntry[], ObservedEntry[]>();
  for (const snap of moved.size > 0 ? timeline : []) {
    if (!snap.ledger.available) continue;
    let picked = movedIn.get(snap.ledger.entries);
    if (!picked)
      movedIn.set(
        snap.ledger.entries,
        (picked = snap.ledger.entries.filter((rec): rec is ObservedEntry =>
          observed(rec) ? moved.has(rec.id) : false,
        )),
      );
    for (const rec of picked) {
      const list = seen.get(rec.id) ?? [];
      list.push({
        at: snap.takenAt,
        target: rec.target,
        type: rec.type ?? 'unknown',
        ...(rec.appliedAt !== undefined ? { appliedAt: rec.appliedAt } : {}),
      });
      seen.set(rec.id, list);
    }
  }
  return seen;
}

/** What the scanner remembered along the timeline, by id and target. */
function rememberedIn(timeline: readonly PastLedgerView[]): Map<string, RememberedTarget> {
  const table = new Map<string, RememberedTarget>();
  // Oldest first: a later memory of one entry refines an earlier one. Merging is idempotent: a list met again
  // (shared by the index among nights) changes nothing, and is merged once.
  const merged = new Set<readonly RememberedTarget[]>();
  for (const snap of timeline) {
    if (merged.has(snap.formerTargets)) continue;
    merged.add(snap.formerTargets);
    for (const r of snap.formerTargets) {
      const key = keyOf(r.id, r.target);
      const before = table.get(key);
      table.set(
        key,
        before
          ? {
              ...before,
              lastClaimed: later(before.lastClaimed, r.lastClaimed)!,
              lastSeenPresent: later(before.lastSeenPresent, r.lastSeenPresent),
            }
          : { ...r },
      );
    }
  }
  return table;
}

/** Moves the ledgers show, added to the table: every target an id had before its last known one. */
function addLedgerMoves(
  table: Map<string, RememberedTarget>,
  seen: Map<string, Observation[]>,
  tonight: Tonight,
  takenAt: string,
): void {
  for (const [id, observations] of seen) {
    const now = targetTonight(tonight, id);
    const reference = now === undefined ? observations.at(-1)!.target : now;
    for (const target of new Set(observations.map((o) => o.target))) {
      if (target === reference) continue;
      const key = keyOf(id, target);
      const lastIndex = observations.map((o) => o.target).lastIndexOf(target);
      const last = observations[lastIndex]!;
      const before = table.get(key);
      if (before) {
        table.set(key, { ...before, lastClaimed: later(before.lastClaimed, last.at)! });
        continue;
      }
      const next = observations[lastIndex + 1];
      const appliedAt = next?.appliedAt ?? tonight.byId.get(id)?.appliedAt;
      const movedAt = appliedAt !== undefined && time(appliedAt) > time(last.at) ? appliedAt : next ? next.at : takenAt;
      table.set(key, { id, type: last.type, target, movedAt, lastClaimed: last.at, lastSeenPresent: null });
    }
  }
}

/** The table less what ended tonight (the id is back at its target, the target is gone), in id and target order. */
function stillRemembered(
  table: Map<string, RememberedTarget>,
  tonight: Tonight,
  presence: (type: string, target: string) => boolean | null,
  takenAt: string,
): RememberedTarget[] {
  const out: RememberedTarget[] = [];
  for (const r of table.values()) {
    if (targetTonight(tonight, r.id) === r.target) continue; // the id is back at it
    const present = presence(r.type, r.target);
    if (present === false) continue; // gone from the host: the memory ends here
    out.push(present === true ? { ...r, lastSeenPresent: later(r.lastSeenPresent, takenAt) } : r);
  }
  return out.sort((a, b) => compareText(a.id, b.id) || compareText(a.target, b.target));
}

/** Every former target of every ledger id as of `current` (pure), for the facts rules see. */
export function formerTargets(
  current: Snapshot,
  history: HistoryInput,
  lookups: SnapshotLookups = lookupsOf(current),
): FormerTarget[] {
  const remembered = rememberFormerTargets(current, history, lookups);
  if (remembered.length === 0) return [];
  const ids = new Set(remembered.map((r) => r.id));
  const currentById = new Map<string, string>();
  for (const rec of current.ledger.entries) {
    if (
      rec.valid &&
      rec.entry.id !== undefined &&
      rec.entry.target !== undefined &&
      ids.has(rec.entry.id) &&
      !currentById.has(rec.entry.id)
    )
      currentById.set(rec.entry.id, rec.entry.target);
  }
  return remembered.map((r) => {
    return {
      id: r.id,
      type: r.type,
      target: r.target,
      last_seen: r.lastClaimed,
      changed_at: r.movedAt,
      current_target: currentById.get(r.id) ?? null,
    };
  });
}

/** The snapshot with its memory worked out against its history (pure): what a kept or saved snapshot carries. */
export function withMemory(current: Snapshot, history: HistoryInput): Snapshot {
  return { ...current, memory: { formerTargets: rememberFormerTargets(current, history) } };
}
