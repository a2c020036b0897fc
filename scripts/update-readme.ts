/**
 * Regenerates the README's rule, operator and subject catalogues from the packs, and the pack schema's
 * list of subject sets from the registry (src/policy/sets.ts): `npm run docs`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { packageFile } from '../src/paths.js';
import { loadPolicies } from '../src/policy/load.js';
import { schemaTextWithSubjectSets } from '../src/policy/pack-schema.js';
import { fillReadme, readmeBlocks } from '../src/report/readme-blocks.js';

const file = packageFile('README.md');
const rules = (await loadPolicies()).flatMap((p) => p.rules);
writeFileSync(file, fillReadme(readFileSync(file, 'utf8'), readmeBlocks(rules)));
console.log(`updated ${file}`);

const schemaFile = packageFile('policies', 'policy.schema.json');
writeFileSync(schemaFile, schemaTextWithSubjectSets(readFileSync(schemaFile, 'utf8')));
console.log(`updated ${schemaFile}`);
