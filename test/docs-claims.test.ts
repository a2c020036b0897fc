import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
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

test("docs/writing-rules.md: the fields every rule must have are the schema's, and a rule without help is refused", async () => {
  const schema = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'policies', 'policy.schema.json'), 'utf8')) as {
    $defs: { rule: { required: string[] } };
  };
  const said = /Every rule has (.*?): a pack missing one/s.exec(doc('writing-rules.md'))?.[1] ?? '';
  const named = [...said.matchAll(/`(\w+)`/g)].map((m) => m[1]);
  assert.equal(named.sort(), [...schema.$defs.rule.required].sort());
  const dir = tempDir();
  const pack = join(dir, 'pack.yaml');
  writeFileSync(
    pack,
    'schema: mesh-audit/policy@1\npack: {id: p, name: p, version: "1"}\nrules:\n' +
      '  - {id: T1, name: n, title: t, severity: error, subject: containers, assert: {"var": "running"}, ' +
      'message: m, remediation: r, tags: [], profiles: [nightly]}\n',
  );
  const r = await runCli(['rules', 'list', '--policy', pack]);
  assert.is(r.code, 2);
  assert.match(r.stderr, "must have required property 'help'");
});

test('docs/writing-rules.md: the hardening ids are HD…, as the pack ships them', () => {
  const files = readdirSync(join(PACKAGE_ROOT, 'policies', 'docker-hardening'));
  assert.ok(files.some((f) => f.startsWith('HD')));
  assert.match(doc('writing-rules.md'), '| `HD…` | `policies/docker-hardening/` |');
  assert.not.match(doc('writing-rules.md'), /`DH\d?…?`/);
});

test.run();
