/**
 * `npm run docs`: regenerates the catalogues in the guides under docs/, the pack schema's list of subject sets (from the
 * registry, src/policy/sets.ts) and the pages under docs/ (one per shipped rule, one per subject set),
 * and removes a page nothing makes any more.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageFile } from '../src/paths.js';
import { loadShippedPacks } from '../src/policy/load.js';
import { schemaTextWithSubjectSets } from '../src/policy/pack-schema.js';
import { fillBlocks, guideBlocks } from '../src/report/guide-blocks.js';
import { DOCS_FOLDER, shippedDocPages } from './docs-pages.js';

const rules = (await loadShippedPacks()).flatMap((p) => p.rules);
for (const [guide, blocks] of guideBlocks(rules)) {
  const file = packageFile(guide);
  writeFileSync(file, fillBlocks(guide, readFileSync(file, 'utf8'), blocks));
  console.log(`updated ${file}`);
}

const schemaFile = packageFile('policies', 'policy.schema.json');
writeFileSync(schemaFile, schemaTextWithSubjectSets(readFileSync(schemaFile, 'utf8')));
console.log(`updated ${schemaFile}`);

const pages = await shippedDocPages();
const root = packageFile(DOCS_FOLDER);
for (const [path, text] of pages) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}
// A page of a rule or set that is gone: test/docs-pages.test.ts refuses it (old reports link to their tag's pages).
const stale = new Set(['rules', 'subjects'].flatMap((folder) => generatedPagesIn(root, folder)));
for (const path of pages.keys()) stale.delete(path);
for (const path of stale) rmSync(join(root, path));
console.log(`wrote ${pages.size} pages under ${root}${stale.size > 0 ? `, removed ${[...stale].join(', ')}` : ''}`);

function generatedPagesIn(base: string, folder: string): string[] {
  try {
    return readdirSync(join(base, folder))
      .filter((n) => n.endsWith('.md'))
      .map((n) => `${folder}/${n}`);
  } catch {
    return [];
  }
}
