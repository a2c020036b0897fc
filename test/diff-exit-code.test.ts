import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, runCli, tempDir } from './support/cli.js';

/* `diff --exit-code` (issue 47): as `git diff --exit-code`, 1 when a finding is new, updated or absent, else 0. */

async function reportOf(name: string): Promise<string> {
  const out = tempDir();
  const r = await runCli(['evaluate', example(name, 'snapshot.json'), '--format', 'json', '--out', out]);
  assert.ok(r.code === 0 || r.code === 1, r.stderr);
  return join(out, 'mesh-audit.json');
}

test('diff --exit-code: 0 for the same findings, 1 when some are gone or new; without it, 0 either way', async () => {
  const [demo, clean] = [await reportOf('demo'), await reportOf('clean')];
  const same = await runCli(['diff', demo, demo, '--exit-code']);
  assert.is(same.code, 0, same.stderr);
  assert.match(same.stdout, 'New (0)');
  const gone = await runCli(['diff', demo, clean, '--exit-code']);
  assert.is(gone.code, 1, gone.stderr);
  assert.match(gone.stdout, /Absent \(gone since the old report\) \([1-9]/);
  const added = await runCli(['diff', clean, demo, '--exit-code', '--format', 'json']);
  assert.is(added.code, 1, added.stderr);
  assert.ok((JSON.parse(added.stdout) as { new: unknown[] }).new.length > 0);
  assert.is((await runCli(['diff', demo, clean])).code, 0, 'without --exit-code');
});

test.run();
