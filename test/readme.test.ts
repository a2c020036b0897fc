import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { packageFile } from '../src/paths.js';
import { loadShippedPacks } from '../src/policy/load.js';
import { fillBlocks, guideBlocks } from '../src/report/guide-blocks.js';

test('the catalogues in the guides agree with the shipped packs (fix: npm run docs)', async () => {
  const rules = (await loadShippedPacks()).flatMap((p) => p.rules);
  const guides = guideBlocks(rules);
  assert.equal([...guides.keys()].sort(), [
    'docs/hardening.md',
    'docs/rule-catalogue.md',
    'docs/subject-sets.md',
    'docs/writing-rules.md',
  ]);
  for (const [guide, blocks] of guides) {
    const text = readFileSync(packageFile(guide), 'utf8');
    assert.fixture(
      text,
      fillBlocks(guide, text, blocks),
      `${guide} is out of date: run \`npm run docs\` and commit it`,
    );
  }
});

test('the README gives the two set-up commands and the test command CI runs', () => {
  const readme = readFileSync(packageFile('README.md'), 'utf8');
  assert.match(readme, 'npm ci && npm start');
  assert.match(readme, 'npm test');
  const ci = readFileSync(packageFile('.ci', 'run'), 'utf8');
  assert.match(ci, 'npm ci');
  assert.match(ci, 'npm test');
});

test('the README stays a door: at most 400 lines, its manual in docs/', () => {
  const readme = readFileSync(packageFile('README.md'), 'utf8');
  assert.ok(readme.split('\n').length <= 400, `${readme.split('\n').length} lines`);
  assert.not.match(readme, '<!-- rules:start -->', 'the catalogues live in the guides');
});

test.run();
