import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { runCli, tempDir } from './support/cli.js';
import { publishedSchemaErrors } from './support/published-schema.js';

/**
 * Issue 47: `rules list --format json` (and `rules show RULE --format json`) give the rule catalogue a script joins
 * a report's findings with, held to its published schema (policies/rules.schema.json); text stays the default.
 */
interface CatalogueRule {
  id: string;
  pack: string;
  shipped: boolean;
  severity: string;
  severities: string[];
  tags: string[];
  cis?: string;
  benchmark?: { benchmark: string; id: string; level: number | null; assessment: string | null };
  helpUri?: string;
}
interface Catalogue {
  schemaVersion: string;
  profile: string;
  rules: CatalogueRule[];
}

async function catalogue(...args: string[]): Promise<Catalogue> {
  const run = await runCli(['rules', 'list', '--format', 'json', ...args]);
  assert.is(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as Catalogue;
}

test('rules list --format json: every rule of the shipped packs, valid against the published schema', async () => {
  const all = await catalogue();
  assert.equal(publishedSchemaErrors('rules.schema.json', all), []);
  assert.is(all.schemaVersion, 'mesh-audit/rules@1');
  // The same rules, in the same order, as the text list (which stays the default).
  const text = await runCli(['rules', 'list']);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, /^ID {6}NAME/);
  const textIds = text.stdout
    .split('\n')
    .slice(1)
    .filter((l) => l.length > 0)
    .map((l) => l.split(' ')[0]);
  assert.equal(
    all.rules.map((r) => r.id),
    textIds,
  );
  // The hardening pack is loaded for its profile alone (docs/hardening.md), as in text.
  const ma = all.rules.filter((r) => r.pack === 'mesh-core');
  assert.is(ma.length, all.rules.length);
  const hardening = await catalogue('--profile', 'hardening');
  assert.equal(publishedSchemaErrors('rules.schema.json', hardening), []);
  assert.is(hardening.profile, 'hardening');
  const hd = hardening.rules.filter((r) => r.pack === 'docker-hardening');
  assert.ok(hd.length > 50 && ma.length > 10, `${hd.length} hardening, ${ma.length} mesh-core rules`);
  for (const r of hd) {
    const tag = r.tags.find((t) => t.startsWith('cis-docker-1.6:'));
    assert.is(r.cis, tag!.split(':')[1], r.id);
    assert.is(r.benchmark?.id, r.cis, r.id);
  }
  assert.ok(ma.every((r) => !('cis' in r) && !('benchmark' in r)));
  // Every shipped rule links to its page; the severities a rule can give start from its own.
  for (const r of [...all.rules, ...hd]) {
    assert.is(r.helpUri, `https://github.com/mesh-audit/mesh-audit/blob/v0.1.0/docs/rules/${r.id}.md`);
    assert.ok(r.severities.includes(r.severity), r.id);
  }
});

test("a report's findings join the catalogue on ruleId: the same tags and CIS id", async () => {
  const out = tempDir();
  const snapshot = join(PACKAGE_ROOT, 'test', 'fixtures', 'golden', 'realistic-3', 'snapshot.json');
  const run = await runCli(['evaluate', snapshot, '--profile', 'hardening', '--out', out, '--format', 'json']);
  assert.ok(run.code === 1 || run.code === 3, run.stderr);
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as {
    findings: { ruleId: string; tags: string[]; cis?: string }[];
  };
  const byId = new Map((await catalogue('--profile', 'hardening')).rules.map((r) => [r.id, r]));
  assert.ok(report.findings.length > 0);
  for (const f of report.findings) {
    const rule = byId.get(f.ruleId);
    assert.ok(rule, f.ruleId);
    assert.equal([f.tags, f.cis], [rule.tags, rule.cis], f.ruleId);
  }
});

test('rules show RULE --format json: the one rule, as the list gives it; a rule of ones own pack has no link', async () => {
  const show = await runCli(['rules', 'show', 'HD5029', '--profile', 'hardening', '--format', 'json']);
  assert.is(show.code, 0, show.stderr);
  const rule = JSON.parse(show.stdout) as CatalogueRule;
  assert.equal(publishedSchemaErrors('rules.schema.json', rule, 'rule'), []);
  assert.equal(
    rule,
    (await catalogue('--profile', 'hardening')).rules.find((r) => r.id === 'HD5029'),
  );
  assert.equal(rule.benchmark, { benchmark: 'cis-docker-1.6', id: '5.29', level: 1, assessment: 'automated' });

  const dir = tempDir();
  const pack = join(dir, 'site.yaml');
  writeFileSync(
    pack,
    [
      'schema: mesh-audit/policy@1',
      'pack: {id: site, name: Site rules, version: 1.0.0}',
      'rules:',
      '  - id: SITE001',
      '    name: no-debug-container',
      '    title: No container named debug',
      '    severity: warning',
      '    subject: containers',
      '    assert: {"!=": [{"var": "name"}, "debug"]}',
      '    message: "{name} is a debug container"',
      '    help: A debug container left running.',
      '    remediation: remove it.',
      '    tags: [site]',
      '    profiles: [nightly]',
      '',
    ].join('\n'),
  );
  const own = await runCli(['rules', 'show', 'SITE001', '--policy', pack, '--format', 'json']);
  assert.is(own.code, 0, own.stderr);
  const site = JSON.parse(own.stdout) as CatalogueRule;
  assert.equal(publishedSchemaErrors('rules.schema.json', site, 'rule'), []);
  assert.equal(
    [site.pack, site.shipped, site.tags, 'helpUri' in site, 'cis' in site],
    ['site', false, ['site'], false, false],
  );
});

test('--format json is for list and show only; another format is refused (exit 2)', async () => {
  for (const args of [
    ['rules', 'test', '--format', 'json'],
    ['rules', 'list', '--format', 'yaml'],
  ]) {
    const run = await runCli(args);
    assert.is(run.code, 2, args.join(' '));
    assert.match(run.stderr, '--format');
  }
});

test.run();
