import type { Inventory } from '../../premigrate/inventory.js';
import type { Report } from '../report.js';

/** What the pre-migration check hands the person who decides, for one node. */
export interface Premigration {
  host: string;
  takenAt: string;
  /** False when something was not read: the verdict then cannot be "ready". */
  complete: boolean;
  notChecked: string[];
  inventory: Inventory;
}

export const PREMIGRATION_SCHEMA = 'mesh-audit/premigration@1';

/** The verdict line: ready only when nothing blocks and everything was read. */
export function verdictOf(p: Premigration): string {
  if (!p.complete) return 'INCOMPLETE: the node could not be read whole; no verdict';
  if (p.inventory.ready) return 'ready';
  return `not ready: ${Object.entries(p.inventory.blocking)
    .map(([standing, n]) => `${n} ${standing}`)
    .join(', ')}`;
}

export interface PremigrationReport {
  report: Report;
  nodes: Premigration[];
}
