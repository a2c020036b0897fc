/*
 * The manual's example pack and its cases (docs/writing-rules.md, "A pack of your own"), taken from the guide as written and
 * run the way it tells a reader to: so the example cannot rot. Also what it says about links.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { packageFile } from '../src/paths.js';
import { DEFAULT_DOCS_URL, TOOL_URI } from '../src/version.js';
import { example, runCli, tempDir } from './support/cli.js';

const GUIDE = readFileSync(packageFile('docs', 'writing-rules.md'), 'utf8');
const CATALOGUE = readFileSync(packageFile('docs', 'rule-catalogue.md'), 'utf8');

/** The fenced block right after `<!-- example-pack:NAME -->`. */
function exampleFile(name: string): string {
  const m = new RegExp(
    `<!-- example-pack:${name.replace(/\./g, '\\.')} -->\\n\`\`\`yaml\\n([\\s\\S]*?)\\n\`\`\`\\n`,
  ).exec(GUIDE);
  assert.ok(m, `docs/writing-rules.md has no example-pack block ${name}`);
  return m[1]! + '\n';
}

function writeExample(): { dir: string; pack: string } {
  const dir = tempDir();
  for (const name of ['site.yaml', 'site.cases.yaml']) writeFileSync(join(dir, name), exampleFile(name));
  return { dir, pack: join(dir, 'site.yaml') };
}

interface SarifDoc {
  runs: { tool: { driver: { rules: { id: string; helpUri?: string }[] } }; results: { ruleId: string }[] }[];
}

test('the example pack of the guide passes its own cases with `rules test`, as the guide says, and lints clean', async () => {
  const { pack } = writeExample();
  const tested = await runCli(['rules', 'test', '--policy', pack]);
  assert.is(tested.code, 0, tested.stdout + tested.stderr);
  assert.match(tested.stdout, '3 passed, 0 failed');
  assert.match(GUIDE, 'mesh-audit rules test --policy site.yaml        # the cases of site.yaml; 3 passed, 0 failed');
  assert.not.match(tested.stdout, 'MA1001', 'only the pack named is tested');
  const linted = await runCli(['rules', 'lint', '--policy', pack]);
  assert.is(linted.code, 0, linted.stdout);
  const listed = await runCli(['rules', 'list', '--policy', pack]);
  assert.match(listed.stdout, /^SITE001 /m);
  assert.match(listed.stdout, /^MA1001 /m);
});

test('the example pack of the guide, added with --policy, reports beside the shipped rules, linked to its own helpUri', async () => {
  const { pack } = writeExample();
  const r = await runCli([
    'scan',
    '--snapshot',
    example('demo', 'snapshot.json'),
    '--policy',
    pack,
    '--out',
    '-',
    '--format',
    'sarif',
    '--fail-on',
    'none',
  ]);
  assert.is(r.code, 0, r.stderr);
  const run = (JSON.parse(r.stdout) as SarifDoc).runs[0]!;
  const ruleIds = new Set(run.results.map((x) => x.ruleId));
  assert.ok(ruleIds.has('SITE001') && ruleIds.has('MA1001'), [...ruleIds].join(', '));
  const helpUri = /^ {4}helpUri: (\S+)$/m.exec(exampleFile('site.yaml'))?.[1];
  assert.ok(helpUri !== undefined, 'the example pack shows helpUri');
  assert.is(run.tool.driver.rules.find((x) => x.id === 'SITE001')?.helpUri, helpUri);
  assert.is(run.tool.driver.rules.find((x) => x.id === 'MA1001')?.helpUri, `${DEFAULT_DOCS_URL}/rules/MA1001.md`);
});

