import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildSubjects } from '../src/facts/subjects.js';
import { evaluate } from '../src/evaluate/evaluate.js';
import { loadPolicies } from '../src/policy/load.js';
import { HostModel } from './support/host-model.js';
import { driftHostSnapshot } from './support/drift-host.js';
import { runCli, tempDir } from './support/cli.js';
import { hasPromtool, promtoolCheckMetrics } from './support/promtool.js';
import { multitoolErrors } from './support/multitool.js';

interface Report {
  findings: {
    ruleName: string;
    state?: string;
    fingerprint: string;
    subject: { id: string };
    suppressed?: { justification: string };
  }[];
  absent?: { ruleName: string; state: string }[];
  summary: { byState?: Record<string, number>; suppressed: number };
  notifications: { level: string; message: string }[];
}
const readReport = (out: string): Report => JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as Report;

test('baseline auto: unchanged twice, then exactly one new, then one absent (acceptance)', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const args = (snap: string) => [
    'evaluate',
    snap,
    '--out',
    out,
    '--format',
    'json,sarif',
    '--baseline',
    'auto',
    '--fail-on-new',
    '--fail-on',
    'note',
  ];
  const first = await runCli(args(driftHostSnapshot(dir, 'a')));
  assert.is(first.code, 0, first.stderr);
  const second = await runCli(args(driftHostSnapshot(dir, 'b')));
  assert.is(second.code, 0, 'all unchanged: --fail-on-new passes');
  assert.ok(readReport(out).findings.every((f) => f.state === 'unchanged'));

  const drifted = await runCli(args(driftHostSnapshot(dir, 'c', { drift: true })));
  assert.is(drifted.code, 1, 'one new finding fails --fail-on-new');
  const news = readReport(out).findings.filter((f) => f.state === 'new');
  assert.equal(
    news.map((f) => f.ruleName),
    ['container-env-matches-composed-file'],
  );

  const healed = await runCli(args(driftHostSnapshot(dir, 'd')));
  assert.is(healed.code, 0);
  const report = readReport(out);
  assert.equal(
    report.absent!.map((f) => f.ruleName),
    ['container-env-matches-composed-file'],
  );
  assert.is(report.summary.byState!['absent'], 1);

  // SARIF: baselineState on every result, the absent one included, and the Multitool still validates it.
  const sarif = JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8'));
  const results = sarif.runs[0].results as { baselineState?: string }[];
  assert.ok(results.length > 0 && results.every((r) => r.baselineState !== undefined));
  assert.ok(results.some((r) => r.baselineState === 'absent'));
  assert.equal(multitoolErrors(join(out, 'mesh-audit.sarif')), []);
});

test('an incomplete run declares nothing absent: what was not read is not gone', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  await runCli(['evaluate', driftHostSnapshot(dir, 'a', { drift: true }), '--out', out, '--format', 'json']);
  const broken = new HostModel('drift-host', '2026-10-02T03:00:00Z')
    .problem({ source: 'docker', message: 'cannot reach the Docker engine' })
    .ledger([])
    .build();
  writeFileSync(join(dir, 'broken.json'), JSON.stringify(broken));
  const r = await runCli([
    'evaluate',
    join(dir, 'broken.json'),
    '--out',
    out,
    '--format',
    'json',
    '--baseline',
    'auto',
  ]);
  assert.is(r.code, 3);
  assert.equal(readReport(out).absent, []);
});

test('fingerprints: equal when the container is recreated under its name, different for another key or port', async () => {
  const rules = (await loadPolicies()).flatMap((p) => p.rules);
  const build = (key: string, port: number, id?: string) =>
    new HostModel('fp', '2026-10-01T00:00:00Z')
      .file('/etc/mesh/a.env', `${key}=new\n`)
      .container({
        name: 'app',
        ...(id ? { id } : {}),
        network: 'host',
        labels: { 'mesh.sources': '/etc/mesh/a.env' },
        env: { [key]: 'old' },
        proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port }] },
      })
      .ledger([{ id: 'app', type: 'container', target: 'app', holds: [1] }])
      .build();
  const fps = (snap: ReturnType<typeof build>) =>
    evaluate(snap, buildSubjects(snap), rules)
      .findings.map((f) => `${f.ruleName} ${f.fingerprint}`)
      .sort();
  const a = build('DATABASE_URL', 8080);
  const recreated = build('DATABASE_URL', 8080, 'f'.repeat(64)); // a new container id, same name
  assert.not.equal(a.containers[0]!.id, recreated.containers[0]!.id);
  assert.equal(fps(a), fps(recreated));
  const otherKey = fps(build('REDIS_URL', 8080)).find((f) => f.startsWith('container-env'));
  const otherPort = fps(build('DATABASE_URL', 9090)).filter((f) => f.startsWith('ports-match'));
  assert.not.ok(fps(a).includes(otherKey!));
  assert.not.equal(
    otherPort,
    fps(a).filter((f) => f.startsWith('ports-match')),
  );
});

