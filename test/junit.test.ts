import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, type TestSuites } from 'junit2json';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, runCli, tempDir } from './support/cli.js';
import { driftHostSnapshot } from './support/drift-host.js';
import { HostModel } from './support/host-model.js';
import { DEFAULT_DOCS_URL } from '../src/version.js';

// The published Jenkins JUnit schema (test/fixtures/junit/README.md), checked by libxml2's xmllint.
const SCHEMA = join(PACKAGE_ROOT, 'test', 'fixtures', 'junit', 'jenkins-junit.xsd');

function xmllint(file: string): { status: number | null; output: string } {
  const r = spawnSync('xmllint', ['--noout', '--schema', SCHEMA, file], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw new Error(`xmllint not found (apt-get install libxml2-utils): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Writes the JUnit report of these arguments and reads it back as a consumer does (junit2json). */
async function junitOf(args: string[]): Promise<{ file: string; code: number; suites: TestSuites }> {
  const out = join(tempDir(), 'reports');
  const run = await runCli(['evaluate', ...args, '--out', out, '--format', 'junit', '--fail-on', 'none']);
  const file = join(out, 'mesh-audit.junit.xml');
  const suites = (await parse(readFileSync(file, 'utf8'))) as TestSuites;
  return { file, code: run.code, suites };
}

test('every example: valid against the JUnit schema; one test case per rule and subject checked, a failure per finding', async () => {
  for (const name of ['045', '097', 'clean', 'demo']) {
    const history = name === '097' || name === 'demo' ? ['--history', example(name, 'history')] : [];
    const { file, suites } = await junitOf([example(name, 'snapshot.json'), ...history]);
    const lint = xmllint(file);
    assert.is(lint.status, 0, lint.output);
    const expected = JSON.parse(readFileSync(example(name, 'expected.json'), 'utf8')) as {
      findings: { ruleId: string; message: string }[];
    };
    const cases = suites.testsuite!.flatMap((s) => s.testcase ?? []);
    const failures = cases.flatMap((c) => c.failure ?? []);
    assert.is(failures.length, expected.findings.length, `${name}: one failure per finding`);
    assert.equal(failures.map((f) => f.message).sort(), expected.findings.map((f) => f.message).sort());
    assert.ok(
      cases.some((c) => c.failure === undefined && c.skipped === undefined),
      `${name}: passed checks are test cases too`,
    );
    assert.is(suites.testsuite![0]!.tests, cases.length);
    assert.is(suites.failures, cases.filter((c) => (c.failure ?? []).length > 0).length);
  }
});

test('a failure names the rule, the subject and how to fix it; a passed check is a test case without failure', async () => {
  const { suites } = await junitOf([example('045', 'snapshot.json')]);
  const cases = suites.testsuite![0]!.testcase!;
  const drift = cases.find(
    (c) => c.classname === 'MA1001 container-env-matches-composed-file' && (c.failure ?? []).length > 0,
  )!;
  assert.match(drift.name!, 'gitea-server <- /etc/mesh/gitea/db.env');
  assert.match(drift.failure![0]!.inner!, 'Remediation: recreate the container');
  assert.match(drift.failure![0]!.inner!, `${DEFAULT_DOCS_URL}/rules/MA1001.md`);
  assert.ok(
    cases.some(
      (c) => c.classname === 'MA3005 ledger-well-formed' && c.failure === undefined && c.skipped === undefined,
    ),
    'a passed check',
  );
});

test('an incomplete scan: what was not checked is a skipped test case, and the file is still valid', async () => {
  const dir = tempDir();
  const snap = new HostModel('half-read', '2026-10-01T00:00:00Z')
    .problem({ source: 'files', subject: '/etc/mesh/app/secret.env', message: 'EACCES: permission denied' })
    .ledger([])
    .build();
  writeFileSync(join(dir, 'snap.json'), JSON.stringify(snap));
  const { file, code, suites } = await junitOf([join(dir, 'snap.json')]);
  assert.is(code, 3);
  assert.is(xmllint(file).status, 0, xmllint(file).output);
  const skipped = suites.testsuite![0]!.testcase!.filter((c) => c.skipped !== undefined);
  assert.equal(
    skipped.map((c) => [c.classname, c.name]),
    [['not checked: files', '/etc/mesh/app/secret.env']],
  );
  assert.is(suites.testsuite![0]!.skipped, 1);
});

test('names and messages are escaped: a container name with XML in it stays one valid attribute', async () => {
  const dir = tempDir();
  const snap = new HostModel('odd-host', '2026-10-01T00:00:00Z')
    .container({ name: 'x"<&>\'y', network: 'none' })
    .ledger([])
    .build();
  writeFileSync(join(dir, 'snap.json'), JSON.stringify(snap));
  const { file, suites } = await junitOf([join(dir, 'snap.json')]);
  assert.is(xmllint(file).status, 0, xmllint(file).output);
  const unclaimed = suites.testsuite![0]!.testcase!.find((c) => c.classname === 'MA2001 no-unclaimed-container')!;
  assert.is(unclaimed.name, 'container x"<&>\'y');
});

test('a waived finding passes and says why', async () => {
  const dir = tempDir();
  const waivers = join(dir, 'waivers.yaml');
  writeFileSync(
    waivers,
    'waivers:\n  - rule: MA2001\n    subject: stray\n    justification: vendor debugging, ticket OPS-7\n    expires: 2099-01-01\n',
  );
  const { suites } = await junitOf([driftHostSnapshot(dir, 'w', { stray: true }), '--waivers', waivers]);
  const stray = suites.testsuite![0]!.testcase!.find(
    (c) => c.name === 'container stray' && c.classname === 'MA2001 no-unclaimed-container',
  )!;
  assert.is(stray.failure, undefined);
  assert.match(stray['system-out']![0]!, 'waived until 2099-01-01 (vendor debugging, ticket OPS-7)');
});

test.run();
