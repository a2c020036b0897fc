import type { RememberedTarget } from './types.js';

/*
 * What a later run needs of an earlier snapshot of its host, and nothing else: the ledger's targets
 * (moves, and file targets to read again), the memory of former targets, and the keys each env file
 * named (evidence that a key came from its file). Made from a snapshot by src/facts/history.ts
 * (pastOf), or read from the history's index (history-index.ts) so that a scan does not parse every
 * kept snapshot to learn it again (a 4.5 MB snapshot per night on a host of 300 containers).
 */
export interface PastSnapshot {
  takenAt: string;
  hostname: string;
  ledger: { available: boolean; entries: readonly PastLedgerEntry[] };
  /** The snapshot's memory of former targets (empty when it had none). */
  formerTargets: readonly RememberedTarget[];
  /** Env files as recorded, by the keys each reading named. */
  envFiles: readonly PastEnvFile[];
}

/** A ledger entry that names a target (entries without one matter to no later run). */
export interface PastLedgerEntry {
  valid: boolean;
  id?: string;
  type?: string;
  target: string;
  appliedAt?: string;
}

/** The keys one reading of an env file named, with or without a value (src/facts/env-readings.ts). */
export type NamedKeys = readonly string[];

export interface PastEnvFile {
  path: string;
  /** The snapshot held only the Compose reading: its keys stand for every reading. */
  composeOnly: boolean;
  docker: NamedKeys | null;
  podman: NamedKeys | null;
  compose: NamedKeys | null;
}
