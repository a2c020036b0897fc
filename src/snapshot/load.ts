import { MAX_SNAPSHOT_DEPTH } from '../input/depth.js';
import { parseJsonInput } from '../input/json.js';
import { readInput } from '../input/read.js';
import { validatorFor } from '../input/validate.js';
import { MeshAuditError } from '../errors.js';
import { shown } from '../shown.js';
import { SHAPE_PATTERN } from '../secret/value.js';
import { migrateV1, type SnapshotV1 } from './migrate.js';
import { snapshotSchema, snapshotSchemaV1 } from './schema.js';
import { SNAPSHOT_SCHEMA, SNAPSHOT_SCHEMA_V1, type Snapshot } from './types.js';

const validateSnapshot = validatorFor<Snapshot>('snapshot', snapshotSchema);
const validateSnapshotV1 = validatorFor<SnapshotV1>('snapshotV1', snapshotSchemaV1);

const schemaOf = (json: unknown): unknown =>
  typeof json === 'object' && json !== null ? (json as { schema?: unknown }).schema : undefined;

/**
 * Checks parsed JSON against the snapshot layout it names — `mesh-audit/snapshot@2`, or @1 which is
 * then migrated (migrate.ts) — and gives it as @2; the error names the JSON path of the first problems.
 */
export function parseSnapshot(json: unknown, source: string): Snapshot {
  const v1 = schemaOf(json) === SNAPSHOT_SCHEMA_V1;
  const layout = v1 ? SNAPSHOT_SCHEMA_V1 : SNAPSHOT_SCHEMA;
  const validate = v1 ? validateSnapshotV1 : validateSnapshot;
  if (validate(json)) {
    const raw = rawStringIn(json);
    if (raw === null) return v1 ? migrateV1(json as SnapshotV1) : (json as Snapshot);
    throw new MeshAuditError(
      `${source}: not a valid ${layout}\n  at ${raw}: is not a value's digest and shape (a snapshot ` +
        `holds those, never values)`,
    );
  }
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => {
    // The path and a stray key are the snapshot's own text (a host's names): shown, never printed raw.
    const where = e.instancePath === '' ? '(root)' : shown(e.instancePath);
    const extra = e.keyword === 'additionalProperties' ? ` '${shown(String(e.params['additionalProperty']))}'` : '';
    // A shape that is not one shapeOf makes may be a raw value: say so without quoting it or the pattern.
    const message =
      e.keyword === 'pattern' && where.endsWith('/shape')
        ? "is not a value's shape (a snapshot holds shapes and digests, never values)"
        : (e.message ?? 'invalid');
    return `  at ${where}: ${message}${extra}`;
  });
  throw new MeshAuditError(`${source}: not a valid ${layout}\n${errors.join('\n')}`);
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
function rawStringIn(snapshot: Pick<Snapshot, 'ledger'>): string | null {
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
  return parseSnapshot(parseJsonInput(await readInput(path, 'snapshot'), path, 'snapshot', MAX_SNAPSHOT_DEPTH), path);
}
