import type { HistoryInput } from './history.js';
import { compareText } from '../text/compare.js';
import type { Snapshot } from '../snapshot/types.js';
import { sourceParts, sourceSubjects } from './container-sources.js';
import { buildContainers, type BuiltContainer } from './containers.js';
import { buildFiles } from './files.js';
import { buildNetworks, buildVolumes } from './host-objects.js';
import { joinsOf, type Joins } from './joins.js';
import { buildLedger } from './ledger.js';
import { mountParts, mountSubject } from './mounts.js';
import { SUBJECT_BUILDERS, type BuildInputs } from './subjects.js';
import type { Subject, SubjectSets } from '../policy/subject.js';

/*
 * The subjects of one snapshot, made again only where their inputs changed (serve, issue 44: a change re-evaluates
 * the subjects it touched). A container (with its sources and mounts), a file and a ledger entry are each made from
 * their own record and from the answers the joins (joins.ts) gave while it was made: every read of the joins is
 * recorded, and the next snapshot's subject is the last one when its record is the same value and every recorded
 * read gives the same value again from the new joins. The joins are made anew each time (they are the whole host's
 * inputs: ledger, history, images, daemon, the other containers' names and mounts), so what another subject's
 * change means for this one is what its recorded reads say. The sets made of the whole host (host, images, daemon,
 * networks, volumes, listeners) are made anew each time: they are few and cheap (BENCHMARKS.md, evaluate).
 */

/** Whether two values are the same JSON-like value: the same object, or the same members (Maps, Sets, arrays). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map) || !(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !sameValue(v, b.get(k))) return false;
    return true;
  }
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set) || !(b instanceof Set) || a.size !== b.size) return false;
    for (const v of a) if (!b.has(v)) return false;
    return true;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    // In order: a record's members come in one order; another order is another value to a rule that lists them.
    if (k !== kb[i] || !sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** The joins' members by name (the questions are functions that use no `this`). */
const fieldOf = (joins: Joins, name: keyof Joins): unknown => (joins as unknown as Record<string, unknown>)[name];

/** One answer of the joins while a subject was made: a field, a question (with its arguments), or a map's. */
interface JoinsRead {
  name: keyof Joins;
  /** A question's arguments; null: the field itself. */
  args: readonly unknown[] | null;
  /** A question put to a Map or Set field (`get`, `has`). */
  member?: 'get' | 'has';
  value: unknown;
}

/**
 * The joins as one item's subjects see them: every answer recorded. The subjects keep this view (their `locate`
 * reads it when a finding is made), so it answers from the joins of the snapshot they were last found in.
 */
class RecordedJoins {
  target: Joins;
  readonly reads: JoinsRead[] = [];
  readonly view: Joins;
  private readonly wrappers = new Map<string | symbol, unknown>();

  constructor(target: Joins) {
    this.target = target;
    this.view = new Proxy({} as Joins, { get: (_, name) => this.answer(name) });
  }

  private record(read: JoinsRead): void {
    // Each question once (a subject's locate may ask again at each finding).
    for (const r of this.reads)
      if (
        r.name === read.name &&
        r.member === read.member &&
        (r.args === read.args ||
          (r.args !== null &&
            read.args !== null &&
            r.args.length === read.args.length &&
            r.args.every((a, i) => a === read.args![i])))
      )
        return;
    this.reads.push(read);
  }

  private answer(name: string | symbol): unknown {
    const kept = this.wrappers.get(name);
    if (kept !== undefined) return kept;
    const key = name as keyof Joins;
    const field = fieldOf(this.target, key);
    if (typeof field === 'function') {
      const ask = (...args: unknown[]) => {
        const value = (fieldOf(this.target, key) as (...a: unknown[]) => unknown)(...args);
        this.record({ name: key, args, value });
        return value;
      };
      this.wrappers.set(name, ask);
      return ask;
    }
    if (field instanceof Map || field instanceof Set) {
      // The joins' maps are asked one key at a time; any other use of them is refused (it would not be recorded).
      const of = () => fieldOf(this.target, key) as Map<unknown, unknown>;
      const lookup = {
        get: (k: unknown) => {
          const value = of().get(k);
          this.record({ name: key, args: [k], member: 'get', value });
          return value;
        },
        has: (k: unknown) => {
          const value = of().has(k);
          this.record({ name: key, args: [k], member: 'has', value });
          return value;
        },
      };
      this.wrappers.set(name, lookup);
      return lookup;
    }
    this.record({ name: key, args: null, value: field });
    return field;
  }

