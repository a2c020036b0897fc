import type { Container, FileRecord, Snapshot } from '../snapshot/types.js';
import { KeptParts } from './kept-parts.js';

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

/** `kept`: the parts kept from the snapshot before (serve's reads: kept-parts.ts); a new one makes them all. */
export function lookupsOf(snapshot: Snapshot, kept: KeptParts = new KeptParts()): SnapshotLookups {
  const { containers, files } = snapshot;
  return {
    filesByPath: kept.fromSame('lookups.filesByPath', files, () => new Map(files.map((f) => [f.path, f]))),
    containerNamed: kept.fromSame('lookups.containerNamed', containers, () => containerNamedIn(containers)),
    networkNames: kept.fromValue(
      'lookups.networkNames',
      snapshot.networks ? new Set(snapshot.networks.flatMap((n) => [n.name, n.id])) : null,
      (names) => names,
    ),
    volumeNames: kept.fromValue(
      'lookups.volumeNames',
      snapshot.volumes ? new Set(snapshot.volumes.map((v) => v.name)) : null,
      (names) => names,
    ),
  };
}

/** The first container whose name or id is the target. */
export function containerNamedIn<C extends { name: string; id: string }>(
  containers: readonly C[],
): (target: string) => C | undefined {
  /** containers by name and by id: the position of the first one with it. */
  const byName = new Map<string, number>();
  const byId = new Map<string, number>();
  containers.forEach((c, at) => {
    if (!byName.has(c.name)) byName.set(c.name, at);
    if (!byId.has(c.id)) byId.set(c.id, at);
  });
  return (target) => {
    const a = byName.get(target);
    const b = byId.get(target);
    const at = a === undefined ? b : b === undefined ? a : Math.min(a, b);
    return at === undefined ? undefined : containers[at];
  };
}
