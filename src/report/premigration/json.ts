import { allFindings } from '../report.js';
import { PREMIGRATION_SCHEMA, nodeHeaderOf, type PremigrationReport } from './model.js';

export function renderPremigrationJson(p: PremigrationReport): string {
  return (
    JSON.stringify(
      {
        schemaVersion: PREMIGRATION_SCHEMA,
        tool: p.report.tool,
        generatedAt: p.report.generatedAt,
        ...(p.report.policy ? { policy: p.report.policy } : {}),
        nodes: p.nodes.map((n) => ({
          ...nodeHeaderOf(n),
          blocking: n.inventory.blocking,
          blockers: n.inventory.blockers,
          inventory: n.inventory.rows,
          ports: n.inventory.ports,
          plan: n.plan,
          notChecked: n.notChecked,
          ...(n.excluded ? { excluded: n.excluded } : {}),
        })),
        findings: allFindings(p.report),
      },
      null,
      2,
    ) + '\n'
  );
}
