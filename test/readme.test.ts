import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { packageFile } from '../src/paths.js';
import { loadShippedPacks } from '../src/policy/load.js';
import { fillReadme, readmeBlocks } from '../src/report/readme-blocks.js';

test('the README catalogues agree with the shipped pack (fix: npm run docs)', async () => {
  const readme = readFileSync(packageFile('README.md'), 'utf8');
  const rules = (await loadShippedPacks()).flatMap((p) => p.rules);
  assert.fixture(
    readme,
    fillReadme(readme, readmeBlocks(rules)),
    'README is out of date: run `npm run docs` and commit README.md',
  );
});

test('the README gives the two set-up commands and the test command CI runs', () => {
  const readme = readFileSync(packageFile('README.md'), 'utf8');
  assert.match(readme, 'npm ci && npm start');
  assert.match(readme, 'npm test');
  const ci = readFileSync(packageFile('.ci', 'run'), 'utf8');
  assert.match(ci, 'npm ci');
  assert.match(ci, 'npm test');
});

test.run();
