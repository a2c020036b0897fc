/** Regenerates the README's rule, operator and subject catalogues from the packs: `npm run docs`. */
import { readFileSync, writeFileSync } from 'node:fs';
import { packageFile } from '../src/paths.js';
import { loadPolicies } from '../src/policy/load.js';
import { fillReadme, readmeBlocks } from '../src/report/readme-blocks.js';

const file = packageFile('README.md');
const rules = (await loadPolicies()).flatMap((p) => p.rules);
writeFileSync(file, fillReadme(readFileSync(file, 'utf8'), readmeBlocks(rules)));
console.log(`updated ${file}`);