test('waivers: a waived finding stays as a SARIF suppression and does not fail; expired ones count and are reported; unmatched ones are notes', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const waivers = join(dir, 'waivers.yaml');
  writeFileSync(
    waivers,
    [
      'waivers:',
      '  - rule: no-unclaimed-container',
      '    subject: str*',
      '    justification: debugging container kept until the vendor ships a fix',
      '    expires: 2026-12-31',
      '  - rule: MA1001',
      '    subject: app',
      '    justification: cut-over of the database address is scheduled for Friday',
      '    expires: 2026-09-30',
      '  - rule: declared-resource-present',
      '    subject: nothing-matches-this',
      '    justification: left over from an old migration plan',
      '    expires: 2027-01-31',
      '',
    ].join('\n'),
  );
  const snap = driftHostSnapshot(dir, 's', { drift: true, stray: true });
  const r = await runCli([
    'evaluate',
    snap,
    '--out',
    out,
    '--format',
    'json,sarif,text',
    '--waivers',
    waivers,
    '--fail-on',
    'note',
  ]);
  const report = readReport(out);
  const stray = report.findings.find((f) => f.subject.id === 'stray');
  assert.match(stray!.suppressed!.justification, 'vendor ships a fix');
  const drift = report.findings.find((f) => f.ruleName === 'container-env-matches-composed-file');
  assert.is(drift!.suppressed, undefined, 'the expired waiver suppresses nothing');
  assert.ok(
    report.findings.some((f) => f.ruleName === 'waiver-expired'),
    'the expired waiver is reported',
  );
  assert.ok(report.notifications.some((n) => n.level === 'note' && n.message.includes('matched no finding')));
  assert.is(r.code, 1, "the expired waiver's finding fails the run");
  assert.match(r.stdout, 'waived until 2026-12-31');

  const sarif = JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8'));
  // The waived result is in a run of its own, where every result has its suppression; the main run has none.
  type Result = { suppressions?: { kind: string; status: string; justification: string }[]; ruleId: string };
  const [main, waivedRun] = sarif.runs as { results: Result[] }[];
  assert.ok(
    main!.results.every((x) => x.suppressions === undefined),
    'no suppressions in the main run',
  );
  const suppressed = waivedRun!.results;
  assert.is(suppressed.length, 1);
  assert.ok(suppressed.every((x) => x.suppressions!.length === 1));
  assert.equal(
    { kind: suppressed[0]!.suppressions![0]!.kind, status: suppressed[0]!.suppressions![0]!.status },
    { kind: 'external', status: 'accepted' },
  );
  assert.equal(multitoolErrors(join(out, 'mesh-audit.sarif')), []);

  // Only the waived finding left: the run passes.
  const clean = driftHostSnapshot(dir, 'only-stray', { stray: true });
  writeFileSync(waivers, readFileSync(waivers, 'utf8').split('  - rule: MA1001')[0]!);
  assert.is(
    (await runCli(['evaluate', clean, '--out', out, '--format', 'json', '--waivers', waivers, '--fail-on', 'note']))
      .code,
    0,
  );
});

test('an invalid waivers file is exit 2 with file and line: no justification, no expiry, unknown rule', async () => {
  const dir = tempDir();
  const snap = driftHostSnapshot(dir, 's');
  const cases: [string, number, string][] = [
    [
      'waivers:\n  - rule: MA1001\n    subject: app\n    expires: 2027-01-01\n',
      2,
      "must have required property 'justification'",
    ],
    [
      'waivers:\n  - rule: MA1001\n    subject: app\n    justification: long enough reason\n',
      2,
      "must have required property 'expires'",
    ],
    [
      'waivers:\n  - rule: MA1001\n    subject: app\n    justification: long enough reason\n    expires: someday\n',
      5,
      'must match format "date"',
    ],
    [
      'waivers:\n  - rule: no-such-rule\n    subject: app\n    justification: long enough reason\n    expires: 2027-01-01\n',
      2,
      'no-such-rule',
    ],
  ];
  for (const [text, line, says] of cases) {
    const file = join(dir, 'w.yaml');
    writeFileSync(file, text);
    const r = await runCli(['evaluate', snap, '--out', join(dir, 'out'), '--waivers', file]);
    assert.is(r.code, 2, text);
    assert.match(r.stderr, `${file}:${line}:`);
    assert.match(r.stderr, says);
  }
});

