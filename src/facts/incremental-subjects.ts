import type { HistoryInput } from './history.js';
import { compareText } from '../text/compare.js';
import type { Snapshot } from '../snapshot/types.js';
import { sourceParts, sourceSubjects } from './container-sources.js';
import { buildContainers, type BuiltContainer } from './containers.js';
import { buildFiles } from './files.js';
import { buildNetworks, buildVolumes } from './host-objects.js';
import { joinsOf, type Joins } from './joins.js';
import { KeptParts } from './kept-parts.js';
import { sameItems, sameValue } from './same-value.js';
import { buildLedger } from './ledger.js';
import { mountParts, mountSubject } from './mounts.js';
import { SUBJECT_BUILDERS, type BuildInputs } from './subjects.js';
import type { Subject, SubjectSets } from '../policy/subject.js';

/*
 * The subjects of one snapshot, made again only where their inputs changed (serve, issue 44: a change re-evaluates
 * the subjects it touched). A container (with its sources and mounts), a file and a ledger entry are each made from
 * their own record and from the answers the joins (joins.ts) gave while it was made: every read of the joins is
 * recorded, and the next snapshot's subject is the last one when its record is the same value and every recorded
 * read gives the same value again from the new joins. The joins are the whole host's inputs (ledger, history,
 * images, daemon, the other containers' names and mounts), so what another subject's change means for this one is
 * what its recorded reads say. Each part of the joins is kept while what it is made from stays the same
 * (kept-parts.ts): a read of a part kept is not asked again, and a set whose records and parts are all as they were is
 * taken whole, without a walk of its items. The sets made of the whole host (host, images, daemon, listeners) are made
 * anew each time: they are few and cheap (BENCHMARKS.md, evaluate).
 */

/** The joins' members by name (the questions are functions that use no `this`). */
const fieldOf = (joins: Joins, name: keyof Joins): unknown => (joins as unknown as Record<string, unknown>)[name];

/** One answer of the joins while a subject was made: a field, a question (with its arguments), or a map's. */
interface JoinsRead {
  name: keyof Joins;
  /** A question's arguments; null: the field itself. */
  args: readonly unknown[] | null;
  /** A question put to a Map or Set field (`get`, `has`). */
  member?: 'get' | 'has';
  /** The function or map asked: the same one again gives the same answer to the same arguments (kept-parts.ts). */
  asked: unknown;
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

  /** `names`: where each member of the joins asked is told (the set's, SubjectMemo). */
  constructor(
    target: Joins,
    private readonly names: Set<keyof Joins>,
  ) {
    this.target = target;
    this.view = new Proxy({} as Joins, { get: (_, name) => this.answer(name) });
  }

