import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';

const require = createRequire(import.meta.url);

/**
 * Checks a document against one of the schemas published under policies/ (`report.schema.json`, …), or against one of
 * its definitions (`def`: `rule` is `#/$defs/rule`), compiled here with Ajv itself, strict, so that the schema a user
 * reads is the one the outputs are held to.
 */
export function publishedSchemaErrors(file: string, doc: unknown, def?: string): string[] {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats.default(ajv);
  const schema = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'policies', file), 'utf8')) as { $id: string };
  ajv.addSchema(schema);
  const validate = ajv.getSchema(def === undefined ? schema.$id : `${schema.$id}#/$defs/${def}`)!;
  return validate(doc)
    ? []
    : (validate.errors ?? []).map(
        (e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
      );
}
