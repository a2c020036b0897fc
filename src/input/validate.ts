import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { EMBEDDED } from '../runtime/embedded.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';

/** Every JSON Schema mesh-audit checks input against, by the name its precompiled validator has. */
export type SchemaName =
  | 'snapshot'
  | 'snapshotV1'
  | 'config'
  | 'report'
  | 'waivers'
  | 'ledgerEntry'
  | 'policy'
  | 'cases'
  | 'adoptionPlan'
  | 'historyIndex';

/** Where `npm run build` writes the validators compiled ahead (scripts/precompile.ts). */
export const GENERATED_VALIDATORS = '../generated/validators.cjs';

interface GeneratedValidators {
  fingerprints: Partial<Record<SchemaName, string>>;
  /** Each validator's module is loaded when first asked for (a command needs two or three of six). */
  validators: Partial<Record<SchemaName, ValidateFunction>>;
}

/** A check of data against one schema; after a failed check, `errors` says why (Ajv's errors). */
export interface Validator<T> {
  (data: unknown): data is T;
  errors: ErrorObject[] | null;
}

const require = createRequire(import.meta.url);
let generated: GeneratedValidators | null | undefined;

/** The same schema gives the same fingerprint: a validator compiled from another version is never used. */
export function schemaFingerprint(schema: object): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

/** One Ajv set-up for every schema of mesh-audit: all errors, formats checked, no coercion. */
export function ajvFor(options: { source?: boolean } = {}): Ajv2020 {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  // Patterns without the `u` flag: all of ours are ASCII, and the digest patterns, tried on every env
  // value of every snapshot, ran twice as fast.
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    unicodeRegExp: false,
    ...(options.source ? { code: { source: true } } : {}),
  });
  addFormats.default(ajv);
  return ajv;
}

/**
 * The validator of `schema`: the one compiled at build time when it was compiled from this very
 * schema, else compiled now. Compiling the schemas took ~170 ms of every start (Ajv generates and
 * evals code); the precompiled module loads in a few ms, and Ajv itself is then never loaded.
 */
export function validatorFor<T = unknown>(name: SchemaName, schema: object): Validator<T> {
  // Made on first use, not at import: modules declare their validators at the top, and most
  // commands never check most schemas.
  let real: ValidateFunction<T> | undefined;
  const check = ((data: unknown): data is T => {
    real ??= isPrecompiled(name, schema)
      ? (generated!.validators[name] as ValidateFunction<T>)
      : ajvFor().compile<T>(schema);
    const ok = real(data);
    check.errors = real.errors ?? null;
    return ok;
  }) as Validator<T>;
  check.errors = null;
  return check;
}

/** Whether `schema` would be checked by the validator compiled at build time (tests, bench). */
export function isPrecompiled(name: SchemaName, schema: object): boolean {
  generated ??= loadGenerated();
  return generated?.validators[name] !== undefined && generated.fingerprints[name] === schemaFingerprint(schema);
}

function loadGenerated(): GeneratedValidators | null {
  if (EMBEDDED) return EMBEDDED.validators;
  try {
    // GENERATED_VALIDATORS written out: a bundler includes only what a literal require names (dist/program).
    return require('../generated/validators.cjs') as GeneratedValidators;
  } catch {
    return null; // not built (tsc alone): every schema is compiled when first used
  }
}
