import type { FactSource, UnknownFact, UnknownFactOf } from '../policy/subject.js';

/**
 * Where each fact of a subject comes from, declared once per subject set: read from a source (and
 * unknown when that source was not read), about the scan itself (whether /proc was read: always
 * known), or derived from other facts of the subject — computed from those alone, and unknown when
 * one it reads is unknown. The table has one entry per field of the subject's data (a field added to
 * the data and not here fails `tsc`), and a derived fact's `compute` sees only the inputs it
 * declares (its argument is typed as those fields; at run time, with an unknown input, it gets an
 * object holding only those). So a fact built from an unknown one can never pass for known:
 * ARCHITECTURE.md, "Known and unknown".
 */
export type { FactSource };

/** A fact read from a source. */
export interface ReadFact {
  readonly source: FactSource;
}

/** A fact about what the scan read (always known, and never a fact about the host). */
export interface ScanFact {
  readonly scan: true;
}

/** A fact computed from other facts of the same subject (`from`), with what the builder gives (`C`). */
export interface DerivedFact<D, C, R> {
  readonly from: readonly (keyof D & string)[];
  /** Typed on `from` by `derive`; stored with its argument erased. */
  readonly compute: (inputs: never, context: C) => R;
}

export type FactTable<D, C> = { readonly [K in keyof D]-?: ReadFact | ScanFact | DerivedFact<D, C, D[K]> };

/** The fields a table derives. */
export type DerivedKeys<T> = { [K in keyof T]: T[K] extends { from: readonly unknown[] } ? K : never }[keyof T];

/** The facts a builder gives (read from sources, or about the scan): the others it derives by the table. */
export type BaseFacts<D, T> = Omit<D, DerivedKeys<T>>;

/**
 * A place for each derived fact, which buildFacts fills: a builder whose subjects have many facts
 * writes them in its literal (V8 keeps an object built whole fast; one given many fields one by one
 * becomes a dictionary).
 */
export type DerivedPlaces<T> = { readonly [K in DerivedKeys<T>]?: undefined };

/**
 * A derived fact: `compute` is given the fields named in `from`, and nothing else. It reads an input
 * where it uses it (`x.listening`, not by destructuring): an input read is an input depended on, so a
 * fact reading an unknown input only on some branch is known on the others. Reading more than needed
 * is never wrong, only less precise.
 */
export const derive =
  <D, C>() =>
  <const I extends keyof D & string, R>(
    from: readonly I[],
    compute: (inputs: Pick<D, I>, context: C) => R,
  ): DerivedFact<D, C, R> => ({ from, compute });

export const read = (source: FactSource): ReadFact => ({ source });
export const SCAN: ScanFact = { scan: true };

const isDerived = <D, C>(fact: FactTable<D, C>[keyof D]): fact is DerivedFact<D, C, D[keyof D]> => 'from' in fact;

/**
 * The fields of a table that are read from a source, derived, or about the scan: what the facts builders and tests ask.
 */
export function factKinds<D, C>(
  table: FactTable<D, C>,
): { read: Map<keyof D & string, FactSource>; derived: (keyof D & string)[]; scan: (keyof D & string)[] } {
  const out = {
    read: new Map<keyof D & string, FactSource>(),
    derived: [] as (keyof D & string)[],
    scan: [] as (keyof D & string)[],
  };
  for (const [field, fact] of Object.entries(table) as [keyof D & string, FactTable<D, C>[keyof D]][]) {
    if (isDerived(fact)) out.derived.push(field);
    else if ('scan' in fact) out.scan.push(field);
    else out.read.set(field, fact.source);
  }
  return out;
}

/**
 * The derived fields of a table in an order where each comes after every field it is derived from.
 * Throws when a derived field reads itself through others, or reads a field the table does not have.
 */
export function derivationOrder<D, C>(table: FactTable<D, C>): (keyof D & string)[] {
  const { derived } = factKinds(table);
  const order: (keyof D & string)[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (field: keyof D & string, path: readonly string[]): void => {
    const fact = table[field] as FactTable<D, C>[keyof D] | undefined;
    if (fact === undefined)
      throw new Error(`${path.join(' <- ')}: derived from ${field}, which is no field of the subject`);
    if (!isDerived(fact) || state.get(field) === 'done') return;
    if (state.get(field) === 'visiting')
      throw new Error(`derived facts read each other: ${[...path, field].join(' <- ')}`);
    state.set(field, 'visiting');
    for (const input of fact.from) visit(input, [...path, field]);
    state.set(field, 'done');
    order.push(field);
  };
  for (const field of derived) visit(field, []);
  return order;
}

/**
 * Speed: the unknown fact of a field whose source was not read, for one reason, made once and shared
 * (frozen) by every subject that has it: a snapshot@1's ~35 runtime facts of every container, say.
 * Remembered for the last reason of each source (the reasons of one snapshot repeat).
 */
const sharedUnknown = new Map<FactSource, { reason: string; facts: Map<string, UnknownFact> }>();

function unknownFact(field: string, source: FactSource, reason: string): UnknownFact {
  let shared = sharedUnknown.get(source);
  if (shared?.reason !== reason) sharedUnknown.set(source, (shared = { reason, facts: new Map() }));
  let fact = shared.facts.get(field);
  if (fact === undefined) shared.facts.set(field, (fact = Object.freeze({ field, source, reason })));
  return fact;
}

/**
 * A subject's data and its unknown facts, from the facts read (`base`) and the sources not read
 * (`unread`: source -> why): each read fact of an unread source is unknown; then each derived fact
 * is computed in order, and is unknown when `compute` read an unknown input (the first one it read
 * gives the source and reason). Speed: with no unknown input (nearly every subject), `compute` gets
 * the data itself and nothing is watched.
 */
export function buildFacts<D, C, T extends FactTable<D, C>>(
  table: T,
  order: readonly (keyof D & string)[],
  base: BaseFacts<D, T> & DerivedPlaces<T>,
  context: C,
  unread: ReadonlyMap<FactSource, string>,
  readFields: ReadonlyMap<keyof D & string, FactSource>,
): { data: D; unknown: UnknownFactOf<D>[] } {
  const data = base as Record<string, unknown>;
  const unknownBy = new Map<string, UnknownFactOf<D>>();
  if (unread.size > 0) {
    for (const [field, source] of readFields) {
      const reason = unread.get(source);
      if (reason !== undefined) unknownBy.set(field, unknownFact(field, source, reason) as UnknownFactOf<D>);
    }
  }
  for (const field of order) {
    const fact = table[field] as DerivedFact<D, C, unknown>;
    const compute = fact.compute as (inputs: Readonly<Record<string, unknown>>, context: C) => unknown;
    if (unknownBy.size === 0 || !fact.from.some((f) => unknownBy.has(f))) {
      data[field] = compute(data, context);
      continue;
    }
    // Some input is unknown: the fact is unknown when compute reads one (it may not: a container not
    // on the host network has no sockets of its own to show).
    let firstUnknown: UnknownFactOf<D> | undefined;
    const inputs = {};
    for (const input of fact.from) {
      Object.defineProperty(inputs, input, {
        enumerable: true,
        get: () => {
          firstUnknown ??= unknownBy.get(input);
          return data[input];
        },
      });
    }
    data[field] = compute(inputs, context);
    if (firstUnknown) unknownBy.set(field, { field, source: firstUnknown.source, reason: firstUnknown.reason });
  }
  return { data: data as D, unknown: [...unknownBy.values()] };
}