test("a rule of one's own without helpUri gets no made-up link: none in SARIF, JSON Lines or alerts; text points at where it is written", async () => {
  const { dir } = writeExample();
  const pack = join(dir, 'nolink.yaml');
  writeFileSync(pack, exampleFile('site.yaml').replace(/^ {4}helpUri: .*\n/m, ''));
  const out = tempDir();
  const r = await runCli([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--policy',
    pack,
    '--out',
    out,
    '--format',
    'text,sarif,jsonl',
    '--fail-on',
    'none',
  ]);
  assert.is(r.code, 0, r.stderr);
  const sarif = JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8')) as SarifDoc;
  const rule = sarif.runs[0]!.tool.driver.rules.find((x) => x.id === 'SITE001');
  assert.ok(rule);
  assert.is(rule.helpUri, undefined);
  const lines = readFileSync(join(out, 'mesh-audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { ruleId?: string; helpUri?: string });
  assert.ok(lines.some((l) => l.ruleId === 'SITE001'));
  assert.ok(lines.filter((l) => l.ruleId === 'SITE001').every((l) => l.helpUri === undefined));
  assert.ok(
    lines.filter((l) => l.ruleId === 'MA1001').every((l) => l.helpUri === `${DEFAULT_DOCS_URL}/rules/MA1001.md`),
  );
  assert.match(
    r.stdout,
    `more: ${pack}:${
      exampleFile('site.yaml')
        .split('\n')
        .findIndex((l) => l.includes('id: SITE001')) + 1
    } (`,
  );
  assert.not.match(r.stdout, 'SITE001.md');
});

test("the shipped rules link to their page in the repository package.json names, at this version's tag", () => {
  const pkg = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as {
    version: string;
    repository?: { url?: string };
  };
  assert.is(pkg.repository?.url, `git+${TOOL_URI}.git`, 'TOOL_URI (src/version.ts) is the repository of package.json');
  assert.is(DEFAULT_DOCS_URL, `https://github.com/mesh-audit/mesh-audit/blob/v${pkg.version}/docs`);
  assert.ok(existsSync(packageFile('docs', 'rules', 'MA1001.md')), 'the page a link names is in docs/');
  assert.match(CATALOGUE, '| [MA1001](rules/MA1001.md) | `container-env-matches-composed-file` |');
});

test('docsUrl in the config file moves every shipped link (SARIF, JSON Lines, text, `rules docs`), not a custom helpUri', async () => {
  const { dir, pack } = writeExample();
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'docsUrl: https://wiki.example.org/mesh-audit/docs/\n');
  const out = tempDir();
  const r = await runCli([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--config',
    config,
    '--policy',
    pack,
    '--out',
    out,
    '--format',
    'text,sarif,jsonl',
    '--fail-on',
    'none',
  ]);
  assert.is(r.code, 0, r.stderr);
  const page = 'https://wiki.example.org/mesh-audit/docs/rules/MA1001.md';
  const rules = (JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8')) as SarifDoc).runs[0]!.tool.driver
    .rules;
  assert.is(rules.find((x) => x.id === 'MA1001')?.helpUri, page);
  assert.is(rules.find((x) => x.id === 'SITE001')?.helpUri, 'https://wiki.example.org/runbooks/container-owner');
  assert.match(readFileSync(join(out, 'mesh-audit.jsonl'), 'utf8'), `"helpUri":"${page}"`);
  assert.match(r.stdout, `more: ${page}`);
  assert.not.match(
    r.stdout + readFileSync(join(out, 'mesh-audit.sarif'), 'utf8'),
    'github.com/mesh-audit/mesh-audit/blob',
  );
  const docs = await runCli(['rules', 'docs', '--config', config]);
  assert.match(docs.stdout, `| [MA1001](${page}) |`);
  const shown = await runCli(['config', 'show', '--config', config]);
  assert.match(shown.stdout, /^docsUrl\s+https:\/\/wiki\.example\.org\/mesh-audit\/docs\/\s+\(config /m);
  writeFileSync(config, 'docsUrl: wiki/docs\n');
  const bad = await runCli(['rules', 'docs', '--config', config]);
  assert.is(bad.code, 2, 'a docsUrl that is not an absolute URI is refused');
  assert.match(bad.stderr, 'docsUrl');
});

test.run();
