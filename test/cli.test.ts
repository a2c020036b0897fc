import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { COMMAND_NAMES } from '../src/cli/commands.js';
import { HostModel } from './support/host-model.js';
import { example, runCli, spawnCli, tempDir } from './support/cli.js';

const GOOD_RULE = `
  - id: T1
    name: every-container-running
    title: Containers run
    severity: warning
    subject: containers
    assert: {"var": "running"}
    message: "{name} is {status}"
    help: Start it.
    remediation: Start it.
    tags: []
    profiles: [nightly]`;

const pack = (rules: string): string =>
  `schema: mesh-audit/policy@1\npack: {id: test, name: test, version: "1"}\nrules:${rules}\n`;

function policyFile(text: string): string {
  const file = join(tempDir(), 'policy.yaml');
  writeFileSync(file, text);
  return file;
}

test('--help on every command (COMMAND_NAMES, so a new command is covered) and --version', () => {
  const top = spawnCli(['--help']);
  assert.is(top.code, 0, '--help');
  assert.match(top.stdout, 'Usage:');
  for (const name of COMMAND_NAMES) {
    const r = spawnCli([name, '--help']);
    assert.is(r.code, 0, `${name} --help: ${r.stderr}`);
    assert.is(r.stderr, '', `${name} --help wrote to stderr`);
    assert.match(r.stdout, `$ mesh-audit ${name}`, `${name} --help shows its own usage line`);
    assert.match(top.stdout, name, `the top-level --help lists ${name}`);
    // Its exit codes, last: each command's own, each code once, the usage error among them (issue 47).
    const codes = r.stdout.split('\nExit codes:\n')[1] ?? '';
    assert.ok(codes.length > 0, `${name} --help lists its exit codes`);
    const listed = [...codes.matchAll(/^ {2}(\d) {2}\S/gm)].map((m) => m[1]);
    assert.ok(listed.includes('0') && listed.includes('2'), `${name}: 0 and 2 in ${codes}`);
    assert.equal(listed, [...new Set(listed)].sort(), `${name}: each code once, in order`);
  }
  assert.match(
    top.stdout,
    /\nExit codes:\n {2}0 {2}clean[^\n]*\n {2}1 {2}findings[^\n]*\n {2}2 {2}bad usage[^\n]*\n {2}3 {2}incomplete/,
  );
  const scanCodes = spawnCli(['scan', '--help']).stdout.split('\nExit codes:\n')[1]!;
  assert.match(scanCodes, /^ {2}1 {2}findings at or above --fail-on/m);
  assert.match(scanCodes, /^ {2}3 {2}incomplete/m);
  assert.match(spawnCli(['premigrate', '--help']).stdout, /^ {2}1 {2}not ready/m);
  assert.match(spawnCli(['status', '--help']).stdout, /^ {2}3 {2}incomplete or stale/m);
  assert.match(spawnCli(['evaluate', '--help']).stdout, '--fail-on');
  const v = spawnCli(['--version']);
  assert.is(v.code, 0);
  assert.match(v.stdout, /\d+\.\d+\.\d+/);
});

test('exit codes: clean 0, findings 1, --fail-on none 0, bad usage 2', async () => {
  assert.is((await runCli(['evaluate', example('clean', 'snapshot.json'), '--format', 'text'])).code, 0);
  assert.is((await runCli(['evaluate', example('demo', 'snapshot.json'), '--format', 'text'])).code, 1);
  assert.is(
    (await runCli(['evaluate', example('demo', 'snapshot.json'), '--format', 'text', '--fail-on', 'none'])).code,
    0,
  );
  // 045 has errors; with --fail-on error only they count, a warning-only host would pass.
  const bad = await runCli(['evaluate', example('clean', 'snapshot.json'), '--fail-on', 'sometimes']);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, '--fail-on must be one of');
  assert.is((await runCli(['evaluate', example('clean', 'snapshot.json'), '--format', 'pdf'])).code, 2);
  assert.is(spawnCli(['frobnicate']).code, 2);
});

test('--fail-on warning fails on a host whose worst finding is a warning', async () => {
  const dir = tempDir();
  const snap = new HostModel('warn-only', '2026-10-01T00:00:00Z')
    .container({ name: 'labelled', network: 'none', running: false, labels: { 'mesh.module': 'x' } })
    .ledger([])
    .build();
  writeFileSync(join(dir, 's.json'), JSON.stringify(snap));
  assert.is((await runCli(['evaluate', join(dir, 's.json'), '--format', 'text'])).code, 0);
  const r = await runCli(['evaluate', join(dir, 's.json'), '--format', 'text', '--fail-on', 'warning']);
  assert.is(r.code, 1);
  assert.match(r.stdout, /warning\s+MA2001/);
});

