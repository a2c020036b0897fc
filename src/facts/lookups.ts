import type { Container, FileRecord, Snapshot } from '../snapshot/types.js';

/**
 * Lookups into one snapshot's lists, built once and shared by what asks them: the joins (joins.ts) and
 * whether a former target is still on the host (history.ts). Each was built twice per evaluation.
 */
export interface SnapshotLookups {
  filesByPath: ReadonlyMap<string, FileRecord>;
  /** The first container whose name or id is the target. */
  containerNamed: (target: string) => Container | undefined;
  /** Names and ids of the engine's networks; null when its list was not read. */
  networkNames: ReadonlySet<string> | null;
  /** Names of the engine's volumes; null when its list was not read. */
  volumeNames: ReadonlySet<string> | null;
}

export function lookupsOf(snapshot: Snapshot): SnapshotLookups {
  /** containers by name and by id: the position of the first one with it. */
  const byName = new Map<string, number>();
  const byId = new Map<string, number>();
  snapshot.containers.forEach((c, at) => {
    if (!byName.has(c.name)) byName.set(c.name, at);
    if (!byId.has(c.id)) byId.set(c.id, at);
  });
  return {
    filesByPath: new Map(snapshot.files.map((f) => [f.path, f])),
    containerNamed: (target) => {
      const a = byName.get(target);
      const b = byId.get(target);
      const at = a === undefined ? b : b === undefined ? a : Math.min(a, b);
      return at === undefined ? undefined : snapshot.containers[at];
    },
    networkNames: snapshot.networks ? new Set(snapshot.networks.flatMap((n) => [n.name, n.id])) : null,
    volumeNames: snapshot.volumes ? new Set(snapshot.volumes.map((v) => v.name)) : null,
  };
}
