import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FINGERPRINT_KEY } from '../src/report/sarif.js';
import { HostModel } from './support/host-model.js';
import { example, runCli, tempDir } from './support/cli.js';
import { multitoolErrors } from './support/multitool.js';

for (const name of ['045', '097', 'clean', 'demo']) {
  test(`SARIF Multitool validates the ${name} example with no error`, () => {
    assert.equal(multitoolErrors(example(name, 'expected.sarif')), []);
  });
}

test('an incomplete run: executionSuccessful false, one error notification per problem, and still valid', async () => {
  const dir = tempDir();
  const snap = new HostModel('half-read', '2026-10-01T00:00:00Z')
    .problem({ source: 'docker', message: 'cannot reach the Docker engine at unix:///var/run/docker.sock (ENOENT)' })
    .ledgerUnavailable('cannot read /var/lib/mesh-host/ledger.json (EACCES)')
    .build();
  writeFileSync(join(dir, 'snap.json'), JSON.stringify(snap));
  const run = await runCli(['evaluate', join(dir, 'snap.json'), '--out', dir, '--format', 'sarif']);
  assert.is(run.code, 3);
  const sarif = JSON.parse(readFileSync(join(dir, 'mesh-audit.sarif'), 'utf8'));
  const invocation = sarif.runs[0].invocations[0];
  assert.is(invocation.executionSuccessful, false);
  assert.is(invocation.toolExecutionNotifications.length, 2);
  assert.ok(invocation.toolExecutionNotifications.every((n: { level: string }) => n.level === 'error'));
  assert.match(invocation.toolExecutionNotifications[0].message.text, 'Docker engine');
  assert.equal(multitoolErrors(join(dir, 'mesh-audit.sarif')), []);
});

test('results carry rule metadata, fingerprints, logical locations and the env file line of a drifting key', async () => {
  const sarif = JSON.parse(readFileSync(example('045', 'expected.sarif'), 'utf8'));
  const run = sarif.runs[0];
  const drift = run.results.find((r: { ruleId: string }) => r.ruleId === 'MA1001');
  assert.ok(drift, 'an MA1001 result');
  assert.is(run.tool.driver.rules[drift.ruleIndex].name, 'container-env-matches-composed-file');
  assert.is(drift.partialFingerprints[FINGERPRINT_KEY].length, 32);
  assert.is(drift.fingerprints, undefined);
  const loc = drift.locations[0];
  assert.is(loc.physicalLocation.artifactLocation.uri, 'file:///etc/mesh/gitea/db.env');
  assert.is(loc.physicalLocation.region.startLine, 2, 'DATABASE_URL is on line 2 of the composed file');
  assert.is(loc.logicalLocations[0].name, 'gitea-server');
  const rule = run.tool.driver.rules.find((r: { id: string }) => r.id === 'MA1001');
  assert.ok(rule.name !== rule.id);
  assert.not.match(rule.help.text, '**');
});

test.run();
