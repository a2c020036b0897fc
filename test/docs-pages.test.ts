/*
 * The pages under docs/ (one per shipped rule, one per subject set) are what `npm run docs` makes from
 * the packs, their cases and the field docs: none stale, none missing, none left over; and
 * `mesh-audit rules docs` prints the same tables as the pages.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { packageFile } from '../src/paths.js';
import { HARDENING_PACK_ID, loadShippedPacks } from '../src/policy/load.js';
import { SUBJECT_SET_NAMES } from '../src/policy/sets.js';
import { helpUriOf } from '../src/report/rule-docs.js';
import { WAIVER_EXPIRED_RULE } from '../src/report/waivers.js';
import { DEFAULT_DOCS_URL } from '../src/version.js';
import { DOCS_FOLDER, shippedDocPages } from '../scripts/docs-pages.js';
import { runCli } from './support/cli.js';

const FIX = 'run `npm run docs` and commit docs/';
const docs = (...parts: string[]) => packageFile(DOCS_FOLDER, ...parts);
const onDisk = (folder: string): string[] =>
  existsSync(docs(folder)) ? readdirSync(docs(folder)).map((n) => `${folder}/${n}`) : [];

test('every page under docs/ is what `npm run docs` makes now: none stale, none missing, none left over', async () => {
  const pages = await shippedDocPages();
  for (const [path, text] of pages) {
    assert.ok(existsSync(docs(path)), `docs/${path} is missing: ${FIX}`);
    assert.fixture(readFileSync(docs(path), 'utf8'), text, `docs/${path} is out of date: ${FIX}`);
  }
  const extra = [...onDisk('rules'), ...onDisk('subjects')].filter((p) => !pages.has(p));
  assert.equal(extra, [], `pages nothing makes any more (a rule or set that is gone): ${FIX}`);
});

test('each shipped rule, the built-in one too, and each subject set has its page; a shipped rule links to its own', async () => {
  const pages = await shippedDocPages();
  const rules = [...(await loadShippedPacks()).flatMap((p) => p.rules), WAIVER_EXPIRED_RULE];
  assert.ok(rules.length > 10);
  for (const rule of rules) {
    assert.ok(pages.has(`rules/${rule.id}.md`), rule.id);
    assert.is(helpUriOf(rule, DEFAULT_DOCS_URL), `${DEFAULT_DOCS_URL}/rules/${rule.id}.md`);
  }
  for (const set of SUBJECT_SET_NAMES) assert.ok(pages.has(`subjects/${set}.md`), set);
});

test("a rule's page has its help, remediation, facts read, and its cases with the finding each failing one gives", () => {
  const page = readFileSync(docs('rules', 'MA1001.md'), 'utf8');
  const cases = readFileSync(packageFile('policies', 'mesh-core', 'MA1-drift.cases.yaml'), 'utf8');
  assert.match(page, '# MA1001 `container-env-matches-composed-file`');
  assert.match(page, '## Remediation\n\nRecreate the container from the current file (restarting is not enough');
  assert.match(page, '| `readings.compose` |');
  assert.match(page, '| Subject | [`container_sources`](../subjects/container_sources.md)');
  // A failing case of the cases file, with the message the rule gives on it (the key, never a value).
  assert.match(cases, 'one key rewritten after the container was created (045)');
  assert.match(
    page,
    '- **one key rewritten after the container was created (045)**\n  - error: `gitea holds DATABASE_URL=',
  );
  const fails = page.slice(page.indexOf('## Fails on'), page.indexOf('## Passes on'));
  const passes = page.slice(page.indexOf('## Passes on'));
  assert.match(fails, 'a key the file gained that the container never got');
  assert.match(passes, 'the container holds what the file says');
  assert.not.match(passes, 'the container never got');
});

test('`mesh-audit rules docs` prints each set with the field table of its page, and links each rule to its page', async () => {
  const r = await runCli(['rules', 'docs']);
  assert.is(r.code, 0, r.stderr);
  for (const set of SUBJECT_SET_NAMES) {
    const page = readFileSync(docs('subjects', `${set}.md`), 'utf8');
    const table = page.slice(page.indexOf('| field |'), page.indexOf('## Rules over it')).trimEnd();
    assert.ok(table.split('\n').length > 3, set);
    assert.match(r.stdout, `**\`${set}\`**\n\n${table}\n`);
  }
  // The hardening pack's rules are listed for their profile alone (`rules docs --profile hardening`).
  const hardening = await runCli(['rules', 'docs', '--profile', 'hardening']);
  assert.is(hardening.code, 0, hardening.stderr);
  for (const rule of (await loadShippedPacks()).flatMap((p) => p.rules)) {
    const out = rule.pack === HARDENING_PACK_ID ? hardening.stdout : r.stdout;
    assert.match(out, `| [${rule.id}](${DEFAULT_DOCS_URL}/rules/${rule.id}.md) | \`${rule.name}\` |`);
  }
});

test.run();
