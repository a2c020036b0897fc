import { SNAPSHOT_SCHEMA, type DaemonView, type ImagesView, type Snapshot } from './types.js';

/** A snapshot as `mesh-audit/snapshot@1` wrote it: no images, no daemon, no container runtime facts. */
export type SnapshotV1 = Omit<Snapshot, 'schema' | 'images' | 'daemon'> & { schema: 'mesh-audit/snapshot@1' };

/** Why a fact of a migrated snapshot is unknown (it reaches every notice of an unknown fact). */
export const NOT_IN_V1 = 'not recorded: the snapshot was made as mesh-audit/snapshot@1, before it was read';

/**
 * A snapshot@1 as @2 (pure). What @1 did not record is unknown, never absent: images and every part of
 * the daemon are unavailable with the reason, and a container without `runtime` keeps none (its facts
 * from it are unknown: src/facts/containers.ts); the engine's networks and volumes and the host's sockets
 * are not read, each with a problem saying why (read alone, left absent, they would pass for none). Everything
 * @1 held is kept as it was, its memory (former targets) included, so history written before the bump goes on
 * remembering.
 */
export function migrateV1(old: SnapshotV1): Snapshot {
  const unavailable = { available: false as const, reason: NOT_IN_V1 };
  const images: ImagesView = unavailable;
  const daemon: DaemonView = { info: unavailable, config: unavailable, process: unavailable, paths: [] };
  return {
    ...old,
    schema: SNAPSHOT_SCHEMA,
    images,
    daemon,
    networks: null,
    volumes: null,
    hostListeners: unavailable,
    problems: [
      ...old.problems,
      ...(['networks', 'volumes', 'listeners'] as const).map((source) => ({ source, message: NOT_IN_V1 })),
    ],
  };
}
