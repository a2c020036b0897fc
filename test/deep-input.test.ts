import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { example, spawnCli, tempDir } from './support/cli.js';

/*
 * Operator files nested deeper than MAX_DEPTH (src/input/depth.ts), as the command line sees them: exit 2,
 * one line naming the file and where the bound was passed, nothing written. (Policy packs and snapshots:
 * test/bad-input-policy.test.ts; daemon.json: test/collector-isolation.test.ts.)
 */

const deepFlow = (n: number): string => '['.repeat(n) + ']'.repeat(n);

function refused(args: string[], file: string, out: string, at: string): void {
  const r = spawnCli(args);
  assert.is(r.code, 2, r.stderr);
  assert.is(r.stderr, `mesh-audit: ${file}:${at}: nested more than 64 levels deep\n`);
  assert.not.ok(existsSync(join(out, 'mesh-audit.json')), 'no report written');
}

test("a config file nested 10,000 deep: exit 2 at its line and column (was: the parser's stack overflow message)", () => {
  const dir = tempDir();
  const file = join(dir, 'config.yaml');
  writeFileSync(file, `managedRoots: []\nlabels: ${deepFlow(10_000)}\n`);
  const out = join(dir, 'out');
  // `labels:` is the root mapping's (1); its first `[` (column 9) the 2nd level: the 65th is 63 columns on.
  refused(['evaluate', example('clean', 'snapshot.json'), '--config', file, '--out', out], file, out, `2:${9 + 63}`);
});

test('a waivers file nested 10,000 deep: exit 2 at its line and column', () => {
  const dir = tempDir();
  const file = join(dir, 'waivers.yaml');
  writeFileSync(file, `waivers:\n  - rule: MA1001\n    subject: ${deepFlow(10_000)}\n`);
  const out = join(dir, 'out');
  // The root (1), `waivers` (2), the waiver (3); `subject`'s first `[` (column 14) the 4th: the 65th 61 on.
  refused(['evaluate', example('clean', 'snapshot.json'), '--waivers', file, '--out', out], file, out, `3:${14 + 61}`);
});

test('a baseline report nested deeper than a snapshot may be: exit 2 at its line and column', () => {
  const dir = tempDir();
  const file = join(dir, 'baseline.json');
  const report = JSON.parse(readFileSync(example('demo', 'expected.json'), 'utf8')) as Record<string, unknown>;
  report['deep'] = '@';
  writeFileSync(file, JSON.stringify(report).replace('"@"', deepFlow(10_000)));
  const r = spawnCli(['evaluate', example('clean', 'snapshot.json'), '--baseline', file, '--out', join(dir, 'out')]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`^mesh-audit: ${file}:1:\\d+: report nests more than 128 levels deep\\n$`));
});

test.run();
