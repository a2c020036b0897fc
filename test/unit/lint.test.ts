import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadPack } from '../../src/policy/load.js';
import { lintPack } from '../../src/policy/lint.js';
import { runCli, tempDir } from '../support/cli.js';

/* `mesh-audit rules lint` (and `rules test`): the JSON Logic traps, each at its file and line. */

const PACK = `schema: mesh-audit/policy@1
pack: {id: traps, name: traps, version: "1"}
rules:
  - id: T1
    name: name-length-limit
    title: t
    severity: warning
    subject: containers
    assert: {"<=": [{"var": "name.length"}, 16]}
    message: m
    help: h
    remediation: r
    tags: []
    profiles: [nightly]
  - id: T2
    name: loose-status
    title: t
    severity: warning
    subject: containers
    where: {"==": [{"var": "running"}, 1]}
    assert:
      {"and": [
        {"!=": [{"var": "status"}, null]},
        {"all": [{"var": "holds"}, {">": [{"var": ""}, 0]}]},
        {"some": [{"var": "open_ports"}, {"===": [{"var": ""}, 80]}]}
      ]}
    let:
      newer: {">": [{"var": "image"}, "10"]}
      more: {">": [{"var": "listening.length"}, {"count": [{"var": "holds"}]}]}
    message: m
    help: h
    remediation: r
    tags: []
    profiles: [nightly]
  - id: T3
    name: written-safely
    title: t
    severity: warning
    subject: containers
    where: {"===": [{"var": "status"}, "running"]}
    assert:
      {"and": [
        {"<=": [{"var": ["name.length", 0]}, 16]},
        {"===": [{"var": "running"}, true]},
        {"==": [1, 1]},
        {">": [{"count": [{"var": "holds"}]}, 0]},
        {"all": [[1, 2], {">": [{"var": ""}, 0]}]},
        {"some": [{"var": "holds"}, {"===": [{"var": ""}, 1]}]},
        {"none": [{"var": "holds"}, {"!": {">": [{"var": ""}, 0]}}]}
      ]}
    message: m
    help: h
    remediation: r
    tags: []
    profiles: [nightly]
`;

const dir = tempDir();
const file = join(dir, 'traps.yaml');
writeFileSync(file, PACK);

test('each trap is a warning with its file, line, rule and field; what is written safely is not', async () => {
  const warnings = await lintPack(await loadPack(file));
  const seen = warnings.map((w) => `${w.line} ${w.ruleId} ${w.field} ${w.code}`);
  assert.equal(seen, [
    '9 T1 assert missing-compares-as-zero',
    '20 T2 where loose-equality',
    '23 T2 assert loose-equality',
    '24 T2 assert all-on-empty-list',
    '25 T2 assert some-on-empty-list',
    '28 T2 let/newer numbers-compared-as-text',
    '29 T2 let/more missing-compares-as-zero',
  ]);
  assert.ok(warnings.every((w) => w.file === file));
  const text = (code: string) => warnings.find((w) => w.code === code)!.message;
  assert.match(text('missing-compares-as-zero'), 'where "name.length" is missing it is null, which compares as 0');
  assert.match(text('loose-equality'), 'write ===');
  assert.match(text('all-on-empty-list'), '{"none": [LIST, {"!": TEST}]}');
  assert.match(text('numbers-compared-as-text'), 'write the number 10');
});

test('`rules lint` prints file:line warnings and exits 1; `rules test` prints them too and still judges by the cases', async () => {
  const lint = await runCli(['rules', 'lint', '--policy', file]);
  assert.is(lint.code, 1);
  assert.match(lint.stdout, `${file}:9: warning: rule T1: assert: `);
  assert.match(lint.stdout, /\n7 warnings\n$/);
  writeFileSync(
    join(dir, 'traps.cases.yaml'),
    ['T1', 'T2', 'T3'].map((id) => `${id}:\n  pass: []\n  fail: []\n`).join(''),
  );
  const cases = await runCli(['rules', 'test', '--policy', file]);
  assert.match(cases.stdout, `warn ${file}:9: warning: rule T1: assert: `);
  assert.match(cases.stdout, /0 passed, 3 failed\n$/);
});

test('the shipped pack is clean', async () => {
  const run = await runCli(['rules', 'lint']);
  assert.is(run.stdout, '0 warnings\n');
  assert.is(run.code, 0);
});

test.run();
