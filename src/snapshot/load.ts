import { parseJsonInput } from '../input/json.js';
import { readInput } from '../input/read.js';
import { validatorFor } from '../validate.js';
import { MeshAuditError } from '../errors.js';
import { SHAPE_PATTERN } from '../secret/value.js';
import { snapshotSchema } from './schema.js';
import type { Snapshot } from './types.js';

const validateSnapshot = validatorFor<Snapshot>('snapshot', snapshotSchema);

/** Checks parsed JSON against `mesh-audit/snapshot@1`; the error names the JSON path of the first problems. */
export function parseSnapshot(json: unknown, source: string): Snapshot {
  if (validateSnapshot(json)) {
    const raw = rawStringIn(json);
    if (raw === null) return json;
    throw new MeshAuditError(
      `${source}: not a valid mesh-audit/snapshot@1\n  at ${raw}: is not a value's digest and shape (a snapshot ` +
        `holds those, never values)`,
    );
  }
  const errors = (validateSnapshot.errors ?? []).slice(0, 5).map((e) => {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params['additionalProperty'])}'` : '';
    // A shape that is not one shapeOf makes may be a raw value: say so without quoting it or the pattern.
    const message =
      e.keyword === 'pattern' && where.endsWith('/shape')
        ? "is not a value's shape (a snapshot holds shapes and digests, never values)"
        : (e.message ?? 'invalid');
    return `  at ${where}: ${message}${extra}`;
  });
  throw new MeshAuditError(`${source}: not a valid mesh-audit/snapshot@1\n${errors.join('\n')}`);
}

const SHAPE = new RegExp(SHAPE_PATTERN, 'u');
const DIGEST = /^hmac-sha256:[0-9a-f]{64}$/;

const isSafeValue = (v: object): v is { digest: string; shape: string } => {
  const keys = Object.keys(v);
  return (
    keys.length === 2 &&
    keys.includes('digest') &&
    keys.includes('shape') &&
    DIGEST.test(String((v as { digest: unknown }).digest))
  );
};

/**
 * The JSON path of a string in a ledger entry's unknown fields that is not a safe value (the collector
 * makes every string there one: src/collect/ledger-entries.ts, secretSafe), or of a shape there that is
 * no shape; null when there is none. Walked with a stack of its own, not recursion: a hand-made
 * snapshot may nest deeper than the call stack goes, and paths are made only for what is found.
 */
function rawStringIn(snapshot: Snapshot): string | null {
  /**
   * A value met on the walk, the key it is under, and the step it was found in (null: the extra itself, whose key is
   * its path).
   */
  interface Step {
    value: unknown;
    key: string;
    parent: Step | null;
  }
  const pathOf = (step: Step): string => {
    const keys: string[] = [];
    let s: Step = step;
    for (; s.parent !== null; s = s.parent) keys.push(s.key.replace(/~/g, '~0').replace(/\//g, '~1'));
    return [s.key, ...keys.reverse()].join('/');
  };
  const pending: Step[] = snapshot.ledger.entries.map((record, i) => ({
    value: record.entry.extra,
    key: `/ledger/entries/${i}/entry/extra`,
    parent: null,
  }));
  for (let step = pending.pop(); step !== undefined; step = pending.pop()) {
    const { value } = step;
    if (typeof value === 'string') return pathOf(step);
    if (value === null || typeof value !== 'object') continue;
    if (isSafeValue(value)) {
      if (typeof value.shape !== 'string' || !SHAPE.test(value.shape)) return `${pathOf(step)}/shape`;
      continue;
    }
    for (const [key, inner] of Object.entries(value)) pending.push({ value: inner, key, parent: step });
  }
  return null;
}

export async function loadSnapshot(path: string): Promise<Snapshot> {
  return parseSnapshot(parseJsonInput(await readInput(path, 'snapshot'), path, 'snapshot'), path);
}
