import type { HistoryInput } from './history.js';
import { compareText } from '../compare.js';
import type { Snapshot } from '../snapshot/types.js';
import { buildContainerSources } from './container-sources.js';
import { buildContainers, type BuiltContainer } from './containers.js';
import { buildDaemon } from './daemon.js';
import { buildImages } from './images.js';
import { buildFiles } from './files.js';
import { buildHost } from './host.js';
import { buildListeners, buildNetworks, buildVolumes } from './host-objects.js';
import { joinsOf, type Joins } from './joins.js';
import { buildLedger } from './ledger.js';
import { buildMounts } from './mounts.js';
import { SUBJECT_SETS, type DataOf, type SubjectSet } from '../policy/sets.js';
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

/**
 * One builder per set of the registry (src/policy/sets.ts): a set declared there and not built here,
 * or built here and not declared there, fails `tsc`.
 */
export const SUBJECT_BUILDERS: SubjectBuilders = {
  containers: ({ containers }) => containers.map((c) => c.subject).sort(byId),
  files: ({ snapshot, joins }) => buildFiles(snapshot.files, joins).sort(byId),
  ledger: ({ snapshot, joins }) => buildLedger(snapshot.ledger, joins).sort((a, b) => a.data.line - b.data.line),
  container_sources: ({ containers, joins }) => buildContainerSources(containers, joins).sort(byId),
  mounts: ({ containers, joins }) => buildMounts(containers, joins).sort(byId),
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
