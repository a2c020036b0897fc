import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { example, runCli, spawnCli, tempDir } from './support/cli.js';

/*
 * Bad policies at the command line (`mesh-audit evaluate SNAPSHOT --policy FILE`): nesting deep enough
 * to overflow a recursive parser or evaluator, and the YAML traps whose unit tests are in
 * test/unit/policy-load.test.ts (alias bombs, %YAML 1.1) seen as the user sees them. A bad policy is
 * one line and exit 2 with nothing written; an expression that fails at evaluation is a notification.
 * (A rule that throws on one subject: test/cli.test.ts.)
 */

const HEAD = 'schema: mesh-audit/policy@1\npack: {id: test, name: test, version: "1"}\nrules:\n';
const rule = (id: string, name: string, body: string, subject = 'containers', severity = 'error'): string =>
  [
    `  - id: ${id}`,
    `    name: ${name}`,
    '    title: t',
    `    severity: ${severity}`,
    `    subject: ${subject}`,
    body.replace(/\n$/, ''),
    '    message: "{id} fails"',
    '    help: h',
    '    remediation: r',
    '    tags: []',
    '    profiles: [nightly]',
  ].join('\n') + '\n';
const RUNNING = rule('T0', 'every-container-running', '    assert: {"var": "running"}');

/** `{"!": … {"var": "running"} …}` nested n deep, on one line (JSON is YAML flow style). */
const flowNots = (n: number): string =>
  '    assert: ' + '{"!": '.repeat(n) + '{"var": "running"}' + '}'.repeat(n) + '\n';
/** The same in block style, one level per line. */
function blockNots(n: number): string {
  const lines = ['    assert:'];
  for (let i = 0; i < n; i++) lines.push(' '.repeat(6 + 2 * i) + '"!":');
  lines.push(' '.repeat(6 + 2 * n) + 'var: running');
  return lines.join('\n') + '\n';
}

function policy(text: string): string {
  const file = join(tempDir('mesh-bad-policy-'), 'policy.yaml');
  writeFileSync(file, text);
  return file;
}

interface Report {
  summary: { complete: boolean };
  findings: { ruleId: string; subject: { id: string } }[];
  notifications: { level: string; kind: string; source: string; message: string }[];
}