test('JSON Lines: one finding per line with host, rule, severity, state, fingerprint, subject, message', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  await runCli(['evaluate', driftHostSnapshot(dir, 'a'), '--out', out, '--format', 'json']);
  await runCli([
    'evaluate',
    driftHostSnapshot(dir, 'b', { drift: true, stray: true }),
    '--out',
    out,
    '--format',
    'jsonl',
    '--baseline',
    'auto',
  ]);
  const lines = readFileSync(join(out, 'mesh-audit.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(lines.length >= 2);
  for (const l of lines)
    for (const key of ['host', 'ruleId', 'severity', 'state', 'fingerprint', 'subject', 'message'])
      assert.ok(key in l, `${key} in ${JSON.stringify(l)}`);
  assert.ok(lines.every((l) => l['state'] === 'new'));
  assert.is(lines[0]!['host'], 'drift-host');
});

const promTest = hasPromtool() || process.env['CI'] === 'true' ? test : test.skip;
promTest(
  'the Prometheus textfile passes promtool check metrics and counts findings by rule and severity, new ones apart',
  async () => {
    const dir = tempDir();
    const out = join(dir, 'reports');
    await runCli(['evaluate', driftHostSnapshot(dir, 'a'), '--out', out, '--format', 'prom']);
    await runCli([
      'evaluate',
      driftHostSnapshot(dir, 'b', { drift: true }),
      '--out',
      out,
      '--format',
      'prom,json',
      '--baseline',
      'auto',
    ]);
    const text = readFileSync(join(out, 'mesh-audit.prom'), 'utf8');
    const check = promtoolCheckMetrics(text);
    assert.ok(check.ok, check.output);
    assert.match(
      text,
      'mesh_audit_findings{host="drift-host",rule_id="MA1001",rule="container-env-matches-composed-file",severity="error"} 1',
    );
    assert.match(
      text,
      'mesh_audit_findings_new{host="drift-host",rule_id="MA1001",rule="container-env-matches-composed-file",severity="error"} 1',
    );
    assert.match(text, 'mesh_audit_run_complete{host="drift-host"} 1');
    assert.match(text, /mesh_audit_last_run_timestamp_seconds\{host="drift-host"\} \d+/);
    assert.match(text, /mesh_audit_run_duration_seconds\{host="drift-host"\} [\d.]+/);
  },
);

test('diff OLD NEW: new, absent and unchanged, as text and JSON', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  await runCli(['evaluate', driftHostSnapshot(dir, 'a', { stray: true }), '--out', out, '--format', 'json']);
  const runs = readdirSync(join(out, 'runs'));
  const old = join(out, 'runs', runs[0]!, 'mesh-audit.json');
  await runCli(
    ['evaluate', driftHostSnapshot(dir, 'b', { drift: true }), '--out', out, '--format', 'json'],
    new Date('2026-10-02T00:00:00Z'),
  );
  const text = await runCli(['diff', old, join(out, 'mesh-audit.json')]);
  assert.is(text.code, 0);
  assert.match(text.stdout, /New \(\d+\):[\s\S]*container-env-matches-composed-file/);
  assert.match(text.stdout, /Absent \(gone since the old report\) \(1\):[\s\S]*stray/);
  const json = JSON.parse(
    (await runCli(['diff', old, join(out, 'mesh-audit.json'), '--format', 'json'])).stdout,
  ) as Record<string, { ruleName: string }[]>;
  assert.ok(json['new']!.some((f) => f.ruleName === 'container-env-matches-composed-file'));
  assert.equal(
    json['absent']!.map((f) => f.ruleName),
    ['no-unclaimed-container'],
  );
  assert.is((await runCli(['diff', old, join(dir, 'a.json')])).code, 2, 'a snapshot is not a report');
});

test.run();
