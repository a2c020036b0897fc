import { pathTooDeep } from '../input/depth.js';
import { validatorFor } from '../input/validate.js';
import type { SafeValueMaker } from '../secret/value.js';
import { ledgerEntrySchema } from '../snapshot/ledger-schema.js';
import type { LedgerEntry, LedgerRecord } from '../snapshot/types.js';

const KNOWN_FIELDS = Object.keys(ledgerEntrySchema.properties);
const validateEntry = validatorFor('ledgerEntry', ledgerEntrySchema);

/**
 * One raw ledger entry -> the record a snapshot keeps. Valid or not, it is kept (a bad entry becomes
 * a finding, the good ones are used); fields the scanner does not know keep their strings secret-safe.
 */
export function ledgerRecord(raw: unknown, line: number, safe: SafeValueMaker): LedgerRecord {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      line,
      valid: false,
      errors: [
        `an entry must be an object, not ${Array.isArray(raw) ? 'an array' : raw === null ? 'null' : typeof raw}`,
      ],
      entry: {},
    };
  }
  const obj = raw as Record<string, unknown>;
  const valid = validateEntry(obj);
  const errors = valid
    ? []
    : (validateEntry.errors ?? [])
        .filter((e) => e.keyword !== 'if')
        .map((e) => `${e.instancePath.slice(1) || 'entry'} ${e.message ?? 'is invalid'}`);
  // Keep each known field only when it has the right shape, so an invalid entry still shows its id. The
  // schema checks each field on its own, so every field of a valid entry has its shape: probed only when invalid.
  const type = typeof obj['type'] === 'string' && obj['type'] !== '' ? obj['type'] : 'x';
  const probe = (field: string, value: unknown): boolean =>
    valid || validateEntry({ id: 'x', type, target: '/x', [field]: value });
  const entry: Partial<LedgerEntry> = {};
  for (const field of KNOWN_FIELDS) {
    // A null (`applied_at: null`) says "none": kept as an absent field.
    if (Object.hasOwn(obj, field) && obj[field] !== null && probe(field, obj[field]))
      (entry as Record<string, unknown>)[field] = obj[field];
  }
  // `env` as a map of key to value (what the host gave): the names are the declaration; no value is kept.
  if (entry.env !== undefined && !Array.isArray(entry.env)) entry.env = Object.keys(entry.env).sort();
  // A field nested deeper than any ledger needs is not kept: walking or writing it would overflow the
  // stack (secretSafe, JSON.stringify of the snapshot, schema checks), and the scan would report nothing.
  const extra = Object.keys(obj)
    .filter((k) => !KNOWN_FIELDS.includes(k))
    .sort();
  const tooDeep = extra.filter((k) => pathTooDeep(obj[k], MAX_EXTRA_DEPTH) !== null);
  for (const k of tooDeep)
    errors.push(`extra field ${JSON.stringify(k)} is nested more than ${MAX_EXTRA_DEPTH} levels deep: not kept`);
  const kept = extra.filter((k) => !tooDeep.includes(k));
  if (kept.length > 0) entry.extra = Object.fromEntries(kept.map((k) => [k, secretSafe(obj[k], safe)]));
  return { line, valid: valid && tooDeep.length === 0, errors, entry };
}

/** How deep a field beyond the known ones may nest (arrays and objects) and still be kept. */
export const MAX_EXTRA_DEPTH = 32;

/** Strings anywhere inside become {digest, shape}; numbers, booleans and null are kept. */
export function secretSafe(value: unknown, safe: SafeValueMaker): unknown {
  if (typeof value === 'string') return safe(value);
  if (Array.isArray(value)) return value.map((v) => secretSafe(v, safe));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, secretSafe(v, safe)]));
  }
  return value;
}
