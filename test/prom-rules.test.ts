import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse, stringify } from 'yaml';
import { PACKAGE_ROOT } from '../src/paths.js';
import { runCli, tempDir } from './support/cli.js';
import { driftHostSnapshot } from './support/drift-host.js';
import { HostModel } from './support/host-model.js';
import { requireRoot, rootTest } from './support/root.js';
import { hasPromtool, promtoolCheckMetrics, promtoolPath } from './support/promtool.js';

// Real promtool (Debian's prometheus package); in CI it must be there.
const it = hasPromtool() || process.env['CI'] === 'true' ? test : test.skip;
const RULES = join(PACKAGE_ROOT, 'examples', 'alerting', 'mesh-audit.rules.yml');
/** The scanner's clock, a minute after promtool's time 0: its timestamps are what the rules compare with time(). */
const at = (seconds: number) => new Date(seconds * 1000);

/** A textfile's samples as promtool input series, each scraped unchanged every minute for 2,000 minutes. */
function inputSeries(textfile: string): { series: string; values: string }[] {
  return textfile
    .split('\n')
    .filter((l) => l.length > 0 && !l.startsWith('#'))
    .map((l) => {
      const cut = l.lastIndexOf(' ');
      return { series: l.slice(0, cut), values: `${l.slice(cut + 1)}+0x2000` };
    });
}

