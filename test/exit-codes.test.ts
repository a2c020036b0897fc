import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { main } from '../src/cli/main.js';
import { example, runCli, spawnCli, tempDir, FIXED_NOW } from './support/cli.js';

// Each exit code produced by a real situation, through the real binary where it can be.
test('0: a complete run with nothing at or above --fail-on', () => {
  assert.is(spawnCli(['evaluate', 'examples/clean/snapshot.json', '--out', tempDir()]).code, 0);
});

test('1: findings at or above --fail-on', () => {
  assert.is(spawnCli(['evaluate', 'examples/045/snapshot.json', '--out', tempDir()]).code, 1);
});

test('2: bad usage, policy, snapshot or config — nothing evaluated', () => {
  assert.is(spawnCli(['evaluate']).code, 2, 'missing argument');
  assert.is(spawnCli(['evaluate', 'examples/clean/snapshot.json', '--unknown-flag']).code, 2, 'unknown option');
  assert.is(spawnCli(['evaluate', 'examples/clean/snapshot.json', '--policy', 'README.md']).code, 2, 'not a policy');
  assert.is(spawnCli(['evaluate', 'README.md']).code, 2, 'not a snapshot');
  assert.is(spawnCli(['scan', '--config', 'README.md']).code, 2, 'not a config');
});

test('3: a source could not be read — and never 0 when the engine is missing', () => {
  const r = spawnCli([
    'scan',
    '--docker-host',
    'unix:///nonexistent.sock',
    '--ledger',
    '/nonexistent/ledger.json',
    '--out',
    tempDir(),
    '--format',
    'json',
  ]);
  assert.is(r.code, 3);
  assert.is(
    spawnCli([
      'scan',
      '--docker-host',
      'unix:///nonexistent.sock',
      '--ledger',
      '/nonexistent/ledger.json',
      '--out',
      tempDir(),
      '--fail-on',
      'none',
    ]).code,
    3,
    '--fail-on none does not hide an incomplete scan',
  );
});

test('never 0 after an internal error: stdout failing mid-report is exit 3', async () => {
  let stderr = '';
  const code = await main(
    ['node', 'mesh-audit', 'evaluate', example('clean', 'snapshot.json'), '--format', 'text', '--out', tempDir()],
    {
      now: () => FIXED_NOW,
      stdout: () => {
        throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
      },
      stderr: (t) => void (stderr += t),
      color: false,
      interactive: false,
    },
  );
  assert.is(code, 3);
  assert.match(stderr, 'internal error: write EPIPE');
});

test('3 also when the output folder is refused, though the evaluation itself found nothing', async () => {
  const dir = tempDir();
  const r = await runCli([
    'evaluate',
    example('clean', 'snapshot.json'),
    '--out',
    join(dir, 'reports', '..', '..', '..', 'proc', 'no-write-here'),
  ]);
  assert.is(r.code, 3, r.stderr);
});

test.run();
