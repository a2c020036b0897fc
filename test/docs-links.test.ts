/*
 * The manual's links hold: every relative link and `#anchor` in README.md and docs/**.md leads to a file
 * that exists and a heading GitHub makes that anchor for; the guides are listed, in one order, by the
 * README and docs/README.md; and the README section the alerts link to (src/report/alerts.ts) is there.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT, packageFile } from '../src/paths.js';
import { brokenLinks, headingAnchors, markdownFilesUnder } from './support/doc-links.js';
import { tempDir } from './support/cli.js';

const MANUAL = ['README.md', ...markdownFilesUnder(PACKAGE_ROOT, 'docs')];

test('every relative link and anchor in README.md and docs/ resolves', () => {
  assert.ok(MANUAL.length > 20, MANUAL.join(', '));
  const broken = brokenLinks(PACKAGE_ROOT, MANUAL).map((b) => `${b.file}:${b.line}: ${b.target}: ${b.why}`);
  assert.equal(broken, []);
});

test('the checker finds a missing file, a missing anchor and a missing anchor of the same page; not links in code', () => {
  const root = tempDir();
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'docs', 'guide.md'), '# A guide\n\n## Env files: what each consumer reads\n\ntext\n');
  writeFileSync(
    join(root, 'README.md'),
    [
      '# Top',
      '',
      '[ok](docs/guide.md#env-files-what-each-consumer-reads) [ok](#top) [ok](docs/) [web](https://example.org/#x)',
      '',
      '[gone](docs/gone.md) [bad anchor](docs/guide.md#env-files) [bad own anchor](#nowhere)',
      '',
      '`[in code](docs/gone.md)`',
      '',
      '```',
      '[in a block](docs/gone.md)',
      '```',
      '',
    ].join('\n'),
  );
  const broken = brokenLinks(root, ['README.md', 'docs/guide.md']);
  assert.equal(
    broken.map((b) => `${b.line} ${b.target}`),
    ['5 docs/gone.md', '5 docs/guide.md#env-files', '5 #nowhere'],
  );
});

test('headings get the anchors GitHub gives them: code and punctuation dropped, a repeated heading numbered', () => {
  assert.equal(
    [...headingAnchors('# Hardening (CIS Docker)\n## `rules docs` and more\n## Usage\n## Usage\n')],
    ['hardening-cis-docker', 'rules-docs-and-more', 'usage', 'usage-1'],
  );
});

test('the README and docs/README.md list every guide, in the same order', () => {
  const guides = markdownFilesUnder(PACKAGE_ROOT, 'docs')
    .filter((f) => !f.includes('/rules/') && !f.includes('/subjects/') && f !== join('docs', 'README.md'))
    .map((f) => f.slice('docs/'.length));
  const listed = (text: string, prefix: string) =>
    [...text.matchAll(/^\d+\. \[[^\]]+\]\(([^)#]+)\)/gm)].map((m) => m[1]!.slice(prefix.length));
  const inReadme = listed(readFileSync(packageFile('README.md'), 'utf8'), 'docs/');
  const inIndex = listed(readFileSync(packageFile('docs', 'README.md'), 'utf8'), '');
  assert.equal([...inReadme].sort(), [...guides].sort(), 'the README lists every guide once');
  assert.equal(inIndex, inReadme, 'docs/README.md lists them in the README order');
});

test('the README has the section the incomplete-scan alert links to (runbook_url)', () => {
  const alerts = readFileSync(packageFile('src', 'report', 'alerts.ts'), 'utf8');
  const anchors = [...alerts.matchAll(/runbook_url: `\$\{report\.tool\.uri\}#([a-z0-9-]+)`/g)].map((m) => m[1]!);
  assert.ok(anchors.length > 0, 'alerts.ts links into the README');
  const readme = headingAnchors(readFileSync(packageFile('README.md'), 'utf8'));
  for (const anchor of anchors) assert.ok(readme.has(anchor), `README has no #${anchor}`);
});

test.run();
