import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ledgerEntrySchema } from '../../src/collect/ledger-entries.js';
import { configSchema } from '../../src/config.js';
import { readPolicySchema } from '../../src/policy/load.js';
import { reportSchema } from '../../src/report/report-file.js';
import { waiversSchema } from '../../src/report/waivers-file.js';
import { snapshotSchema } from '../../src/snapshot/schema.js';
import { isPrecompiled, validatorFor, type SchemaName } from '../../src/validate.js';

test('npm run build precompiles every schema from its current text (no command compiles one at start)', async () => {
  const schemas: Record<SchemaName, object> = {
    snapshot: snapshotSchema,
    config: configSchema,
    report: reportSchema,
    waivers: waiversSchema,
    ledgerEntry: ledgerEntrySchema,
    policy: await readPolicySchema(),
  };
  for (const [name, schema] of Object.entries(schemas) as [SchemaName, object][]) {
    assert.ok(isPrecompiled(name, schema), `${name}: the build's validator is missing or was compiled from another version of the schema`);
  }
});

test('a schema that differs from the precompiled one is compiled now, and its own rules apply', () => {
  const stricter = { ...configSchema, required: ['ledger'] };
  assert.not.ok(isPrecompiled('config', stricter));
  const check = validatorFor('config', stricter);
  assert.not.ok(check({}), 'the changed schema requires ledger');
  assert.ok(validatorFor('config', configSchema)({}), 'the shipped one does not');
  assert.ok(check({ ledger: '/var/lib/mesh/ledger.json' }));
});

test.run();
