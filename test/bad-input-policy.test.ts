import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
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
  // The parser reports this one itself, where it gave up.
  ['flow', flowNots, /^mesh-audit: \S+:\d+:\d+: YAML error: Maximum call stack size exceeded$/],
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

test('nesting the YAML parser accepts (300 "!") loads and evaluates to the right answer', async () => {
  // clean has running containers only: an even number of "!" keeps the rule true, an odd one fails it everywhere.
  const snapshot = JSON.parse(readFileSync(example('clean', 'snapshot.json'), 'utf8')) as {
    containers: { name: string }[];
  };
  const even = await runCli([
    'evaluate',
    example('clean', 'snapshot.json'),
    '--policy',
    policy(HEAD + rule('T1', 'deep', flowNots(300))),
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
    policy(HEAD + rule('T1', 'deep', blockNots(301))),
    '--out',
    out,
    '--format',
    'json',
  ]);
  assert.is(odd.code, 1, odd.stderr);
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as Report;
  assert.is(report.findings.length, snapshot.containers.length);
  assert.ok(report.summary.complete);
});

test('an expression that overflows the stack at evaluation is a notification; the other rules still report', async () => {
  // A snapshot whose ledger entry holds a deeply nested extra field (as a hand-made or foreign snapshot
  // can): a rule that turns it into text recurses once per level.
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
  const packFile = policy(
    HEAD +
      RUNNING +
      rule('T2', 'reads-extra', '    assert: {"==": [{"cat": [{"var": "extra.deep"}]}, "1"]}', 'ledger', 'note'),
  );
  const out = join(dir, 'out');
  const r = spawnCli(['evaluate', file, '--policy', packFile, '--out', out, '--format', 'json']);
  assert.is(r.code, 3, r.stderr);
  assert.not.match(r.stderr, 'internal error');
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as Report;
  assert.is(report.summary.complete, false);
  const failed = report.notifications.filter((n) => n.kind === 'evaluation');
  assert.is(failed.length, 1, JSON.stringify(report.notifications));
  assert.match(
    failed[0]!.message,
    /^rule T2 \(reads-extra\) failed on ledger-entry \S+: Maximum call stack size exceeded$/,
  );
  // T2 on every other entry was still evaluated (their extra.deep is null: cat gives "", a finding each).
  assert.equal(
    report.findings.map((f) => f.ruleId),
    Array(snap.ledger.entries.length - 1).fill('T2'),
  );
  const other = await runCli([
    'evaluate',
    file,
    '--policy',
    policy(HEAD + rule('T0', 'every-container-stopped', '    assert: {"!": {"var": "running"}}')),
    '--out',
    tempDir(),
    '--format',
    'text',
  ]);
  assert.is(other.code, 1, 'the same snapshot still gives findings to a rule that does not read the deep field');
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
