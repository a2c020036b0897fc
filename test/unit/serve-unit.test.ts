import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serveUnitNodeOptions } from '../support/serve-unit.js';

// How big V8's young generation grew under a churn of short-lived objects, in MiB (both halves).
const CHURN = `
const v8 = require('node:v8');
let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ a: i, b: 'x' + i }); if (keep.length > 20000) keep = []; }
const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
process.stdout.write(String(young.space_size / 1048576));
`;

function youngMiB(nodeOptions: string): number {
  const env = { PATH: process.env['PATH'] ?? '', NODE_OPTIONS: nodeOptions };
  const run = spawnSync(process.execPath, ['-e', CHURN], { env, encoding: 'utf8' });
  assert.is(run.status, 0, run.stderr);
  assert.is(run.stderr, '');
  return Number(run.stdout);
}

test("the .deb's serve unit lets V8's young generation grow past Node's own bound", () => {
  const options = serveUnitNodeOptions();
  assert.is(options, '--max-semi-space-size=32');
  assert.ok(youngMiB('') <= 32, 'without it, Node keeps the young generation within 32 MiB');
  assert.ok(youngMiB(options) > 32, 'with the unit’s NODE_OPTIONS it grows past that');
});

test('NODE_OPTIONS in a unit is read from its one Environment= line', () => {
  assert.is(serveUnitNodeOptions('[Service]\nExecStart=/usr/bin/mesh-audit serve\n'), '');
  assert.is(
    serveUnitNodeOptions('[Service]\nEnvironment=NODE_OPTIONS=--max-semi-space-size=8 \n'),
    '--max-semi-space-size=8',
  );
  assert.throws(
    () => serveUnitNodeOptions('Environment=NODE_OPTIONS=--a\nEnvironment=NODE_OPTIONS=--b\n'),
    /NODE_OPTIONS set 2 times/,
  );
});

test.run();