test('a bad snapshot is exit 2 with the JSON path named', async () => {
  const dir = tempDir();
  const snap = JSON.parse(readFileSync(example('clean', 'snapshot.json'), 'utf8'));
  snap.containers[0].env.DATABASE_URL = 'postgresql://raw:value@db/x';
  writeFileSync(join(dir, 's.json'), JSON.stringify(snap));
  const r = await runCli(['evaluate', join(dir, 's.json'), '--out', dir]);
  assert.is(r.code, 2);
  assert.match(r.stderr, '/containers/0/env/DATABASE_URL');
  assert.not.match(r.stderr, 'raw:value');
  assert.not.ok(existsSync(join(dir, 'mesh-audit.json')), 'nothing written');
  assert.is((await runCli(['evaluate', join(dir, 'missing.json')])).code, 2);
});

const BAD_POLICIES: { name: string; text: string; line: number; rule?: string; says: string }[] = [
  { name: 'YAML error', text: pack(GOOD_RULE) + '  - id: [unclosed\n', line: 16, says: 'YAML error: Flow sequence' },
  {
    name: 'duplicate key',
    text: pack(GOOD_RULE.replace('    severity: warning', '    severity: warning\n    severity: error')),
    line: 8,
    says: 'YAML error: Map keys must be unique',
  },
  {
    name: 'schema error',
    text: pack(GOOD_RULE.replace('severity: warning', 'severity: fatal')),
    line: 7,
    rule: 'T1',
    says: 'severity',
  },
  {
    name: 'unknown operator',
    text: pack(GOOD_RULE.replace('{"var": "running"}', '{"is_running": [{"var": "status"}]}')),
    line: 9,
    rule: 'T1',
    says: "unknown operator 'is_running'",
  },
  {
    name: 'single-key object literal',
    text: pack(GOOD_RULE.replace('{"var": "running"}', '{"==": [{"var": "labels"}, {"mesh.module": "x"}]}')),
    line: 9,
    rule: 'T1',
    says: "unknown operator 'mesh.module'",
  },
  {
    name: 'object literal',
    text: pack(GOOD_RULE.replace('{"var": "running"}', '{"==": [{"var": "labels"}, {"a": 1, "b": 2}]}')),
    line: 9,
    rule: 'T1',
    says: 'must be one operation',
  },
  {
    name: 'duplicate rule id',
    text: pack(GOOD_RULE + GOOD_RULE.replace('every-container-running', 'another-name')),
    line: 15,
    rule: 'T1',
    says: "duplicate rule id 'T1'",
  },
  {
    name: 'unknown placeholder',
    text: pack(GOOD_RULE.replace('{name} is {status}', '{name} is {colour}')),
    line: 10,
    rule: 'T1',
    says: 'unknown placeholder {colour}',
  },
];

for (const bad of BAD_POLICIES) {
  test(`a policy with a ${bad.name}: exit 2, file:line${bad.rule ? ' and rule id' : ''}, nothing evaluated`, async () => {
    const file = policyFile(bad.text);
    const out = tempDir();
    const r = await runCli(['evaluate', example('demo', 'snapshot.json'), '--policy', file, '--out', out]);
    assert.is(r.code, 2);
    assert.is(r.stdout, '', 'no table printed');
    assert.equal(readdirSync(out), [], 'no report written');
    const lines = r.stderr.trim().split('\n');
    assert.is(lines.length, 1, `one message: ${r.stderr}`);
    assert.match(r.stderr, `${file}:${bad.line}`);
    if (bad.rule) assert.match(r.stderr, `rule ${bad.rule}`);
    assert.match(r.stderr, bad.says);
  });
}