  /**
   * Whether every answer recorded is the same from `joins`, asked with `renamed` arguments (the item's record of the
   * last snapshot stands for this snapshot's: they are the same value).
   */
  sameFrom(joins: Joins, renamed: (arg: unknown) => unknown): boolean {
    for (const r of this.reads) {
      const field = fieldOf(joins, r.name);
      let now: unknown;
      if (r.args === null) now = field;
      else if (r.member !== undefined) {
        if (!(field instanceof Map || field instanceof Set)) return false;
        now = r.member === 'get' ? (field as Map<unknown, unknown>).get(r.args[0]) : field.has(r.args[0]);
      } else if (typeof field === 'function') now = (field as (...a: unknown[]) => unknown)(...r.args.map(renamed));
      else return false;
      if (!sameValue(r.value, now)) return false;
      // The same value, now as this snapshot has it: the next comparison of an answer shared from here is by identity.
      r.value = now;
    }
    return true;
  }
}

/** What one item (a container, a file, a ledger entry) gave last time, and from what. */
interface Made<R, S> {
  /** The record as last seen (the same value as the one it was made from). */
  record: R;
  /** The record it was made from: the argument its recorded reads of the joins were asked with. */
  madeFrom: R;
  /** What else of the snapshot the builder was given (the label keys, the ledger's `adopted`). */
  given: unknown;
  joins: RecordedJoins;
  made: S;
}

/** A container's subjects, each with the id its set is sorted by. */
interface ContainerMade {
  built: BuiltContainer;
  sources: { id: string; subject: Subject }[];
  mounts: { id: string; subject: Subject }[];
}

// Each set in its order, as subjects.ts sorts it (a stable sort of the items in snapshot order).
const byId = (a: { id: string }, b: { id: string }) => compareText(a.id, b.id);
const byDataId = (a: Subject, b: Subject) => compareText((a.data as { id: string }).id, (b.data as { id: string }).id);
const partsOf = (parts: { id: string; subject: Subject }[]) => parts.sort(byId).map((s) => s.subject);

/** How many items were made anew and taken from the last snapshot, in the last build. */
export interface SubjectReuse {
  made: number;
  reused: number;
}

/** Items by key; an item whose key another already has is made anew each time (never taken for the other). */
type Memo<R, S> = Map<string, Made<R, S>>;

/**
 * buildSubjects (subjects.ts) for a sequence of snapshots of one host: each call gives what buildSubjects gives on
 * the snapshot (the same subjects, in the same order), the items whose inputs did not change taken from the call
 * before (the same objects: the evaluation's memo (evaluate.ts) knows them by identity).
 */
export class SubjectMemo {
  /** By set: what each item gave the last time. */
  private readonly memos = new Map<string, Memo<unknown, unknown>>();
  private reuse: SubjectReuse = { made: 0, reused: 0 };

  /** What the last build made anew and took again. */
  lastReuse(): SubjectReuse {
    return { ...this.reuse };
  }