function promtoolTestRules(dir: string, tests: unknown[]): { status: number | null; output: string } {
  const file = join(dir, 'mesh-audit.rules.test.yml');
  writeFileSync(file, stringify({ rule_files: [RULES], evaluation_interval: '1m', tests }));
  const r = spawnSync(promtoolPath()!, ['test', 'rules', file], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

it('the shipped alerting rules fire as documented on textfiles the scanner wrote (promtool test rules)', async () => {
  const dir = tempDir();
  const textfiles = join(dir, 'textfile-collector');
  mkdirSync(textfiles);
  const promFile = join(textfiles, 'mesh-audit.prom');
  const run = (snap: string, seconds: number) =>
    runCli(
      [
        'evaluate',
        snap,
        '--out',
        join(dir, 'reports'),
        '--format',
        'json',
        '--baseline',
        'auto',
        '--prom-file',
        promFile,
        '--fail-on',
        'none',
      ],
      at(seconds),
    );

  // A clean first run, then the drift appears: one new error finding.
  await run(driftHostSnapshot(dir, 'a'), 60);
  assert.is((await run(driftHostSnapshot(dir, 'b', { drift: true }), 120)).code, 0);
  const drifted = readFileSync(promFile, 'utf8');
  assert.ok(promtoolCheckMetrics(drifted).ok, promtoolCheckMetrics(drifted).output);
  // Then a scan that could not read the engine.
  const broken = new HostModel('drift-host', '2026-10-02T03:00:00Z')
    .problem({ source: 'docker', message: 'cannot reach the Docker engine' })
    .ledger([])
    .build();
  writeFileSync(join(dir, 'broken.json'), JSON.stringify(broken));
  assert.is((await run(join(dir, 'broken.json'), 180)).code, 3);
  const incomplete = readFileSync(promFile, 'utf8');

  const newError = {
    exp_labels: {
      severity: 'critical',
      host: 'drift-host',
      rule_id: 'MA1001',
      rule: 'container-env-matches-composed-file',
    },
    exp_annotations: {
      summary: 'drift-host: 1 new error finding(s) of MA1001 container-env-matches-composed-file',
      description:
        'The last mesh-audit run on drift-host found 1 error finding(s) of rule MA1001 (container-env-matches-composed-file) that were not there the run before. Read the report (mesh-audit.json or the text output) for what and where.',
      runbook_url: 'https://github.com/mesh-audit/mesh-audit/blob/main/docs/rules/MA1001.md',
    },
  };
  const noRun = {
    exp_labels: { severity: 'warning', host: 'drift-host' },
    exp_annotations: {
      summary: 'drift-host: no mesh-audit run for more than 26 hours',
      description:
        'The nightly mesh-audit job on drift-host has not written its metrics for more than 26 hours: check its timer or cron job and its logs.',
      runbook_url: 'https://github.com/mesh-audit/mesh-audit#scanning-a-live-host',
    },
  };
  const incompleteAlert = {
    exp_labels: { severity: 'warning', host: 'drift-host' },
    exp_annotations: {
      summary: 'drift-host: the last mesh-audit scan was incomplete',
      description:
        "Something could not be read or a rule failed on drift-host: the findings are not the whole truth (findings may be missing, and none were declared gone). The report's notifications say what was not checked.",
      runbook_url: 'https://github.com/mesh-audit/mesh-audit#exit-codes',
    },
  };
  const noSuccess = {
    exp_labels: { severity: 'critical', host: 'drift-host' },
    exp_annotations: {
      summary: 'drift-host: no complete mesh-audit run for 26 hours',
      description:
        'Every mesh-audit run on drift-host for 26 hours was incomplete: nothing has been fully checked since.',
      runbook_url: 'https://github.com/mesh-audit/mesh-audit#exit-codes',
    },
  };
  const result = promtoolTestRules(dir, [
    {
      name: 'a new error finding, a complete run',
      interval: '1m',
      input_series: inputSeries(drifted),
      alert_rule_test: [
        { eval_time: '5m', alertname: 'MeshAuditNewErrorFindings', exp_alerts: [newError] },
        { eval_time: '5m', alertname: 'MeshAuditScanIncomplete', exp_alerts: [] },
        { eval_time: '5m', alertname: 'MeshAuditNoRecentRun', exp_alerts: [] },
        // The job stopped: the collector goes on exporting the last file, whose time grows old.
        { eval_time: '25h', alertname: 'MeshAuditNoRecentRun', exp_alerts: [] },
        { eval_time: '27h', alertname: 'MeshAuditNoRecentRun', exp_alerts: [noRun] },
        { eval_time: '27h', alertname: 'MeshAuditNoSuccessfulRun', exp_alerts: [] },
      ],
    },
    {
      name: 'an incomplete run, and no complete one for 26 hours',
      interval: '1m',
      input_series: inputSeries(incomplete),
      alert_rule_test: [
        { eval_time: '5m', alertname: 'MeshAuditScanIncomplete', exp_alerts: [incompleteAlert] },
        { eval_time: '5m', alertname: 'MeshAuditNewErrorFindings', exp_alerts: [] },
        { eval_time: '25h', alertname: 'MeshAuditNoSuccessfulRun', exp_alerts: [] },
        { eval_time: '26h10m', alertname: 'MeshAuditNoSuccessfulRun', exp_alerts: [noSuccess] },
      ],
    },
  ]);
  assert.is(result.status, 0, result.output);
  assert.match(result.output, 'SUCCESS');
});

it('the textfile series are stable: every rule and severity is there before a finding, and stays at 0 when it is gone', async () => {
  const dir = tempDir();
  const promFile = join(dir, 'mesh-audit.prom');
  const series = () =>
    inputSeries(readFileSync(promFile, 'utf8'))
      .map((s) => s.series)
      .filter((s) => !s.startsWith('mesh_audit_run_duration'));
  const run = (snap: string) =>
    runCli([
      'evaluate',
      snap,
      '--out',
      join(dir, 'reports'),
      '--format',
      'json',
      '--baseline',
      'auto',
      '--prom-file',
      promFile,
      '--fail-on',
      'none',
    ]);
  await run(driftHostSnapshot(dir, 'a'));
  await run(driftHostSnapshot(dir, 'b'));
  const before = series();
  await run(driftHostSnapshot(dir, 'c', { drift: true }));
  assert.equal(series(), before, 'a new finding changes values, not series');
  await run(driftHostSnapshot(dir, 'd'));
  assert.equal(series(), before, 'a finding gone: still the same series');
  const text = readFileSync(promFile, 'utf8');
  assert.match(
    text,
    'mesh_audit_findings{host="drift-host",rule_id="MA1001",rule="container-env-matches-composed-file",severity="error"} 0',
  );
  assert.not.match(text, 'state=');
  // MA2001 can be a note, a warning or an error (escalated): three series.
  assert.is(before.filter((s) => s.startsWith('mesh_audit_findings{') && s.includes('rule_id="MA2001"')).length, 3);
});

// A folder owned by someone else needs root to make.
rootTest(
  '--prom-file: a regular 0644 file in a folder another user owns, replacing a planted symlink without following it',
  async () => {
    requireRoot();
    const dir = tempDir();
    const collector = join(dir, 'node-exporter');
    mkdirSync(collector);
    chmodSync(dir, 0o755);
    chownSync(collector, 65534, 65534); // nobody: the exporter's user, not ours
    chmodSync(collector, 0o755);
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'do not touch\n');
    const promFile = join(collector, 'mesh-audit.prom');
    symlinkSync(victim, promFile);
    const r = await runCli([
      'evaluate',
      driftHostSnapshot(dir, 'a'),
      '--out',
      join(dir, 'reports'),
      '--format',
      'json',
      '--prom-file',
      promFile,
    ]);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stderr, `wrote ${promFile}`);
    const info = lstatSync(promFile);
    assert.ok(info.isFile() && !info.isSymbolicLink(), 'a regular file, not a link into the reports');
    assert.is(info.mode & 0o777, 0o644);
    assert.is(readFileSync(victim, 'utf8'), 'do not touch\n');
    assert.match(readFileSync(promFile, 'utf8'), 'mesh_audit_run_complete{host="drift-host"} 1');
    assert.is(statSync(collector).uid, 65534, 'the folder is left as it was');

    // A folder anyone may write to is refused, and so is a name the collector would not read.
    chmodSync(collector, 0o777);
    const open = await runCli([
      'evaluate',
      driftHostSnapshot(dir, 'b'),
      '--out',
      join(dir, 'reports'),
      '--format',
      'json',
      '--prom-file',
      promFile,
    ]);
    assert.is(open.code, 3);
    assert.match(open.stderr, 'world-writable');
    chmodSync(collector, 0o755);
    // A name the collector would not read is a usage error, found before anything is evaluated (exit 2).
    const badName = await runCli([
      'evaluate',
      driftHostSnapshot(dir, 'c'),
      '--out',
      join(dir, 'reports'),
      '--format',
      'json',
      '--prom-file',
      join(collector, 'metrics.txt'),
    ]);
    assert.is(badName.code, 2);
    assert.match(badName.stderr, ".prom'");
  },
);

