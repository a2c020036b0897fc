import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, runCli, tempDir } from './support/cli.js';

/* Claims of the docs checked against what the tool does (issue 47). */

const doc = (name: string): string => readFileSync(join(PACKAGE_ROOT, 'docs', name), 'utf8');

test('docs/outputs.md: a --prom-file not ending in .prom is exit 2, nothing written (as the page says)', async () => {
  assert.match(
    doc('outputs.md'),
    '`.prom` is a usage error, refused before anything is read (exit 2, nothing written)',
  );
  const out = join(tempDir(), 'out');
  const r = await runCli([
    'evaluate',
    example('clean', 'snapshot.json'),
    '--prom-file',
    join(out, 'm.txt'),
    '--out',
    out,
  ]);
  assert.is(r.code, 2);
  assert.throws(() => readdirSync(out));
});

test('docs/writing-rules.md: the hardening ids are HD…, as the pack ships them', () => {
  const files = readdirSync(join(PACKAGE_ROOT, 'policies', 'docker-hardening'));
  assert.ok(files.some((f) => f.startsWith('HD')));
  assert.match(doc('writing-rules.md'), '| `HD…` | `policies/docker-hardening/` |');
  assert.not.match(doc('writing-rules.md'), /`DH\d?…?`/);
});

test.run();
