import type { Inventory } from '../../premigrate/inventory.js';
import type { AdoptionPlan } from '../../premigrate/plan.js';
import type { Report } from '../report.js';
import type { Excluded } from '../../scope.js';

/** What the pre-migration check hands the person who decides, for one node. */
export interface Premigration {
  host: string;
  takenAt: string;
  /** False when something was not read: the verdict then cannot be "ready". */
  complete: boolean;
  notChecked: string[];
  inventory: Inventory;
  plan: AdoptionPlan;
  /** What the scope left out (--exclude, config `exclude`, ignore entries): not in the inventory, not in the plan. */
  excluded?: Excluded;
}

/**
 * @2: each node's `plan` is an adoption plan @2 (a record step carries its entry under `entry`, with severity, exposure
 * and warning).
 */
export const PREMIGRATION_SCHEMA = 'mesh-audit/premigration@2';

/**
 * The verdict line: ready only when no finding blocks and everything was read; otherwise the blocking
 * resources per standing, then every blocking finding not already counted there, by rule and subject.
 */
export function verdictOf(p: Premigration): string {
  if (!p.complete) return 'INCOMPLETE: the node could not be read whole; no verdict';
  if (p.inventory.ready) return 'ready';
  const standings = Object.entries(p.inventory.blocking).map(([standing, n]) => `${n} ${standing}`);
  const counted = new Set(
    p.inventory.rows
      .filter((r) => r.blocking && r.standingFrom === 'findings' && Object.hasOwn(p.inventory.blocking, r.standing))
      .map((r) => `${r.kind} ${r.id}`),
  );
  const others = p.inventory.blockers
    .filter((b) => b.resource === null || !counted.has(`${b.resource.kind} ${b.resource.id}`))
    .map((b) => `${b.ruleId} (${b.subject.kind} ${b.subject.id})`);
  return `not ready: ${[...standings, ...others].join(', ')}`;
}

/** What every JSON view says first of a node: which, when, whether read whole, and its verdict. */
export const nodeHeaderOf = (n: Premigration) => ({
  host: n.host,
  takenAt: n.takenAt,
  complete: n.complete,
  ready: n.complete && n.inventory.ready,
  verdict: verdictOf(n),
});

/** `3 containers, 1 file, 0 ledger entries`: what a scope left out of a node's check. */
export const excludedText = (e: Excluded): string =>
  `${e.containers} container${e.containers === 1 ? '' : 's'}, ${e.files} file${e.files === 1 ? '' : 's'}, ` +
  `${e.ledger} ledger ${e.ledger === 1 ? 'entry' : 'entries'}` +
  (e.listeners > 0 ? `, ${e.listeners} listener${e.listeners === 1 ? '' : 's'}` : '');

export interface PremigrationReport {
  report: Report;
  nodes: Premigration[];
}
