import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configSchema } from '../../src/config.js';
import { allSchemas } from '../../src/input/schemas.js';
import { isPrecompiled, validatorFor, type SchemaName } from '../../src/input/validate.js';

test('npm run build precompiles every schema from its current text (no command compiles one at start)', async () => {
  const schemas = await allSchemas();
  for (const [name, schema] of Object.entries(schemas) as [SchemaName, object][]) {
    assert.ok(
      isPrecompiled(name, schema),
      `${name}: the build's validator is missing or was compiled from another version of the schema`,
    );
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
