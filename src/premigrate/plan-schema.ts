import { readFile } from 'node:fs/promises';
import { packageFile } from '../paths.js';

/** The JSON Schema of the adoption plan, shipped beside the policy pack (operators' tools can check a plan with it). */
export const ADOPTION_PLAN_SCHEMA_FILE = packageFile('policies', 'adoption-plan.schema.json');

export async function readAdoptionPlanSchema(): Promise<object> {
  return JSON.parse(await readFile(ADOPTION_PLAN_SCHEMA_FILE, 'utf8')) as object;
}