/** The user's view of a refused policy: exit 2, one line naming the file and a position, nothing written. */
function refused(r: { code: number; stdout: string; stderr: string }, file: string, out: string, says: RegExp): void {
  assert.is(r.code, 2, r.stderr);
  assert.is(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.is(lines.length, 1, r.stderr);
  assert.ok(lines[0]!.startsWith(`mesh-audit: ${file}:`), lines[0]);
  assert.match(lines[0]!, says);
  assert.not.match(r.stderr, 'internal error');
  assert.equal(readdirSync(out), [], 'no report written');
}

const DEEP: [string, (n: number) => string, RegExp][] = [
  // Said where it passes the bound (src/input/depth.ts); was the parser's "Maximum call stack size exceeded".
  ['flow', flowNots, /^mesh-audit: \S+:9:\d+: nested more than 64 levels deep$/],
  // This one overflowed the parser's own stack: it was "internal error", exit 3.
  ['block', blockNots, /^mesh-audit: \S+:1: YAML error: nested too deeply to be read$/],
];
for (const [style, nested, says] of DEEP) {
  // Its own process only: after a few stack overflows inside the yaml parser, V8 can abort the whole
  // process while compiling a regular expression near the stack limit ("RegExpCompiler Allocation
  // failed"), which would take this test run down with it. The CLI parses at most one such file.
  test(`10k nested "!" in ${style} style: exit 2 and one line, no crash`, () => {
    const file = policy(HEAD + rule('T1', 'deep', nested(10_000)));
    const out = tempDir('mesh-bad-policy-out-');
    refused(
      spawnCli(['evaluate', example('clean', 'snapshot.json'), '--policy', file, '--out', out, '--format', 'json']),
      file,
      out,
      says,
    );
  });
}

// A rule's own levels: the pack (1), `rules` (2), the rule (3), then one per "!" and the `var` object.
const RULE_FRAME = 4;

test('nesting up to the bound (60 "!") loads and evaluates to the right answer; one more is refused at its line', async () => {
  // clean has running containers only: an even number of "!" keeps the rule true, an odd one fails it everywhere.
  const snapshot = JSON.parse(readFileSync(example('clean', 'snapshot.json'), 'utf8')) as {
    containers: { name: string }[];
  };
  const even = await runCli([
    'evaluate',
    example('clean', 'snapshot.json'),
    '--policy',
    policy(HEAD + rule('T1', 'deep', flowNots(64 - RULE_FRAME))),
    '--out',
    tempDir(),
    '--format',
    'json',
  ]);
  assert.is(even.code, 0, even.stderr);
  const out = tempDir();
  const odd = await runCli([
    'evaluate',
    example('clean', 'snapshot.json'),
    '--policy',
    policy(HEAD + rule('T1', 'deep', blockNots(64 - RULE_FRAME - 1))),
    '--out',
    out,
    '--format',
    'json',
  ]);
  assert.is(odd.code, 1, odd.stderr);
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as Report;
  assert.is(report.findings.length, snapshot.containers.length);
  assert.ok(report.summary.complete);
  const file = policy(HEAD + rule('T1', 'deep', blockNots(64 - RULE_FRAME + 1)));
  const refusedOut = tempDir();
  refused(
    await runCli(['evaluate', example('clean', 'snapshot.json'), '--policy', file, '--out', refusedOut]),
    file,
    refusedOut,
    // The first "!" (line 10) is the 4th level, each next one a line further: the 65th is 61 lines on.
    new RegExp(`^mesh-audit: \\S+:${10 + 65 - RULE_FRAME}:\\d+: nested more than 64 levels deep$`),
  );
});

test('a snapshot nested deeper than a snapshot may be: exit 2 at its line and column, nothing written (was: a rule walking it overflowed the stack)', () => {
  // A snapshot whose ledger entry holds a deeply nested extra field, as a hand-made or foreign snapshot can.
  const snap = JSON.parse(readFileSync(example('clean', 'snapshot.json'), 'utf8')) as {
    ledger: { entries: { entry: Record<string, unknown> }[] };
  };
  const dir = tempDir();
  const file = join(dir, 'deep.json');
  const text = JSON.stringify(snap).replace(
    '"entry":{',
    `"entry":{"extra":{"deep":${'['.repeat(100_000)}1${']'.repeat(100_000)}},`,
  );
  writeFileSync(file, text);
  // The extra's first array is the 7th level (snapshot, ledger, entries, record, entry, extra): the 129th is 122 on.
  const at = text.indexOf('"deep":[') + '"deep":'.length + 1 + (129 - 7);
  const packFile = policy(
    HEAD +
      RUNNING +
      rule('T2', 'reads-extra', '    assert: {"==": [{"cat": [{"var": "extra.deep"}]}, "1"]}', 'ledger', 'note'),
  );
  const out = join(dir, 'out');
  const r = spawnCli(['evaluate', file, '--policy', packFile, '--out', out, '--format', 'json']);
  assert.is(r.code, 2, r.stderr);
  assert.is(r.stderr, `mesh-audit: ${file}:1:${at}: snapshot nests more than 128 levels deep\n`);
  assert.not.ok(existsSync(out), 'nothing written');
});

test('an alias bomb at the command line: exit 2, one line (refused by the alias bound, not expanded)', async () => {
  const row = (anchor: string, alias: string) =>
    `      ${anchor}: &${anchor} [${Array(10).fill(`*${alias}`).join(', ')}]`;
  const body = [
    '    let:',
    '      a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]',
    row('b', 'a'),
    row('c', 'b'),
    row('d', 'c'),
    row('e', 'd'),
    row('f', 'e'),
    row('g', 'f'),
    row('h', 'g'),
    '    assert: true',
  ].join('\n');
  const file = policy(HEAD + rule('T1', 'bomb', body));
  const out = tempDir();
  refused(
    await runCli(['evaluate', example('clean', 'snapshot.json'), '--policy', file, '--out', out]),
    file,
    out,
    /YAML error: .*alias/i,
  );
});

test('a %YAML 1.1 policy at the command line: exit 2, one line at line 1', async () => {
  const file = policy('%YAML 1.1\n---\n' + HEAD + RUNNING);
  const out = tempDir();
  refused(
    await runCli(['evaluate', example('clean', 'snapshot.json'), '--policy', file, '--out', out]),
    file,
    out,
    /^mesh-audit: .*:1: only YAML 1\.2 is accepted/,
  );
});

test.run();
