import { SUBJECT_SETS, type AboutKind, type SubjectDataOf, type SubjectSetName } from './sets.js';
import type { Problem } from '../snapshot/types.js';

export type { SubjectDataOf } from './sets.js';

export interface PhysicalLocation {
  path: string;
  line?: number;
}

export interface LogicalLocation {
  kind: 'container' | 'ledger-entry' | 'host' | 'image' | 'daemon' | 'network' | 'volume' | 'listener';
  name: string;
  fullyQualifiedName: string;
}

export interface SubjectLocations {
  physical: PhysicalLocation[];
  logical: LogicalLocation[];
}

/**
 * Where a fact comes from: a part of the host a scan reads (a problem names the same), or `snapshot`
 * for a fact the snapshot's layout did not record (a migrated snapshot@1: src/snapshot/migrate.ts).
 */
/** `image`: a container's own image record (in the `images` list, which may lack one that is gone). */
export type FactSource = Problem['source'] | 'snapshot' | 'image';

/**
 * A fact of a subject whose source was not read: the field (a dotted path into the subject's data,
 * the whole of what lies under it) and why. A rule that reads it is not checked on the subject.
 */
export interface UnknownFact {
  /** A dotted path into the subject's data; `''`: the whole subject (it stands for things not known to exist). */
  field: string;
  source: FactSource;
  reason: string;
}

/** The fields of an object of fixed shape a rule's path may go into (not a map such as `env`, not a list). */
type InnerFields<V> = V extends readonly unknown[]
  ? never
  : V extends object
    ? string extends keyof V
      ? never
      : keyof V & string
    : never;

/**
 * A field of subject data `D` as an unknown fact names it: a field, or a field of one of its objects
 * (`container.claimed_by`, `endpoints.loopback`). A misspelt field is a type error.
 */
export type FieldPath<D> = { [K in keyof D & string]-?: K | `${K}.${InnerFields<NonNullable<D[K]>>}` }[keyof D &
  string];

export type SubjectData = SubjectDataOf[SubjectSetName];

/**
 * One thing a rule runs over: the data rules see, and how a finding about it is named and located.
 * `Subject` alone is a subject of any set as the evaluator takes it, whose data rules read as JSON
 * (a rule case's hand-written subject is one); the builders make `Subject<ContainerData>` and so on.
 */
export interface Subject<D extends object = object> {
  set: SubjectSetName;
  /** What a finding is about: a container's name, a file's path, a ledger entry's id, the host. */
  about: { kind: AboutKind; id: string };
  /** Prefix of the finding's discriminator when one subject of this set is one part of a thing (a mount, a source). */
  part: string | null;
  data: D;
  /** The facts of `data` that are unknown (their source was not read); none when absent. */
  unknown?: UnknownFact[];
  locate(item: unknown): SubjectLocations;
  /**
   * The mesh resource (ledger id) the subject belongs to, or null: what ties findings of one root cause
   * together (a renamed container is both unclaimed and stale: one resource).
   */
  resource: string | null;
  /**
   * The mesh module the subject belongs to, or null: its `mesh.module` label, else the module of the ledger entry
   * that is its resource. Carried into findings so that a script groups them by module.
   */
  module: string | null;
  /**
   * Rules the ledger allows this subject to break (`allow:` of the entries claiming it): a finding of one
   * is kept, suppressed with the entry's reason, never dropped. None when absent.
   */
  allowances?: readonly Allowance[];
}

/** A rule (id or name) a ledger entry allows its resource to break: why, and which entry says so (`id (file:line)`). */
export interface Allowance {
  rule: string;
  reason: string;
  by: string;
}

/** Every subject set, typed: what buildSubjects (subjects.ts) makes. */
export type SubjectSets = { [S in SubjectSetName]: Subject<SubjectDataOf[S]>[] };

/** Subject sets as the evaluator takes them: any data (SubjectSets is one). */
export type AnySubjectSets = { readonly [S in SubjectSetName]: readonly Subject[] };

/** An unknown fact of a subject whose data is `D`: its field is one of `D`'s (or `''`, the whole subject). */
export type UnknownFactOf<D> = UnknownFact & { readonly field: FieldPath<D> | '' };

/** What a builder gives for one subject; the factory adds the set and what a finding is about. */
export interface SubjectParts<D extends object> {
  /** What a finding about it is named by (about.id): a container's name, a file's path, … */
  id: string;
  /** The part of the thing it is (a mount's destination, a source's path), when one thing has several subjects. */
  part?: string | null;
  data: D;
  unknown?: readonly UnknownFactOf<D>[];
  locate: (item: unknown) => SubjectLocations;
  resource: string | null;
  module: string | null;
  allowances?: readonly Allowance[];
}

/** How the builder of one set makes its subjects and their unknown facts (subjectFactory). */
export interface SubjectFactory<S extends SubjectSetName> {
  /** The facts `fields` of a subject of this set, unknown: their source was not read, for `reason`. */
  unknown(
    source: FactSource,
    reason: string,
    fields: readonly FieldPath<SubjectDataOf[S]>[],
  ): UnknownFactOf<SubjectDataOf[S]>[];
  /** Every fact of the subject unknown: it stands for things not known to exist. */
  wholly(source: FactSource, reason: string): UnknownFactOf<SubjectDataOf[S]>[];
  subject(parts: SubjectParts<SubjectDataOf[S]>): Subject<SubjectDataOf[S]>;
}

/**
 * The one way a builder (src/facts/) makes subjects of a set: the set's name gives the data type,
 * what a finding is about (the registry, src/policy/sets.ts) and the fields an unknown fact may name,
 * so a misspelt field in an unknown list, or a field of another set, is a type error.
 */
export function subjectFactory<S extends SubjectSetName>(set: S): SubjectFactory<S> {
  const about = SUBJECT_SETS[set].about;
  return {
    unknown: (source, reason, fields) => fields.map((field) => ({ field, source, reason })),
    wholly: (source, reason) => [{ field: '', source, reason }],
    // Speed: optional members set after the literal rather than spread into it (every subject is made here).
    subject: ({ id, part = null, data, unknown, locate, resource, module, allowances }) => {
      const subject: Subject<SubjectDataOf[S]> = {
        set,
        about: { kind: about, id },
        part,
        data,
        locate,
        resource,
        module,
      };
      if (unknown !== undefined && unknown.length > 0) subject.unknown = [...unknown];
      if (allowances) subject.allowances = allowances;
      return subject;
    },
  };
}
