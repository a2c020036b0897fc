import { configSchema } from '../config.js';
import { readCasesSchema } from '../policy/cases-file.js';
import { readPolicySchema } from '../policy/load.js';
import { readAdoptionPlanSchema } from '../premigrate/plan-schema.js';
import { reportSchema } from '../report/report-file.js';
import { waiversSchema } from '../report/waivers-file.js';
import { ledgerEntrySchema } from '../snapshot/ledger-schema.js';
import { historyIndexSchema } from '../snapshot/history-index.js';
import { snapshotSchema, snapshotSchemaV1 } from '../snapshot/schema.js';
import type { SchemaName } from './validate.js';

/** Every JSON Schema mesh-audit checks input against, by name (what the build precompiles). */
export async function allSchemas(): Promise<Record<SchemaName, object>> {
  return {
    snapshot: snapshotSchema,
    snapshotV1: snapshotSchemaV1,
    config: configSchema,
    report: reportSchema,
    waivers: waiversSchema,
    ledgerEntry: ledgerEntrySchema,
    policy: await readPolicySchema(),
    cases: await readCasesSchema(),
    adoptionPlan: await readAdoptionPlanSchema(),
    historyIndex: historyIndexSchema,
  };
}
