import { compareText } from '../compare.js';
import type { RememberedTarget, Snapshot } from '../snapshot/types.js';

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

/**
 * The earlier snapshots of the current one's host, in the order given (loadHistory's: oldest
 * first). A snapshot taken "after" the current one (a clock that went back) is still used; the
 * current snapshot itself, when the history folder holds it too, is not counted twice.
 */
export function earlierOf(current: Snapshot, history: readonly Snapshot[]): Snapshot[] {
  return history.filter(
    (s) => s.host.hostname === current.host.hostname && s !== current && s.takenAt !== current.takenAt,
  );
}

/** Notes about the history used with a snapshot (pure): snapshots from the snapshot's future. */
export function historyNotes(current: Snapshot, history: readonly Snapshot[]): string[] {
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
function presenceIn(snapshot: Snapshot): (type: string, target: string) => boolean | null {
  const containers = new Set(snapshot.containers.flatMap((c) => [c.name, c.id]));
  // Not listed is gone only when every container was listed and inspected.
  const allListed = snapshot.docker !== null && !snapshot.problems.some((p) => p.source === 'docker');
  const files = new Map(snapshot.files.map((f) => [f.path, f]));
  return (type, target) => {
    if (type === 'container') return containers.has(target) ? true : allListed ? false : null;
    if (type === 'file') {
      const file = files.get(target);
      if (!file || file.error !== undefined || file.kind === 'unknown') return null;
      return file.kind !== 'missing';
    }
    return null;
  };
}

const keyOf = (id: string, target: string) => JSON.stringify([id, target]);

/**
 * The memory of former targets as of `current` (pure): what earlier snapshots remembered, plus
 * every move the ledgers of the history and of `current` show. The ledger keeps only an id's current
 * target (097): this table is what remembers the old ones, carried forward in each kept snapshot so
 * that pruning history does not lose it. An entry ends when its target is gone from the host, or
 * when the id is back at it; a source not read (engine, ledger, a file) ends nothing.
 */
export function rememberFormerTargets(current: Snapshot, history: readonly Snapshot[]): RememberedTarget[] {
  const timeline = [...earlierOf(current, history), current];
  const ledgerKnown = (s: Snapshot) => s.ledger.available;
  const observed = (
    rec: Snapshot['ledger']['entries'][number],
  ): rec is typeof rec & { entry: { id: string; target: string } } =>
    rec.valid && rec.entry.id !== undefined && rec.entry.target !== undefined;

  const currentById = new Map<string, Snapshot['ledger']['entries'][number]['entry']>();
  if (ledgerKnown(current))
    for (const r of current.ledger.entries)
      if (observed(r) && !currentById.has(r.entry.id)) currentById.set(r.entry.id, r.entry);
  /**
   * The id's target as last known: today's ledger when it was read (null: gone from it); undefined when not read
   * tonight.
   */
  const currentTarget = (id: string): string | null | undefined =>
    ledgerKnown(current) ? (currentById.get(id)?.target ?? null) : undefined;
  // Most ids never moved: only those seen with two targets, or with a target other than today's, are followed.
  const lastTarget = new Map<string, string>();
  const moved = new Set<string>();
  for (const snap of timeline) {
    if (!ledgerKnown(snap)) continue;
    for (const rec of snap.ledger.entries) {
      if (!observed(rec)) continue;
      const id = rec.entry.id;
      const before = lastTarget.get(id);
      if (
        (before !== undefined && before !== rec.entry.target) ||
        (ledgerKnown(current) && rec.entry.target !== (currentById.get(id)?.target ?? null))
      )
        moved.add(id);
      lastTarget.set(id, rec.entry.target);
    }
  }
  // id -> ordered observations (time, target, type, applied_at) from every ledger that was read
  const seen = new Map<string, { at: string; target: string; type: string; appliedAt?: string }[]>();
  for (const snap of moved.size > 0 ? timeline : []) {
    if (!ledgerKnown(snap)) continue;
    for (const rec of snap.ledger.entries) {
      if (!observed(rec) || !moved.has(rec.entry.id)) continue;
      const list = seen.get(rec.entry.id) ?? [];
      list.push({
        at: snap.takenAt,
        target: rec.entry.target,
        type: rec.entry.type ?? 'unknown',
        ...(rec.entry.applied_at !== undefined ? { appliedAt: rec.entry.applied_at } : {}),
      });
      seen.set(rec.entry.id, list);
    }
  }

  const table = new Map<string, RememberedTarget>();
  // What the scanner remembered, oldest first: a later memory of one entry refines an earlier one.
  for (const snap of timeline) {
    for (const r of snap.memory?.formerTargets ?? []) {
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
  // Moves the ledgers show: every target an id had before its last known one.
  for (const [id, observations] of seen) {
    const now = currentTarget(id);
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
      const appliedAt = next?.appliedAt ?? currentById.get(id)?.applied_at;
      const movedAt =
        appliedAt !== undefined && time(appliedAt) > time(last.at) ? appliedAt : next ? next.at : current.takenAt;
      table.set(key, { id, type: last.type, target, movedAt, lastClaimed: last.at, lastSeenPresent: null });
    }
  }

  const out: RememberedTarget[] = [];
  const presence = presenceIn(current);
  for (const r of table.values()) {
    if (currentTarget(r.id) === r.target) continue; // the id is back at it
    const present = presence(r.type, r.target);
    if (present === false) continue; // gone from the host: the memory ends here
    out.push(present === true ? { ...r, lastSeenPresent: later(r.lastSeenPresent, current.takenAt) } : r);
  }
  return out.sort((a, b) => compareText(a.id, b.id) || compareText(a.target, b.target));
}

/** Every former target of every ledger id as of `current` (pure), for the facts rules see. */
export function formerTargets(current: Snapshot, history: readonly Snapshot[]): FormerTarget[] {
  const remembered = rememberFormerTargets(current, history);
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
export function withMemory(current: Snapshot, history: readonly Snapshot[]): Snapshot {
  return { ...current, memory: { formerTargets: rememberFormerTargets(current, history) } };
}
