import type { HistoryInput } from './history.js';
import { compareText } from '../text/compare.js';
import type { Snapshot } from '../snapshot/types.js';
import { sourceParts, sourceSubjects } from './container-sources.js';
import { buildContainers, type BuiltContainer } from './containers.js';
import { buildDaemon } from './daemon.js';
import { buildImages } from './images.js';
import { buildFiles } from './files.js';
import { buildHost } from './host.js';
import { buildListeners, buildNetworks, buildVolumes } from './host-objects.js';
import { joinsOf, type Joins } from './joins.js';
import { buildLedger } from './ledger.js';
import { mountParts, mountSubject } from './mounts.js';
import { SUBJECT_SETS, type DataOf, type SubjectSet, type SubjectSetName } from '../policy/sets.js';
import type { Subject, SubjectSets } from '../policy/subject.js';

export type {
  AnySubjectSets,
  LogicalLocation,
  PhysicalLocation,
  Subject,
  SubjectData,
  SubjectDataOf,
  SubjectLocations,
  SubjectSets,
  UnknownFact,
} from '../policy/subject.js';
export { reachOf, type Exposure, type Reach } from './containers.js';

type Registry = Readonly<Record<string, SubjectSet>>;

/** What every builder is given: the snapshot, and the joins and containers made once (other sets pair with them). */
export interface BuildInputs {
  snapshot: Snapshot;
  joins: Joins;
  containers: readonly BuiltContainer[];
}

/** A builder for each set of a registry: its subjects, in the order findings list them. */
export type SubjectBuilders<R extends Registry = typeof SUBJECT_SETS> = {
  readonly [S in keyof R]: (inputs: BuildInputs) => Subject<DataOf<R[S]>>[];
};

/** The subjects of every set of a registry. */
export type BuiltSets<R extends Registry> = { [S in keyof R]: Subject<DataOf<R[S]>>[] };

const byId = (a: Subject<{ id: string }>, b: Subject<{ id: string }>) => compareText(a.data.id, b.data.id);

/** How many subjects of a streamed set are made at a time by default (a few hundred kilobytes of facts). */
const CHUNK = 512;

/**
 * `items` in the order of `compare` (stable: as the set's subjects were sorted once made), made into subjects
 * `size` at a time, each chunk when the one before has been taken.
 */
function* inChunks<T, D extends object>(
  items: readonly T[],
  size: number,
  compare: (a: T, b: T) => number,
  build: (slice: readonly T[]) => Subject<D>[],
): Generator<Subject<D>[]> {
  const sorted = [...items].sort(compare);
  for (let at = 0; at < sorted.length; at += size) yield build(sorted.slice(at, at + size));
}

const byIdOf = <T extends { id: string }>(a: T, b: T) => compareText(a.id, b.id);

/** A set made `size` subjects at a time, in its order (see STREAMED). */
type ChunkBuilder<S extends SubjectSetName> = (
  inputs: BuildInputs,
  size: number,
) => Iterable<Subject<DataOf<(typeof SUBJECT_SETS)[S]>>[]>;

/**
 * The sets with a subject per file, ledger entry, mount or container source: most of a large host's subjects.
 * Streamed (subjectChunks): the evaluation checks each chunk by every rule of its set, then drops it, so these
 * subjects never all live at once. Each chunk is in the set's order: the parts are sorted by the subject's id (its
 * line for the ledger) before any is made.
 */
const STREAMED: { [S in 'files' | 'ledger' | 'container_sources' | 'mounts']: ChunkBuilder<S> } = {
  files: ({ snapshot, joins }, size) =>
    inChunks(
      snapshot.files,
      size,
      (a, b) => compareText(a.path, b.path),
      (slice) => buildFiles(slice, joins),
    ),
  ledger: ({ snapshot, joins }, size) =>
    inChunks(
      snapshot.ledger.entries,
      size,
      (a, b) => a.line - b.line,
      (slice) => buildLedger({ ...snapshot.ledger, entries: [...slice] }, joins),
    ),
  container_sources: ({ containers, joins }, size) =>
    inChunks(sourceParts(containers, joins), size, byIdOf, (slice) => sourceSubjects(slice, joins)),
  mounts: ({ containers, joins }, size) =>
    inChunks(mountParts(containers), size, byIdOf, (slice) => slice.map((part) => mountSubject(part, joins))),
};

/** A streamed set whole (for buildSubjects). */
const whole =
  <S extends keyof typeof STREAMED>(set: S) =>
  (inputs: BuildInputs) =>
    [...STREAMED[set](inputs, CHUNK)].flat();

/**
 * One builder per set of the registry (src/policy/sets.ts): a set declared there and not built here,
 * or built here and not declared there, fails `tsc`.
 */
export const SUBJECT_BUILDERS: SubjectBuilders = {
  containers: ({ containers }) => containers.map((c) => c.subject).sort(byId),
  files: whole('files'),
  ledger: whole('ledger'),
  container_sources: whole('container_sources'),
  mounts: whole('mounts'),
  host: ({ snapshot, joins }) => [buildHost(snapshot, joins)],
  images: ({ snapshot, containers, joins }) => buildImages(snapshot, containers, joins).sort(byId),
  daemon: ({ snapshot, joins }) => buildDaemon(snapshot, joins),
  networks: ({ snapshot, joins }) => buildNetworks(snapshot, joins).sort(byId),
  volumes: ({ snapshot, joins }) => buildVolumes(snapshot, joins).sort(byId),
  listeners: ({ snapshot, joins }) => buildListeners(snapshot, joins),
};

/** The inputs of every builder: the joins once (joins.ts), the containers once. */
export function buildInputs(snapshot: Snapshot, history: HistoryInput = []): BuildInputs {
  const joins = joinsOf(snapshot, history);
  return { snapshot, joins, containers: buildContainers(snapshot.containers, snapshot.config.labels, joins) };
}

/** Each set of `registry` built by its builder (buildSubjects, or a test's registry extended by a set). */
export function buildSets<R extends Registry>(
  registry: R,
  builders: SubjectBuilders<R>,
  inputs: BuildInputs,
): BuiltSets<R> {
  return Object.fromEntries(Object.keys(registry).map((set) => [set, builders[set]!(inputs)])) as BuiltSets<R>;
}

/**
 * Builds every subject set (ARCHITECTURE.md, `src/facts/`) from a snapshot and the earlier snapshots
 * of its host (pure): the joins once (joins.ts), then each set's builder.
 */
export function buildSubjects(snapshot: Snapshot, history: HistoryInput = []): SubjectSets {
  return buildSets(SUBJECT_SETS, SUBJECT_BUILDERS, buildInputs(snapshot, history));
}

/** Each set's subjects as the evaluation takes them, a chunk at a time (evaluateChunks, src/evaluate/evaluate.ts). */
export type SubjectChunks = (set: SubjectSetName) => Iterable<readonly Subject[]>;

/**
 * buildSubjects, streamed: the joins and the containers are made at once; each set's subjects when the evaluation
 * asks for the set, those of STREAMED `size` at a time, in the order buildSubjects gives them. Each time a set is
 * asked for, its subjects are made anew.
 */
export function subjectChunks(snapshot: Snapshot, history: HistoryInput = [], size = CHUNK): SubjectChunks {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`a chunk holds at least one subject, not ${size}`);
  const inputs = buildInputs(snapshot, history);
  return (set) =>
    Object.hasOwn(STREAMED, set)
      ? STREAMED[set as keyof typeof STREAMED](inputs, size)
      : [SUBJECT_BUILDERS[set](inputs)];
}
