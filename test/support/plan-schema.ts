import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';

const require = createRequire(import.meta.url);

/** Checks a plan against the shipped schema, compiled here with Ajv itself (not through the product's validator). */
export function planSchemaErrors(plan: unknown): string[] {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats.default(ajv);
  const validate = ajv.compile(
    JSON.parse(readFileSync(join(PACKAGE_ROOT, 'policies', 'adoption-plan.schema.json'), 'utf8')) as object,
  );
  return validate(plan) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}

/** One node of an adoption plan, as far as tests read it. */
export interface PlanNode {
  ready: boolean;
  verdict: string;
  record: {
    entry: {
      id: string;
      type: string;
      target: string;
      origin: string;
      holds?: number[];
      digest?: string;
      applied_at: null;
    };
    severity: string | null;
    findings: { ruleId: string; severity: string }[];
    exposure: string | null;
    exposedEndpoints: string[];
    warning: string | null;
  }[];
  remove: {
    kind: string;
    target: string;
    command: string;
    standing: string;
    reason: string[];
    evidence: Record<string, unknown>;
  }[];
  recreate: { container: string; module: string | null; entries: string[]; reason: string[] }[];
  resolve: { target: string; entries: string[] }[];
  review: { ruleId: string; subject: string }[];
  notes: string[];
}
