import { readPackageText } from '../paths.js';

/** The JSON Schema of the adoption plan, shipped beside the policy pack (operators' tools can check a plan with it). */
export async function readAdoptionPlanSchema(): Promise<object> {
  return JSON.parse(await readPackageText('policies/adoption-plan.schema.json')) as object;
}