  private record(read: JoinsRead): void {
    this.names.add(read.name);
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
        const asked = fieldOf(this.target, key) as (...a: unknown[]) => unknown;
        const value = asked(...args);
        this.record({ name: key, args, asked, value });
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
          const asked = of();
          const value = asked.get(k);
          this.record({ name: key, args: [k], member: 'get', asked, value });
          return value;
        },
        has: (k: unknown) => {
          const asked = of();
          const value = asked.has(k);
          this.record({ name: key, args: [k], member: 'has', asked, value });
          return value;
        },
      };
      this.wrappers.set(name, lookup);
      return lookup;
    }
    this.record({ name: key, args: null, asked: field, value: field });
    return field;
  }

  /**
   * Whether every answer recorded is the same from `joins`, asked with `renamed` arguments (the item's record of the
   * last snapshot stands for this snapshot's: they are the same value). `asIs`: no argument is renamed (the record is
   * the very one the reads were asked with), so a function or map the joins kept answers as it did, unasked.
   */
  sameFrom(joins: Joins, renamed: (arg: unknown) => unknown, asIs: boolean): boolean {
    for (const r of this.reads) {
      const field = fieldOf(joins, r.name);
      if (field === r.asked && (asIs || r.args === null)) continue;
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
      r.asked = field;
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

/** One set as the last build made it. */
interface SetMade<R, S> {
  items: Memo<R, S>;
  /** The records as the snapshot gave them, and in the set's order. */
  source: readonly R[];
  records: readonly R[];
  given: unknown;
  /** Every member of the joins an item of the set asked, ever (the items' reads are never fewer). */
  names: Set<keyof Joins>;
  /** Whether every item is in `items` (no two records had one key). */
  whole: boolean;
  /** The joins every item's answers were last found the same in. */
  joins: Joins;
  out: S[];
}

/** Whether each member named is the very same in both joins. */
const everySame = (names: Iterable<keyof Joins>, a: Joins, b: Joins): boolean => {
  for (const name of names) if (fieldOf(a, name) !== fieldOf(b, name)) return false;
  return true;
};

/**
 * buildSubjects (subjects.ts) for a sequence of snapshots of one host: each call gives what buildSubjects gives on
 * the snapshot (the same subjects, in the same order), the items whose inputs did not change taken from the call
 * before (the same objects: the evaluation's memo (evaluate.ts) knows them by identity).
 */
export class SubjectMemo {
  /** By set: what each item gave the last time. */
  private readonly sets = new Map<string, SetMade<unknown, unknown>>();
  /** The joins' parts kept from the last build: what asked them need not ask again (kept-parts.ts). */
  private readonly parts = new KeptParts();
  private reuse: SubjectReuse = { made: 0, reused: 0 };

  /** What the last build made anew and took again. */
  lastReuse(): SubjectReuse {
    return { ...this.reuse };
  }

  build(snapshot: Snapshot, history: HistoryInput = []): SubjectSets {
    this.reuse = { made: 0, reused: 0 };
    const joins = joinsOf(snapshot, history, this.parts);
    const made = this.containers(snapshot, joins);
    const builtContainers = made.map((m) => m.built);
    const inputs: BuildInputs = { snapshot, joins, containers: builtContainers };
    const files = this.each(
      'files',
      snapshot.files,
      (a, b) => compareText(a.path, b.path),
      (f) => f.path,
      null,
      joins,
      (f, view) => buildFiles([f], view)[0]!,
    );
    const { entries, ...ledgerRest } = snapshot.ledger;
    const ledger = this.each(
      'ledger',
      entries,
      (a, b) => a.line - b.line,
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
          null,
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
          null,
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

  /** Each container's subjects: itself, its sources and its mounts. */
  private containers(snapshot: Snapshot, joins: Joins): ContainerMade[] {
    const labels = snapshot.config.labels;
    return this.each(
      'containers',
      snapshot.containers,
      null,
      (c) => c.id,
      labels,
      joins,
      (c, view) => {
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
  }

  /**
   * The subjects of each record of a set (`source`, put in the set's `order`), the last ones where nothing they were
   * made from changed. Speed: when every record is the very one of the last build, and every member of the joins the
   * set's items ever asked is the very one they asked (a part kept: kept-parts.ts), every item would be taken again
   * as it is, and the set is, without going through its items (a container event leaves most sets so).
   */
  private each<R, S>(
    set: string,
    source: readonly R[],
    order: ((a: R, b: R) => number) | null,
    keyOf: (record: R) => string,
    given: unknown,
    joins: Joins,
    make: (record: R, view: Joins) => S,
  ): S[] {
    const last = this.sets.get(set) as SetMade<R, S> | undefined;
    const sameSource = last !== undefined && sameItems(last.source, source);
    if (sameSource && last.whole && sameValue(last.given, given) && everySame(last.names, last.joins, joins)) {
      // What a finding's locate asks from now on is asked of these joins.
      for (const kept of last.items.values()) kept.joins.target = joins;
      last.joins = joins;
      this.reuse.reused += last.items.size;
      return last.out;
    }
    const records = sameSource ? last.records : order === null ? source : [...source].sort(order);
    const items = last?.items ?? new Map<string, Made<R, S>>();
    const names = last?.names ?? new Set<keyof Joins>();
    const next: Memo<R, S> = new Map();
    const out = records.map((r) => this.item(items, next, keyOf(r), r, given, joins, names, make));
    this.sets.set(set, { items: next, source, records, given, names, whole: next.size === records.length, joins, out });
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
    names: Set<keyof Joins>,
    make: (record: R, view: Joins) => S,
  ): S {
    const kept = last.get(key);
    const unique = !next.has(key);
    if (
      unique &&
      kept !== undefined &&
      sameValue(kept.record, record) &&
      sameValue(kept.given, given) &&
      kept.joins.sameFrom(joins, (arg) => (arg === kept.madeFrom ? record : arg), record === kept.record)
    ) {
      // The subjects' own view answers from these joins from now on (a finding's locate reads it); the record is this
      // snapshot's (the same value), so that the next snapshot sharing it is known the same by identity alone.
      kept.joins.target = joins;
      kept.record = record;
      next.set(key, kept);
      this.reuse.reused++;
      return kept.made;
    }
    const recorded = new RecordedJoins(joins, names);
    const made = make(record, recorded.view);
    this.reuse.made++;
    if (unique) next.set(key, { record, madeFrom: record, given, joins: recorded, made });
    else next.delete(key); // two items of one key: neither is kept (which is which next time is not known)
    return made;
  }
}