it('the promtool test shipped beside the rules passes, and its input series are ones the scanner writes', async () => {
  const shipped = join(PACKAGE_ROOT, 'examples', 'alerting', 'mesh-audit.rules.test.yml');
  // From another folder: the test names its rules file relative to itself, as installed under /usr/share/mesh-audit/alerting.
  const r = spawnSync(promtoolPath()!, ['test', 'rules', shipped], {
    cwd: tempDir(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.is(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, 'SUCCESS');

  const dir = tempDir();
  const promFile = join(dir, 'mesh-audit.prom');
  const written = new Set<string>();
  for (const [tag, opts] of [
    ['a', {}],
    ['b', { drift: true }],
  ] as const) {
    await runCli([
      'evaluate',
      driftHostSnapshot(dir, tag, opts),
      '--out',
      join(dir, 'reports'),
      '--format',
      'json',
      '--baseline',
      'auto',
      '--prom-file',
      promFile,
      '--fail-on',
      'none',
    ]);
    for (const s of inputSeries(readFileSync(promFile, 'utf8')))
      written.add(s.series.replace('host="drift-host"', 'host="web-1"'));
  }
  const tests = (parse(readFileSync(shipped, 'utf8')) as { tests: { input_series: { series: string }[] }[] }).tests;
  const used = tests.flatMap((t) => t.input_series.map((s) => s.series));
  assert.ok(used.length > 5);
  assert.equal(
    used.filter((s) => !written.has(s)),
    [],
    'series the scanner never writes',
  );
});

test.run();