test('a rule that throws on one subject becomes a notification; other rules and subjects still report (exit 3)', async () => {
  // `each` must give a list: on a container whose name is a string it throws, on none else.
  const throwing = `
  - id: T2
    name: throws-on-one
    title: Throws on one container
    severity: note
    subject: containers
    each: {"if": [{"===": [{"var": "name"}, "gitea-server"]}, {"var": "name"}, []]}
    assert: true
    message: "never"
    help: Test rule.
    remediation: Fix it.
    tags: []
    profiles: [nightly]`;
  const file = policyFile(pack(GOOD_RULE + throwing));
  const out = tempDir();
  const snap = new HostModel('mixed', '2026-10-01T00:00:00Z')
    .container({ name: 'gitea-server', running: true })
    .container({ name: 'stopped-a', running: false })
    .container({ name: 'stopped-b', running: false })
    .ledger([])
    .build();
  writeFileSync(join(out, '..', 'mixed.json'), JSON.stringify(snap));
  const r = await runCli([
    'evaluate',
    join(out, '..', 'mixed.json'),
    '--policy',
    file,
    '--no-default-policy',
    '--out',
    out,
    '--format',
    'json,text',
  ]);
  assert.is(r.code, 3);
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8'));
  assert.is(report.summary.complete, false);
  assert.equal(
    report.findings.map((f: { subject: { id: string } }) => f.subject.id),
    ['stopped-a', 'stopped-b'],
  );
  assert.is(report.notifications.filter((n: { level: string }) => n.level === 'error').length, 1);
  assert.match(report.notifications[0].message, 'rule T2 (throws-on-one) failed on container gitea-server');
  assert.match(r.stdout, 'Not checked (1)');
});

test('the same snapshot evaluated twice gives byte-identical SARIF and JSON, time fields aside', async () => {
  const outputs: string[][] = [];
  for (const now of [new Date('2026-10-01T00:00:00Z'), new Date('2026-11-11T11:11:11Z')]) {
    const out = tempDir();
    await runCli(
      ['evaluate', example('demo', 'snapshot.json'), '--history', example('demo', 'history'), '--out', out],
      now,
    );
    outputs.push(
      ['mesh-audit.json', 'mesh-audit.sarif'].map((f) =>
        readFileSync(join(out, f), 'utf8').replaceAll(now.toISOString(), 'TIME'),
      ),
    );
  }
  assert.is(outputs[0]![0], outputs[1]![0]);
  assert.is(outputs[0]![1], outputs[1]![1]);
});

test('a fleet of snapshot files evaluated in worker threads (--jobs 3) gives the very reports of the main thread (--jobs 1)', async () => {
  const dir = tempDir();
  const files = Array.from({ length: 10 }, (_, i) => {
    const snapshot = JSON.parse(
      readFileSync(example(['045', '097', 'clean', 'demo'][i % 4]!, 'snapshot.json'), 'utf8'),
    ) as { host: { hostname: string } };
    snapshot.host.hostname = `fleet-${String(i).padStart(2, '0')}`;
    const file = join(dir, `host-${i}.json`);
    writeFileSync(file, JSON.stringify(snapshot));
    return file;
  });
  const reports = async (jobs: string) => {
    const out = tempDir();
    const r = await runCli([
      'evaluate',
      ...files,
      '--history',
      example('demo', 'history'),
      '--jobs',
      jobs,
      '--format',
      'json,sarif',
      '--out',
      out,
      '--fail-on',
      'none',
    ]);
    assert.is(r.code, 0, r.stderr);
    // A fleet's SARIF is one file per host (mesh-audit.HOST.sarif): all of them, in name order.
    const sarifFiles = readdirSync(out)
      .filter((f) => f.endsWith('.sarif'))
      .sort();
    assert.is(sarifFiles.length, files.length);
    return [
      readFileSync(join(out, 'mesh-audit.json'), 'utf8'),
      sarifFiles.map((f) => readFileSync(join(out, f), 'utf8')).join('\n'),
    ];
  };
  const [json, sarif] = await reports('3');
  const [jsonMain, sarifMain] = await reports('1');
  assert.is(json, jsonMain);
  assert.is(sarif, sarifMain);
  // More jobs than CPUs (--jobs 300 once took 4.1 GB): capped at the CPU count, said, same reports.
  const cpus = availableParallelism();
  const many = await runCli([
    'evaluate',
    ...files,
    '--history',
    example('demo', 'history'),
    '--jobs',
    '300',
    '--format',
    'json',
    '--out',
    '-',
    '--fail-on',
    'none',
  ]);
  assert.is(many.code, 0, many.stderr);
  assert.match(many.stderr, `--jobs 300 is more than this machine's ${cpus} CPUs: ${cpus} used`);
  assert.is(many.stdout, json);
  assert.equal(
    (JSON.parse(json!) as { hosts: { hostname: string }[] }).hosts.map((h) => h.hostname),
    files.map((_, i) => `fleet-${String(i).padStart(2, '0')}`),
  );

  // Two bad files: the run ends with exit 2 and names the first of them in the order given, whichever
  // worker met it first; nothing is written.
  writeFileSync(files[3]!, '{"schema": "mesh-audit/snapshot@1", ');
  writeFileSync(files[7]!, 'not json');
  const out = tempDir();
  const bad = await runCli(['evaluate', ...files, '--jobs', '3', '--out', out]);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, `${files[3]}:1:37: snapshot is not valid JSON: unexpected end of input`);
  assert.not.match(bad.stderr, files[7]!);
  assert.equal(readdirSync(out), []);
  assert.is((await runCli(['evaluate', ...files, '--jobs', '0'])).code, 2);
  // A history folder that cannot be read is said once, as on the main thread (each worker reads it).
  const noHistory = await runCli([
    'evaluate',
    ...files.slice(8),
    ...files.slice(0, 2),
    '--history',
    join(dir, 'none'),
    '--jobs',
    '2',
    '--out',
    tempDir(),
  ]);
  assert.is(noHistory.code, 2);
  assert.match(noHistory.stderr, `${join(dir, 'none')}: cannot read history folder (ENOENT)`);
});

