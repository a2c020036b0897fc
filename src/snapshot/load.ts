import { readFile } from 'node:fs/promises';
import { ajvFor } from '../validate.js';
import { MeshAuditError } from '../errors.js';
import { snapshotSchema } from './schema.js';
import type { Snapshot } from './types.js';

const validateSnapshot = ajvFor().compile<Snapshot>(snapshotSchema);

/** Checks parsed JSON against `mesh-audit/snapshot@1`; the error names the JSON path of the first problems. */
export function parseSnapshot(json: unknown, source: string): Snapshot {
  if (validateSnapshot(json)) return json;
  const errors = (validateSnapshot.errors ?? []).slice(0, 5).map((e) => {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params['additionalProperty'])}'` : '';
    return `  at ${where}: ${e.message ?? 'invalid'}${extra}`;
  });
  throw new MeshAuditError(`${source}: not a valid mesh-audit/snapshot@1\n${errors.join('\n')}`);
}

export async function loadSnapshot(path: string): Promise<Snapshot> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new MeshAuditError(`${path}: cannot read snapshot (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new MeshAuditError(`${path}: not JSON (${(err as Error).message})`);
  }
  return parseSnapshot(json, path);
}
