import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli, spawnCli, tempDir } from './support/cli.js';

/* `rules test` reads a pack's cases as strictly as its rules: each typo below once passed silently. */

const PACK = `schema: mesh-audit/policy@1
pack:
  id: cases-test
  name: cases test
  version: 1.0.0
rules:
  - id: CT1
    name: single-file-current
    title: A single-file mount is current
    severity: error
    subject: mounts
    where: {"var": "single_file"}
    assert: {"===": [{"var": "seen.inode"}, {"var": "host_file.inode"}]}
    message: "{container.name} sees {destination} as inode {seen.inode}, the host has {host_file.inode}"
    help: Why it matters.
    remediation: What to do.
    tags: [test]
    profiles: [nightly]
`;

const PASS = `  pass:
    - name: same inode
      subject: {container: {name: app}, destination: /etc/a, single_file: true, seen: {inode: 1}, host_file: {inode: 1}}
`;

function packWith(cases: string): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'p.yaml'), PACK);
  writeFileSync(join(dir, 'p.cases.yaml'), cases);
  return join(dir, 'p.yaml');
}

const FAIL_CASE = (extra: string, subject: string) =>
  `CT1:\n${PASS}  fail:\n    - name: replaced\n${extra}      subject: ${subject}\n`;
const REPLACED =
  '{container: {name: app}, destination: /etc/a, single_file: true, seen: {inode: 1}, host_file: {inode: 2}}';

test('the cases as written pass (the baseline the typos below break)', async () => {
  const r = await runCli(['rules', 'test', '--policy', packWith(FAIL_CASE('      expect: [""]\n', REPLACED))]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, '2 passed, 0 failed');
});

test('a misspelt case key (`expects:` for `expect:`) fails `rules test` at its file:line, naming the key meant', async () => {
  const pack = packWith(FAIL_CASE('      expects: [""]\n', REPLACED));
  const r = await runCli(['rules', 'test', '--policy', pack]);
  assert.is(r.code, 2, r.stdout);
  assert.match(
    r.stderr,
    `${pack.replace('.yaml', '.cases.yaml')}:7: /CT1/fail/0 must NOT have additional properties 'expects' (did you mean 'expect'?)`,
  );
});

test('a misspelt field in a case subject (`single_fle`) fails `rules test` at its file:line, like a rule reading it', async () => {
  const pack = packWith(
    `CT1:\n${PASS.replace('single_file', 'single_fle')}  fail:\n    - name: replaced\n      subject: ${REPLACED}\n`,
  );
  const r = await runCli(['rules', 'test', '--policy', pack]);
  assert.is(r.code, 2, r.stdout);
  assert.match(
    r.stderr,
    `${pack.replace('.yaml', '.cases.yaml')}:4: rule CT1: pass case 'same inode': subject.single_fle: ` +
      "subject set mounts has no field 'single_fle'",
  );
  // Nested fields the set documents are checked too; a field under `unknown:` as well.
  const nested = packWith(
    FAIL_CASE('      unknown: [seen.inod]\n', REPLACED.replace('host_file: {inode', 'host_file: {inod')),
  );
  const n = await runCli(['rules', 'test', '--policy', nested]);
  assert.is(n.code, 2, n.stdout);
  assert.match(n.stderr, "subject.host_file.inod: host_file (mounts) has no field 'inod'");
  assert.match(n.stderr, "unknown: seen (mounts) has no field 'inod'");
});

test('a cases file nested 10,000 deep fails `rules test` with exit 2 at its file:line:column (src/input/depth.ts)', () => {
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);
  const pack = packWith(FAIL_CASE('', `{container: {name: app}, seen: ${deep}}`));
  const r = spawnCli(['rules', 'test', '--policy', pack]);
  assert.is(r.code, 2, r.stdout + r.stderr);
  assert.match(
    r.stderr,
    new RegExp(`^mesh-audit: ${pack.replace('.yaml', '.cases.yaml')}:\\d+:\\d+: nested more than 64 levels deep\\n$`),
  );
});

test('a fail case may pin its message: a different rendering fails with the file:line of the case', async () => {
  const right = 'app sees /etc/a as inode 1, the host has 2';
  const ok = await runCli(['rules', 'test', '--policy', packWith(FAIL_CASE(`      message: "${right}"\n`, REPLACED))]);
  assert.is(ok.code, 0, ok.stdout);
  const pack = packWith(FAIL_CASE(`      message: "app sees /etc/a as inode 1, the host has 3"\n`, REPLACED));
  const r = await runCli(['rules', 'test', '--policy', pack]);
  assert.is(r.code, 1, r.stdout);
  assert.match(
    r.stdout,
    `FAIL CT1 fail: replaced\n       ${pack.replace('.yaml', '.cases.yaml')}:6: expected the message`,
  );
  assert.match(r.stdout, `got\n         ${right}\n`);
  assert.match(r.stdout, '1 passed, 1 failed');
});

test('a placeholder the case gives no value for (printed "-") fails the case, naming the placeholder', async () => {
  const pack = packWith(FAIL_CASE('', REPLACED.replace('container: {name: app}, ', '')));
  const r = await runCli(['rules', 'test', '--policy', pack]);
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stdout, "the message has no value for {container.name} (printed as '-')");
  assert.match(r.stdout, '1 passed, 1 failed');
});

test('cases naming a rule their file does not hold fail with the line of that rule id', async () => {
  const pack = packWith(FAIL_CASE('', REPLACED) + 'CT9:\n  pass: []\n');
  const r = await runCli(['rules', 'test', '--policy', pack]);
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stdout, `${pack.replace('.yaml', '.cases.yaml')}:8: no rule CT9 in the file these cases are beside`);
});

test.run();
