import { validatorFor } from '../../input/validate.js';
import { nodeHeaderOf, type PremigrationReport } from './model.js';

/** The adoption plan's format; policies/adoption-plan.schema.json says it field by field. */
export const ADOPTION_PLAN_SCHEMA = 'mesh-audit/adoption-plan@3';

/** The adoption plan of every node, as the JSON `premigrate --plan FILE` writes (pure). */
export function adoptionPlanOf(p: PremigrationReport): object {
  return {
    schemaVersion: ADOPTION_PLAN_SCHEMA,
    tool: p.report.tool,
    generatedAt: p.report.generatedAt,
    nodes: p.nodes.map((n) => ({ ...nodeHeaderOf(n), ...n.plan })),
  };
}

/**
 * The plan as JSON, checked against its shipped schema first: a plan that does not say what its
 * schema says is a bug, and is not written.
 */
export function renderAdoptionPlan(p: PremigrationReport, schema: object): string {
  const plan = adoptionPlanOf(p);
  const check = validatorFor('adoptionPlan', schema);
  if (!check(plan)) {
    throw new Error(
      'the adoption plan does not match its schema: ' +
        (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; '),
    );
  }
  return `${JSON.stringify(plan, null, 2)}\n`;
}
