import { compareText } from '../compare.js';
import type { Snapshot } from '../snapshot/types.js';

const time = (iso: string): number => Date.parse(iso);

/** A target a ledger id no longer has, as earlier snapshots of the same host remember it. */
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
 * Every former target of every ledger id, from earlier snapshots of the same host (pure).
 * The ledger keeps only the current target (097): this is what remembers the old ones.
 */
export function formerTargets(current: Snapshot, history: readonly Snapshot[]): FormerTarget[] {
  const currentAt = time(current.takenAt);
  const earlier = history
    .map((s) => ({ s, at: time(s.takenAt) }))
    .filter(({ s, at }) => s.host.hostname === current.host.hostname && at < currentAt)
    .sort((a, b) => a.at - b.at)
    .map(({ s }) => s);
  const timeline = [...earlier, current];

  const currentById = new Map(
    current.ledger.entries.filter((r) => r.valid && r.entry.id !== undefined).map((r) => [r.entry.id!, r.entry]),
  );
  const observed = (rec: Snapshot['ledger']['entries'][number]): rec is typeof rec & { entry: { id: string; target: string } } =>
    rec.valid && rec.entry.id !== undefined && rec.entry.target !== undefined;
  // Most ids never moved: only those seen with a target other than today's are followed through time.
  const moved = new Set<string>();
  for (const snap of timeline) {
    for (const rec of snap.ledger.entries) {
      if (observed(rec) && rec.entry.target !== (currentById.get(rec.entry.id)?.target ?? null)) moved.add(rec.entry.id);
    }
  }

  // id -> ordered observations (time, target, type), for the ids that moved
  const seen = new Map<string, { at: string; target: string; type: string }[]>();
  if (moved.size > 0) {
    for (const snap of timeline) {
      for (const rec of snap.ledger.entries) {
        if (!observed(rec) || !moved.has(rec.entry.id)) continue;
        const list = seen.get(rec.entry.id) ?? [];
        list.push({ at: snap.takenAt, target: rec.entry.target, type: rec.entry.type ?? 'unknown' });
        seen.set(rec.entry.id, list);
      }
    }
  }

  const out: FormerTarget[] = [];
  for (const [id, observations] of seen) {
    const now = currentById.get(id);
    const nowTarget = now?.target ?? null;
    if (observations.every((o) => o.target === nowTarget)) continue; // the common case: the id never moved
    const targets = new Set(observations.map((o) => o.target));
    for (const target of targets) {
      if (target === nowTarget) continue;
      const lastIndex = observations.map((o) => o.target).lastIndexOf(target);
      const last = observations[lastIndex]!;
      const next = observations[lastIndex + 1];
      const appliedAt = now?.applied_at;
      const changedAt =
        appliedAt !== undefined && time(appliedAt) > time(last.at) ? appliedAt : next ? next.at : current.takenAt;
      out.push({ id, type: last.type, target, last_seen: last.at, changed_at: changedAt, current_target: nowTarget });
    }
  }
  return out.sort((a, b) => compareText(a.id, b.id) || compareText(a.target, b.target));
}