  build(snapshot: Snapshot, history: HistoryInput = []): SubjectSets {
    this.reuse = { made: 0, reused: 0 };
    const joins = joinsOf(snapshot, history);
    const labels = snapshot.config.labels;
    const made = this.each(
      'containers',
      snapshot.containers,
      (c) => c.id,
      labels,
      joins,
      (c, view): ContainerMade => {
        const built = buildContainers([c], labels, view)[0]!;
        const parts = sourceParts([built], view);
        const sources = sourceSubjects(parts, view);
        return {
          built,
          sources: parts.map((part, i) => ({ id: part.id, subject: sources[i]! })),
          mounts: mountParts([built]).map((part) => ({ id: part.id, subject: mountSubject(part, view) })),
        };
      },
    );
    const builtContainers = made.map((m) => m.built);
    const inputs: BuildInputs = { snapshot, joins, containers: builtContainers };
    const files = this.each(
      'files',
      [...snapshot.files].sort((a, b) => compareText(a.path, b.path)),
      (f) => f.path,
      null,
      joins,
      (f, view) => buildFiles([f], view)[0]!,
    );
    const { entries, ...ledgerRest } = snapshot.ledger;
    const ledger = this.each(
      'ledger',
      [...entries].sort((a, b) => a.line - b.line),
      (r) => String(r.line),
      snapshot.ledger.adopted ?? false,
      joins,
      (r, view) => buildLedger({ ...ledgerRest, entries: [r] }, view)[0]!,
    );
    // Networks and volumes one by one when the engine listed them (unread or not recorded: the set's one subject).
    const { networks, volumes } = snapshot;
    const networkSubjects = Array.isArray(networks)
      ? this.each(
          'networks',
          networks,
          (n) => n.id || n.name,
          null,
          joins,
          (n, view) => buildNetworks({ ...snapshot, networks: [n] }, view),
        ).flat()
      : SUBJECT_BUILDERS.networks(inputs);
    const volumeSubjects = Array.isArray(volumes)
      ? this.each(
          'volumes',
          volumes,
          (v) => v.name,
          null,
          joins,
          (v, view) => buildVolumes({ ...snapshot, volumes: [v] }, view),
        ).flat()
      : SUBJECT_BUILDERS.volumes(inputs);
    return {
      containers: builtContainers.map((b) => b.subject).sort(byDataId),
      files,
      ledger,
      container_sources: partsOf(made.flatMap((m) => m.sources)),
      mounts: partsOf(made.flatMap((m) => m.mounts)),
      host: SUBJECT_BUILDERS.host(inputs),
      images: SUBJECT_BUILDERS.images(inputs),
      daemon: SUBJECT_BUILDERS.daemon(inputs),
      networks: networkSubjects.sort(byDataId),
      volumes: volumeSubjects.sort(byDataId),
      listeners: SUBJECT_BUILDERS.listeners(inputs),
    } as SubjectSets;
  }

  /** The subjects of each record of a set, the last ones where nothing they were made from changed. */
  private each<R, S>(
    set: string,
    records: readonly R[],
    keyOf: (record: R) => string,
    given: unknown,
    joins: Joins,
    make: (record: R, view: Joins) => S,
  ): S[] {
    const last = (this.memos.get(set) ?? new Map()) as Memo<R, S>;
    const next: Memo<R, S> = new Map();
    const out = records.map((r) => this.item(last, next, keyOf(r), r, given, joins, (view) => make(r, view)));
    this.memos.set(set, next);
    return out;
  }

  /** The item's subjects: the last ones when its record, what else it was given and its joins' answers are the same. */
  private item<R, S>(
    last: Memo<R, S>,
    next: Memo<R, S>,
    key: string,
    record: R,
    given: unknown,
    joins: Joins,
    make: (view: Joins) => S,
  ): S {
    const kept = last.get(key);
    const unique = !next.has(key);
    if (
      unique &&
      kept !== undefined &&
      sameValue(kept.record, record) &&
      sameValue(kept.given, given) &&
      kept.joins.sameFrom(joins, (arg) => (arg === kept.madeFrom ? record : arg))
    ) {
      // The subjects' own view answers from these joins from now on (a finding's locate reads it); the record is this
      // snapshot's (the same value), so that the next snapshot sharing it is known the same by identity alone.
      kept.joins.target = joins;
      kept.record = record;
      next.set(key, kept);
      this.reuse.reused++;
      return kept.made;
    }
    const recorded = new RecordedJoins(joins);
    const made = make(recorded.view);
    this.reuse.made++;
    if (unique) next.set(key, { record, madeFrom: record, given, joins: recorded, made });
    else next.delete(key); // two items of one key: neither is kept (which is which next time is not known)
    return made;
  }
}
