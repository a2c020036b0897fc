#!/usr/bin/env node
// Runs every compiled test file with uvu and ends with the plain line `N passed, N failed`
// (uvu's own summary stays above it). Docker-backed tests live in test/docker and run here too, in the
// same process (one private engine of each kind for all of them). A file that throws at import is one
// failed test and the others still run (test/uvu-each.mjs).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runner = join(root, 'test', 'uvu-each.mjs');
const result = spawnSync(process.execPath, [runner, 'dist/test', '\\.test\\.js$'], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
});
process.stdout.write(result.stdout ?? '');
const count = (label) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(result.stdout ?? '')?.[1] ?? NaN);
const total = count('Total');
const passed = count('Passed');
const skipped = count('Skipped');
if (Number.isNaN(total) || Number.isNaN(passed)) {
  // uvu died before its summary: nothing can be counted, so nothing passed.
  console.log(`0 passed, 1 failed`);
  process.exit(1);
}
// uvu's Total counts the tests that ran; skipped ones are outside it.
const failed = total - passed;
console.log(`${passed} passed, ${failed} failed` + (skipped > 0 ? `, ${skipped} skipped` : ''));
process.exit(result.status === 0 && failed === 0 ? 0 : 1);
