import { sameItems, sameValue } from './same-value.js';

/**
 * The parts of the joins (joins.ts) kept from one snapshot of a host to the next (serve's reads, issue 44). A part is
 * made again only when what it is made from changed; kept, it is the same object, so its functions and maps give the
 * same answers, and a subject that asked them need not ask again (incremental-subjects.ts). A part is made of values
 * that are never written to once made (the snapshot's records, and the maps a part builds), so the same inputs give
 * the same answers. A new KeptParts makes every part (a whole build).
 */
export class KeptParts {
  /** By name: each name is one part's alone. */
  private readonly parts = new Map<string, { from: unknown; part: unknown }>();

  /** The part made from `from`, or the last one when each item of `from` is the very same as last time's. */
  fromSame<P>(name: string, from: readonly unknown[], make: () => P): P {
    const last = this.parts.get(name);
    if (last !== undefined && sameItems(last.from as readonly unknown[], from)) return last.part as P;
    const part = make();
    this.parts.set(name, { from, part });
    return part;
  }

  /** The part made from `value`, or the last one when `value` is the same value as last time's (sameValue). */
  fromValue<V, P>(name: string, value: V, make: (value: V) => P): P {
    const last = this.parts.get(name);
    if (last !== undefined && sameValue(last.from, value)) return last.part as P;
    const part = make(value);
    this.parts.set(name, { from: value, part });
    return part;
  }
}
