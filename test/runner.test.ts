import { spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { tempDir } from './support/cli.js';

// `npm test` runs every file in one uvu process (test/uvu-each.mjs): a file whose harness throws at
// import must be one loud failure, not the end of every other file's results.
test('a test file that throws at import is one failed test; the files after it still run and count', () => {
  const dir = tempDir('ma-runner-');
  symlinkSync(join(PACKAGE_ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'a-broken.test.mjs'), "throw new Error('the engine harness broke: unexpected EOF');\n");
  writeFileSync(join(dir, 'b-fine.test.mjs'), "import { test } from 'uvu';\ntest('fine', () => {});\ntest.run();\n");
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'test', 'uvu-each.mjs'), '.', '\\.test\\.mjs$'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  assert.is.not(r.status, 0, 'the run fails');
  assert.match(r.stdout, 'a-broken.test.mjs could not be loaded');
  assert.match(r.stdout, 'the engine harness broke: unexpected EOF');
  assert.match(r.stdout, /Total:\s+2/);
  assert.match(r.stdout, /Passed:\s+1/);
});

test.run();
