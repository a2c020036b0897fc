import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { runCli, tempDir } from './support/cli.js';

/**
 * Golden files for the realistic host model (test/support/realistic-host.ts): three hosts it built, kept as
 * snapshots under test/fixtures/golden/, and every report each gives — every format of `evaluate` with the
 * shipped pack and with the hardening profile, and `premigrate`'s reports and plan. A refactor that moves how a
 * fact is declared, collected or written must leave every byte of these the same (issue 43); a deliberate change
 * refreshes them with `npm run golden` and its diff is reviewed. The examples' own golden files are in
 * test/examples.test.ts.
 */
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';
const GOLDEN = join(PACKAGE_ROOT, 'test', 'fixtures', 'golden');
const HOSTS = ['realistic-3', 'realistic-11', 'realistic-42'];

/** The files a run wrote into its output folder (the history it keeps there aside), by name. */
function reportsIn(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    // The lock file holds the pid of the run that took the folder.
    if (name !== '.mesh-audit.lock' && statSync(join(dir, name)).isFile())
      out[name] = readFileSync(join(dir, name), 'utf8');
  }
  return out;
}

function compare(folder: string, actual: Record<string, string>): void {
  if (UPDATE) {
    mkdirSync(folder, { recursive: true });
    for (const [name, text] of Object.entries(actual)) writeFileSync(join(folder, name), text);
  }
  assert.ok(existsSync(folder), `${folder} is missing: run \`npm run golden\``);
  assert.equal(Object.keys(actual).sort(), readdirSync(folder).sort(), `the files written for ${folder}`);
  for (const [name, text] of Object.entries(actual)) {
    assert.fixture(
      text,
      readFileSync(join(folder, name), 'utf8'),
      `${folder}/${name} differs from the golden file (after a deliberate change: npm run golden)`,
    );
  }
}

for (const host of HOSTS) {
  const snapshot = join(GOLDEN, host, 'snapshot.json');
  for (const profile of ['default', 'hardening']) {
    test(`${host}, ${profile} profile: every format of evaluate matches its golden file`, async () => {
      const out = tempDir();
      const args = ['evaluate', snapshot, '--out', out, '--format', 'text,sarif,json,jsonl,junit,prom,md'];
      if (profile !== 'default') args.push('--profile', profile);
      const run = await runCli([...args, '--fail-on', 'none']);
      assert.ok(run.code === 0 || run.code === 3, run.stderr);
      compare(join(GOLDEN, host, profile), {
        ...reportsIn(out),
        'stdout.txt': run.stdout,
        'exit.txt': `${run.code}\n`,
      });
    });
  }
  test(`${host}: premigrate's reports and plan match their golden files`, async () => {
    const out = tempDir();
    const run = await runCli(['premigrate', '--snapshot', snapshot, '--out', out, '--plan', 'plan.json']);
    compare(join(GOLDEN, host, 'premigrate'), {
      ...reportsIn(out),
      'stdout.txt': run.stdout,
      'exit.txt': `${run.code}\n`,
    });
  });
}

test.run();
