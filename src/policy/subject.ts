import type { SubjectSetName } from './types.js';
import type { Problem } from '../snapshot/types.js';
import type {
  ContainerData,
  ContainerSourceData,
  FileData,
  HostData,
  LedgerEntryData,
  MountData,
} from './subject-data.js';

export interface PhysicalLocation {
  path: string;
  line?: number;
}

export interface LogicalLocation {
  kind: 'container' | 'ledger-entry' | 'host';
  name: string;
  fullyQualifiedName: string;
}

export interface SubjectLocations {
  physical: PhysicalLocation[];
  logical: LogicalLocation[];
}

/**
 * A fact of a subject whose source was not read: the field (a dotted path into the subject's data,
 * the whole of what lies under it) and why. A rule that reads it is not checked on the subject.
 */
export interface UnknownFact {
  /** A dotted path into the subject's data; `''`: the whole subject (it stands for things not known to exist). */
  field: string;
  source: Problem['source'];
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

/**
 * The unknown facts of a subject whose data is `D` (given explicitly: `unknownFacts<FileData>(…)`;
 * without it no field is accepted), all from one source not read, for one reason.
 */
export const unknownFacts = <D extends object = object>(
  source: Problem['source'],
  reason: string,
  fields: readonly NoInfer<FieldPath<D>>[],
): UnknownFact[] => fields.map((field) => ({ field, source, reason }));

/** The data of each subject set: what rules read (src/policy/subject-data.ts, fields in src/policy/fields.ts). */
export interface SubjectDataOf {
  containers: ContainerData;
  files: FileData;
  ledger: LedgerEntryData;
  container_sources: ContainerSourceData;
  mounts: MountData;
  host: HostData;
}

export type SubjectData = SubjectDataOf[SubjectSetName];

/**
 * One thing a rule runs over: the data rules see, and how a finding about it is named and located.
 * `Subject` alone is a subject of any set as the evaluator takes it, whose data rules read as JSON
 * (a rule case's hand-written subject is one); the builders make `Subject<ContainerData>` and so on.
 */
export interface Subject<D extends object = object> {
  set: SubjectSetName;
  /** What a finding is about: a container's name, a file's path, a ledger entry's id, the host. */
  about: { kind: 'container' | 'file' | 'ledger-entry' | 'host'; id: string };
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
