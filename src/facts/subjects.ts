import { compareText } from '../compare.js';
import type { Snapshot } from '../snapshot/types.js';
import { buildContainerSources } from './container-sources.js';
import { buildContainers } from './containers.js';
import { buildFiles } from './files.js';
import { buildHost } from './host.js';
import { joinsOf } from './joins.js';
import { buildLedger } from './ledger.js';
import { buildMounts } from './mounts.js';
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

const byId = (a: Subject<{ id: string }>, b: Subject<{ id: string }>) => compareText(a.data.id, b.data.id);

/**
 * Builds every subject set (ARCHITECTURE.md, `src/facts/`) from a snapshot and the earlier snapshots
 * of its host (pure): the joins once (joins.ts), then one builder per set.
 */
export function buildSubjects(snapshot: Snapshot, history: readonly Snapshot[] = []): SubjectSets {
  const joins = joinsOf(snapshot, history);
  const containers = buildContainers(snapshot.containers, snapshot.config.labels, joins);
  return {
    containers: containers.map((c) => c.subject).sort(byId),
    files: buildFiles(snapshot.files, joins).sort(byId),
    ledger: buildLedger(snapshot.ledger, joins).sort((a, b) => a.data.line - b.data.line),
    container_sources: buildContainerSources(containers, joins).sort(byId),
    mounts: buildMounts(containers, joins).sort(byId),
    host: [buildHost(snapshot, joins)],
  };
}
