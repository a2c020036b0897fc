import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, runCli, tempDir } from './support/cli.js';

/**
 * Golden files: each example's expected reports are checked in beside its snapshot.
 * After a deliberate change, refresh them with `npm run golden` and review the diff.
 */
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

const EXAMPLES: { name: string; exit: number }[] = [
  { name: '045', exit: 1 },
  { name: '097', exit: 1 },
  { name: 'clean', exit: 0 },
  { name: 'demo', exit: 1 },
];

for (const { name, exit } of EXAMPLES) {
  test(`example ${name}: reports match the golden files, exit ${exit}`, async () => {
    const out = tempDir();
    const history = example(name, 'history');
    const args = ['evaluate', example(name, 'snapshot.json'), '--out', out, '--format', 'text,sarif,json'];
    if (existsSync(history)) args.push('--history', history);
    const run = await runCli(args);
    assert.is(run.code, exit, run.stderr);
    const actual: Record<string, string> = {
      'expected.txt': run.stdout,
      'expected.json': readFileSync(join(out, 'mesh-audit.json'), 'utf8'),
      'expected.sarif': readFileSync(join(out, 'mesh-audit.sarif'), 'utf8'),
    };
    for (const [file, text] of Object.entries(actual)) {
      const golden = example(name, file);
      if (UPDATE) writeFileSync(golden, text);
      assert.ok(existsSync(golden), `${golden} is missing: run \`npm run golden\``);
      assert.fixture(
        text,
        readFileSync(golden, 'utf8'),
        `${name}/${file} differs from the golden file (after a deliberate change: npm run golden)`,
      );
    }
  });
}

test('the 045 drift names the key and both shapes, never a raw value', async () => {
  const run = await runCli(['evaluate', example('045', 'snapshot.json'), '--format', 'text']);
  assert.match(
    run.stdout,
    'DATABASE_URL=postgresql://…@:20000/… but /etc/mesh/gitea/db.env now says DATABASE_URL=postgresql://…@db.mesh.internal:20000/…',
  );
  assert.not.match(run.stdout, 'example-db-pass');
  // The keys that did not change are not reported.
  assert.not.match(run.stdout, 'GITEA__server__DOMAIN');
});

test('the demo shows 045, the unclaimed mesh container of 097 with its port, and the stale file', async () => {
  const run = await runCli([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--history',
    example('demo', 'history'),
    '--format',
    'text',
  ]);
  assert.is(run.code, 1);
  assert.match(run.stdout, /MA1001 container-env-matches-composed-file\s+container gitea-server/);
  assert.match(run.stdout, /error\s+MA2001 no-unclaimed-container\s+container forge-forge.server/);
  assert.match(
    run.stdout,
    'written by the mesh and lost by its record; exposed on the host network, listening on 0.0.0.0:3999/tcp',
  );
  assert.match(
    run.stdout,
    'forge.config moved from /etc/mesh/forge/app.ini to /etc/mesh/forge/conf/app.ini on 2026-09-23T08:12:00Z; /etc/mesh/forge/app.ini is still present',
  );
  // What the adopted node found and recorded is held, not reported.
  assert.not.match(run.stdout, 'legacy-postgres');
});

test('without its history the 097 stale file cannot be known (history is what remembers it)', async () => {
  const run = await runCli(['evaluate', example('097', 'snapshot.json'), '--format', 'json', '--out', '-']);
  const report = JSON.parse(run.stdout) as { findings: { ruleName: string }[] };
  const names = report.findings.map((f) => f.ruleName);
  assert.not.ok(names.includes('no-stale-file-at-old-target'));
  assert.ok(names.includes('no-unclaimed-container'));
});

test.run();
