import { parseJsonInput, readInput } from '../read-input.js';
import { validatorFor } from '../validate.js';
import { MeshAuditError } from '../errors.js';
import { snapshotSchema } from './schema.js';
import type { Snapshot } from './types.js';

const validateSnapshot = validatorFor<Snapshot>('snapshot', snapshotSchema);

/** Checks parsed JSON against `mesh-audit/snapshot@1`; the error names the JSON path of the first problems. */
export function parseSnapshot(json: unknown, source: string): Snapshot {
  if (validateSnapshot(json)) return json;
  const errors = (validateSnapshot.errors ?? []).slice(0, 5).map((e) => {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params['additionalProperty'])}'` : '';
    // A shape that is not one shapeOf makes may be a raw value: say so without quoting it or the pattern.
    const message = e.keyword === 'pattern' && where.endsWith('/shape') ? "is not a value's shape (a snapshot holds shapes and digests, never values)" : (e.message ?? 'invalid');
    return `  at ${where}: ${message}${extra}`;
  });
  throw new MeshAuditError(`${source}: not a valid mesh-audit/snapshot@1\n${errors.join('\n')}`);
}

export async function loadSnapshot(path: string): Promise<Snapshot> {
  return parseSnapshot(parseJsonInput(await readInput(path, 'snapshot'), path, 'snapshot'), path);
}
