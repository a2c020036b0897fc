import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSnapshot } from '../src/snapshot/load.js';
import { NOT_IN_V1 } from '../src/snapshot/migrate.js';
import { SNAPSHOT_SCHEMA } from '../src/snapshot/types.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, runCli } from './support/cli.js';
import { HostModel } from './support/host-model.js';

/*
 * Snapshot v2 reads v1 (issue 25): a history written before the bump goes on remembering. The fixture
 * is a checked-in `mesh-audit/snapshot@1` history file of the 097 host taken after the move, whose
 * memory alone knows the former targets (the snapshot that saw them claimed is not given).
 */
const HISTORY_V1 = join(PACKAGE_ROOT, 'test', 'fixtures', 'legacy', 'history-v1');
const V1_FILE = join(HISTORY_V1, 'snapshot-000041-20260923T090000Z.json');

test('a snapshot@1 is read as @2: what v1 did not record is unknown with why, what it held is kept', () => {
  const raw = JSON.parse(readFileSync(V1_FILE, 'utf8')) as { schema: string; memory: unknown };
  assert.is(raw.schema, 'mesh-audit/snapshot@1');
  const migrated = parseSnapshot(raw, V1_FILE);
  assert.is(migrated.schema, SNAPSHOT_SCHEMA);
  assert.equal(migrated.images, { available: false, reason: NOT_IN_V1 });
  assert.equal(migrated.daemon.info, { available: false, reason: NOT_IN_V1 });
  assert.equal(migrated.daemon.config, { available: false, reason: NOT_IN_V1 });
  assert.equal(migrated.daemon.process, { available: false, reason: NOT_IN_V1 });
  assert.ok(migrated.containers.every((c) => c.runtime === undefined));
  assert.equal(migrated.memory, raw.memory);
});

test('a v1 layout holding a v2 field is refused, and so is a v2 one missing one (each checked by its own layout)', () => {
  const raw = JSON.parse(readFileSync(V1_FILE, 'utf8')) as Record<string, unknown>;
  assert.throws(
    () => parseSnapshot({ ...raw, images: { available: false, reason: 'x' } }, 'v1-with-images'),
    /not a valid mesh-audit\/snapshot@1\n {2}at \(root\): must NOT have additional properties 'images'/,
  );
  assert.throws(
    () => parseSnapshot({ ...raw, schema: SNAPSHOT_SCHEMA }, 'v2-without-images'),
    /not a valid mesh-audit\/snapshot@2\n {2}at \(root\): must have required property 'images'/,
  );
});

test('a live snapshot is @2 and is read back as it was written', () => {
  const snapshot = new HostModel('node-1', '2026-10-01T03:00:00Z')
    .container({ name: 'web', hostConfig: { Privileged: true, CapAdd: ['CAP_NET_ADMIN'] } })
    .build();
  const back = parseSnapshot(JSON.parse(JSON.stringify(snapshot)), 'saved');
  assert.equal(back, snapshot);
  assert.is(back.containers[0]!.runtime?.privileged, true);
  assert.equal(back.containers[0]!.runtime?.capAdd, ['NET_ADMIN']);
});

test('a v1 history file alone keeps the former targets its memory holds (097: durable memory across the bump)', async () => {
  const withV1 = await runCli([
    'evaluate',
    example('097', 'snapshot.json'),
    '--history',
    HISTORY_V1,
    '--format',
    'text',
    '--out',
    '-',
  ]);
  assert.is(withV1.code, 1, withV1.stderr);
  assert.match(
    withV1.stdout,
    'forge.server moved from forge-forge.server to gitea on 2026-09-23T08:12:00Z; forge-forge.server is still present (running)',
  );
  assert.match(
    withV1.stdout,
    'forge.config moved from /etc/mesh/forge/app.ini to /etc/mesh/forge/conf/app.ini on 2026-09-23T08:12:00Z',
  );
  // Without it, nothing remembers them: the history is what carries them.
  const without = await runCli(['evaluate', example('097', 'snapshot.json'), '--format', 'text', '--out', '-']);
  assert.not.match(without.stdout, 'MA2003');
  assert.not.match(without.stdout, 'MA2002');
});

test.run();
