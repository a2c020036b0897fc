import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { example, runCli, tempDir } from './support/cli.js';

/* Refused values name what was meant (issue 47): a long name of a short value, a rule of another profile. */

test("premigrate --format markdown is refused with `md` suggested; scan's --fail-on keeps its own", async () => {
  const r = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'markdown',
  ]);
  assert.is(r.code, 2);
  assert.match(r.stderr, "unknown format 'markdown' (did you mean 'md'?)");
  const fail = await runCli(['evaluate', example('clean', 'snapshot.json'), '--fail-on', 'eror']);
  assert.match(fail.stderr, "(did you mean 'error'?)");
});

test('rules show HD5013 without --profile hardening names the pack and the profile to add', async () => {
  const r = await runCli(['rules', 'show', 'HD5013']);
  assert.is(r.code, 2);
  assert.match(
    r.stderr,
    'HD5013 is in the docker-hardening pack (profiles: hardening), not in --profile all: add --profile hardening',
  );
  const shown = await runCli(['rules', 'show', 'HD5013', '--profile', 'hardening']);
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^HD5013 /);
  assert.match((await runCli(['rules', 'show', 'MA9999'])).stderr, "no rule 'MA9999'");
});

test('a policy pack misspelt gets the nearest key and value, as a config file does; a waiver date says its form', async () => {
  const dir = tempDir();
  const pack = join(dir, 'pack.yaml');
  writeFileSync(
    pack,
    [
      'schema: mesh-audit/policy@1',
      'pack: {id: typo, name: typo, version: "1"}',
      'rules:',
      '  - id: T1',
      '    name: every-container-running',
      '    title: t',
      '    severty: error',
      '    subject: container',
      '    assert: {"var": "running"}',
      '    message: "{id} fails"',
      '    help: h',
      '    remediation: r',
      '    tags: []',
      '    profiles: [nightly]',
      '',
    ].join('\n'),
  );
  const r = await runCli(['rules', 'list', '--policy', pack]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /'severty'.*did you mean 'severity'/);
  assert.match(r.stderr, /subject.*did you mean 'containers'/);
  writeFileSync(
    pack,
    readFileSync(pack, 'utf8')
      .replace('severty', 'severity')
      .replace('subject: container', 'subject: files')
      .replace('{"var": "running"}', '{"==": [{"var": "mdoe"}, "0600"]}'),
  );
  const field = await runCli(['rules', 'list', '--policy', pack]);
  assert.is(field.code, 2, field.stderr);
  assert.match(field.stderr, /no field 'mdoe'.*did you mean 'mode'/);
  const waivers = join(dir, 'waivers.yaml');
  writeFileSync(
    waivers,
    'schema: mesh-audit/waivers@1\nwaivers:\n  - {rule: MA2001, subject: "*", justification: j, expires: "2026/01/01"}\n',
  );
  const w = await runCli(['evaluate', example('demo', 'snapshot.json'), '--waivers', waivers, '--out', join(dir, 'o')]);
  assert.is(w.code, 2, w.stderr);
  assert.match(w.stderr, /YYYY-MM-DD/);
});

test.run();