test('colour only on a terminal: the piped table has no escape codes', () => {
  const r = spawnCli(['evaluate', 'examples/demo/snapshot.json', '--format', 'text'], { FORCE_COLOR: '1' });
  assert.is(r.code, 1);
  assert.not.match(r.stdout, '\u001b[');
});

test('rules list, show and test', () => {
  const list = spawnCli(['rules', 'list']);
  assert.is(list.code, 0);
  for (const name of ['container-env-matches-composed-file', 'no-unclaimed-container', 'no-stale-file-at-old-target'])
    assert.match(list.stdout, name);
  const show = spawnCli(['rules', 'show', 'no-unclaimed-container']);
  assert.is(show.code, 0);
  assert.match(show.stdout, 'MA2001');
  assert.match(show.stdout, 'Remediation');
  assert.is(spawnCli(['rules', 'show', 'nope']).code, 2);
  const t = spawnCli(['rules', 'test']);
  assert.is(t.code, 0, t.stdout);
  assert.match(t.stdout, /\n\d+ passed, 0 failed\n$/);
});

test('rules test fails when a case does not hold', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'p.yaml'), pack(GOOD_RULE));
  writeFileSync(
    join(dir, 'p.cases.yaml'),
    'T1:\n  pass:\n    - name: stopped passes (wrong)\n      subject: {name: a, status: exited, running: false}\n  fail:\n    - name: running fails (wrong)\n      subject: {name: a, status: running, running: true}\n',
  );
  const r = spawnCli(['rules', 'test', '--policy', join(dir, 'p.yaml')]);
  assert.is(r.code, 1);
  assert.match(r.stdout, '0 passed, 2 failed');
});

test('rules lint PACK (the pack as a word, not --policy) is refused with the command that would lint it, not run on the shipped pack', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'p.yaml'), pack(GOOD_RULE));
  const r = spawnCli(['rules', 'lint', join(dir, 'p.yaml')]);
  assert.is(r.code, 2);
  assert.is(r.stdout, '');
  assert.match(r.stderr, `mesh-audit rules lint --policy ${join(dir, 'p.yaml')}`);
  assert.is(spawnCli(['rules', 'lint', '--policy', join(dir, 'p.yaml')]).code, 0);
});

test('npm start shows the demo with both incidents and writes reports/ (acceptance)', () => {
  const pkg = JSON.parse(readFileSync(join(example('..'), 'package.json'), 'utf8')) as { scripts: { start: string } };
  const args = pkg.scripts.start
    .split('node bin/mesh-audit.js ')[1]!
    .split(' ')
    .map((a) => a.replace(/^reports$/, tempDir()));
  const r = spawnCli(args);
  assert.is(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    'DATABASE_URL=postgresql://…@:20000/… but /etc/mesh/gitea/db.env now says DATABASE_URL=postgresql://…@db.mesh.internal:20000/…',
  );
  assert.match(
    r.stdout,
    'written by the mesh and lost by its record; exposed on the host network, listening on 0.0.0.0:3999/tcp',
  );
  assert.match(r.stdout, /MA2002 no-stale-file-at-old-target\s+file \/etc\/mesh\/forge\/app.ini/);
  assert.match(r.stderr, /wrote .*mesh-audit.sarif/);
  assert.match(r.stderr, /wrote .*mesh-audit.json/);
});

test.run();
