/*
 * Packs add up (docs/writing-rules.md, "A pack of your own"): a nightly command with one pack of one's own keeps every
 * shipped finding and adds its own; replacing the shipped pack is asked for (--no-default-policy), said
 * in every format, and the baseline's findings of the rules that did not run are not checked — carried
 * forward, never absent — so that alerting does not resolve them.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditSnapshots, triage } from '../src/pipeline.js';
import { loadPolicies } from '../src/policy/load.js';
import { alertsOf } from '../src/report/alerts.js';
import { loadReportFile } from '../src/report/report-file.js';
import { loadSnapshot } from '../src/snapshot/load.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, runCli, tempDir, type CliRun } from './support/cli.js';
import { multitoolErrors } from './support/multitool.js';

const SITE_PACK = `schema: mesh-audit/policy@1
pack:
  id: site-owners
  name: site owners
  version: 0.1.0
rules:
  - id: SITE001
    name: container-names-its-owner
    title: Every running container names its owner
    severity: warning
    subject: containers
    where: {"var": "running"}
    assert: {"!!": {"var": "labels.org.example.owner"}}
    message: "{name} has no owner label"
    help: |
      Every running container names its owner.
    remediation: label it.
    tags: [site]
    profiles: [nightly]
`;

interface JsonFinding {
  ruleId: string;
  fingerprint: string;
  state?: string;
  severity: string;
}
interface JsonReport {
  summary: { complete: boolean; notCheckedFindings?: number; byState?: Record<string, number> };
  policy: { shippedPack: boolean; packs: { id: string; shipped: boolean }[] };
  findings: JsonFinding[];
  absent: JsonFinding[];
  notCheckedFindings?: JsonFinding[];
  notifications: { level: string; source: string; message: string }[];
}
interface SarifResult {
  ruleId: string;
  baselineState?: string;
  kind: string;
  partialFingerprints: Record<string, string>;
  properties: { notCheckedThisRun?: boolean };
}
interface SarifRun {
  results: SarifResult[];
  properties: { policy?: { shippedPack: boolean } };
  invocations: {
    executionSuccessful: boolean;
    toolExecutionNotifications: { level: string; message: { text: string } }[];
  }[];
  tool: { driver: { rules: { id: string; helpUri?: string }[] } };
}

const SHIPPED = /^MA\d/;

function setUp() {
  const dir = tempDir();
  const site = join(dir, 'site.yaml');
  writeFileSync(site, SITE_PACK);
  const out = join(dir, 'out');
  const prom = join(dir, 'mesh-audit.prom');
  // The nightly command (examples/nightly): a baseline from the previous run, a Prometheus textfile.
  const scan = (profile: string, ...extra: string[]): Promise<CliRun> =>
    runCli([
      'scan',
      '--snapshot',
      example('demo', 'snapshot.json'),
      '--out',
      out,
      '--baseline',
      'auto',
      '--profile',
      profile,
      '--format',
      'json,sarif,text',
      '--prom-file',
      prom,
      ...extra,
    ]);
  const nightly = (...extra: string[]): Promise<CliRun> => scan('nightly', ...extra);
  const json = (): JsonReport => JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as JsonReport;
  const sarif = (): SarifRun =>
    (JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8')) as { runs: SarifRun[] }).runs[0]!;
  return { dir, site, out, prom, scan, nightly, json, sarif };
}

test('an added --policy pack keeps every shipped finding (unchanged, none absent) and adds its own as new', async () => {
  const { site, nightly, json, sarif } = setUp();
  const first = await nightly();
  assert.is(first.code, 1, first.stderr);
  const shipped = json().findings;
  assert.ok(
    shipped.some((f) => f.severity === 'error'),
    'the demo host has shipped errors',
  );

  const added = await nightly('--policy', site);
  assert.is(added.code, 1, added.stderr);
  const report = json();
  assert.equal(report.absent, [], 'no shipped finding is gone');
  for (const f of shipped)
    assert.is(report.findings.find((g) => g.fingerprint === f.fingerprint)?.state, 'unchanged', `${f.ruleId} kept`);
  const own = report.findings.filter((f) => f.ruleId === 'SITE001');
  assert.ok(own.length > 0, 'the custom rule reports');
  assert.ok(own.every((f) => f.state === 'new'));
  assert.equal(
    report.policy.packs.map((p) => [p.id, p.shipped]),
    [
      ['mesh-core', true],
      ['site-owners', false],
    ],
  );
  assert.is(report.policy.shippedPack, true);
  assert.match(added.stdout, 'Rules: mesh-core 1.0.0 (shipped) + site-owners 0.1.0');
  assert.ok(sarif().results.every((r) => r.baselineState !== 'absent'));
});

test('--no-default-policy: the shipped findings are not checked, never absent, in JSON, SARIF, text and Prometheus; the run is complete', async () => {
  const { site, prom, nightly, json, sarif } = setUp();
  assert.is((await nightly('--policy', site)).code, 1);
  const before = json().findings;
  const shippedBefore = before.filter((f) => SHIPPED.test(f.ruleId));
  assert.ok(shippedBefore.length > 0);

  const replaced = await nightly('--policy', site, '--no-default-policy');
  // Documented (README, Exit codes): complete for the rules it ran; carried findings fail nothing.
  assert.is(replaced.code, 0, replaced.stdout + replaced.stderr);
  const report = json();
  assert.is(report.summary.complete, true);
  assert.is(report.policy.shippedPack, false);
  assert.equal(
    report.policy.packs.map((p) => p.id),
    ['site-owners'],
  );
  assert.equal(report.absent, [], 'nothing of the shipped rules is absent');
  assert.equal(
    report.notCheckedFindings?.map((f) => f.fingerprint).sort(),
    shippedBefore.map((f) => f.fingerprint).sort(),
  );
  assert.is(report.summary.notCheckedFindings, shippedBefore.length);
  assert.ok(report.findings.every((f) => f.ruleId === 'SITE001'));
  const notes = report.notifications.filter((n) => n.level === 'note').map((n) => n.message);
  assert.ok(
    notes.some((m) => m.includes('the shipped pack was not loaded')),
    notes.join('\n'),
  );
  assert.ok(
    notes.some((m) => m.includes('MA1001') && m.includes('carried forward not checked')),
    notes.join('\n'),
  );

  const run = sarif();
  assert.is(run.properties.policy?.shippedPack, false);
  assert.is(run.invocations[0]!.executionSuccessful, true);
  const shippedResults = run.results.filter((r) => SHIPPED.test(r.ruleId));
  assert.is(
    shippedResults.length,
    shippedBefore.length,
    'every shipped finding is still a result (an upload without it closes the alert)',
  );
  for (const r of shippedResults) {
    assert.is(r.baselineState, 'unchanged', r.ruleId);
    assert.is(r.kind, 'fail');
    assert.is(r.properties.notCheckedThisRun, true);
  }
  assert.ok(
    run.invocations[0]!.toolExecutionNotifications.some(
      (n) => n.level === 'note' && n.message.text.includes('shipped pack was not loaded'),
    ),
  );

  assert.match(replaced.stdout, 'the shipped pack was NOT loaded (--no-default-policy)');
  assert.match(replaced.stdout, `0 gone, ${shippedBefore.length} not checked`);
  assert.match(replaced.stdout, 'Not checked this run, still standing from earlier runs');
  assert.not.match(replaced.stdout, 'Gone since the baseline');

  // Prometheus: the shipped series still count what stands.
  const metrics = readFileSync(prom, 'utf8');
  const ma1001 = shippedBefore.filter((f) => f.ruleId === 'MA1001' && f.severity === 'error').length;
  assert.ok(ma1001 > 0);
  assert.match(
    metrics,
    new RegExp(
      `mesh_audit_findings\\{host="edge-7",rule_id="MA1001",rule="container-env-matches-composed-file",severity="error"\\} ${ma1001}\\n`,
    ),
  );

  // And back to the default: the carried findings are unchanged, not new.
  const back = await nightly('--policy', site);
  assert.is(back.code, 1);
  const again = json();
  assert.equal(again.absent, []);
  for (const f of shippedBefore)
    assert.is(again.findings.find((g) => g.fingerprint === f.fingerprint)?.state, 'unchanged', f.ruleId);
});

test('the SARIF of a run with carried findings of rules not loaded is valid for the Multitool', async () => {
  const { site, out, nightly } = setUp();
  await nightly('--policy', site);
  await nightly('--policy', site, '--no-default-policy');
  assert.equal(multitoolErrors(join(out, 'mesh-audit.sarif')), []);
});

test('Alertmanager: a rule that did not run resolves none of its alerts', async () => {
  const { site, out, nightly } = setUp();
  await nightly('--policy', site);
  const baseline = await loadReportFile(join(out, 'mesh-audit.json'));
  const now = new Date('2026-10-02T03:00:00Z');
  const packs = await loadPolicies({ added: [site], shipped: false });
  const report = triage(
    auditSnapshots(
      [await loadSnapshot(example('demo', 'snapshot.json'))],
      [],
      packs.flatMap((p) => p.rules),
      { now, packs, profile: 'nightly' },
    ),
    { baseline, now },
  );
  const alerts = alertsOf(report, { ttlHours: 25 });
  const shipped = baseline.findings.filter((f) => SHIPPED.test(f.ruleId));
  for (const f of shipped) {
    const alert = alerts.find((a) => a.labels['fingerprint'] === f.fingerprint);
    assert.ok(alert, `${f.ruleId} still alerted`);
    assert.ok(Date.parse(alert.endsAt) > now.getTime(), `${f.ruleId} renewed, not resolved`);
  }
});

test('a rule another --profile leaves out is not checked either: its findings are carried, not absent', async () => {
  const { site, scan, nightly, json } = setUp();
  await nightly('--policy', site);
  const own = json().findings.filter((f) => f.ruleId === 'SITE001');
  assert.ok(own.length > 0);
  // SITE001 is a nightly rule: a premigration run does not run it.
  const r = await scan('premigration', '--policy', site);
  assert.is(r.code, 1, r.stderr);
  const report = json();
  assert.equal(report.absent, []);
  assert.equal(report.notCheckedFindings?.map((f) => f.fingerprint).sort(), own.map((f) => f.fingerprint).sort());
  assert.ok(
    report.notifications.some(
      (n) => n.level === 'note' && n.message.includes('SITE001') && n.message.includes('another --profile'),
    ),
  );
});

test('diff: a finding whose rule the newer report did not run is not checked, not absent', async () => {
  const { dir, site, out, nightly, json } = setUp();
  await nightly('--policy', site);
  const older = join(out, 'mesh-audit.json');
  const shipped = json().findings.filter((f) => SHIPPED.test(f.ruleId));
  const newer = join(dir, 'newer');
  // Without a baseline: nothing carried, so the newer report alone must say what it ran.
  assert.is(
    (
      await runCli([
        'evaluate',
        example('demo', 'snapshot.json'),
        '--policy',
        site,
        '--no-default-policy',
        '--out',
        newer,
        '--format',
        'json',
        '--fail-on',
        'none',
      ])
    ).code,
    0,
  );
  const r = await runCli(['diff', older, join(newer, 'mesh-audit.json'), '--format', 'json']);
  assert.is(r.code, 0, r.stderr);
  const diff = JSON.parse(r.stdout) as { absent: unknown[]; notChecked: { fingerprint: string }[] };
  assert.equal(diff.absent, []);
  assert.equal(diff.notChecked.map((f) => f.fingerprint).sort(), shipped.map((f) => f.fingerprint).sort());
  assert.match(
    (await runCli(['diff', older, join(newer, 'mesh-audit.json')])).stdout,
    `Not checked in the new report (${shipped.length})`,
  );
});

test('a rule id or pack id the shipped pack has is a clear error (exit 2) naming both places and the way to replace on purpose', async () => {
  const dir = tempDir();
  const clash = join(dir, 'clash.yaml');
  writeFileSync(clash, SITE_PACK.replace('SITE001', 'MA1001'));
  const r = await runCli([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--policy',
    clash,
    '--out',
    '-',
    '--format',
    'json',
  ]);
  assert.is(r.code, 2);
  assert.match(r.stderr, `${clash}:7: rule MA1001: duplicate rule id 'MA1001' (first at `);
  assert.match(r.stderr, join('mesh-core', 'MA1-drift.yaml:'));
  assert.match(r.stderr, '--no-default-policy');
  // An edited copy of the shipped pack folder: the same pack id.
  const copy = join(dir, 'mesh-core');
  cpSync(join(PACKAGE_ROOT, 'policies', 'mesh-core'), copy, { recursive: true });
  const drift = join(copy, 'MA1-drift.yaml');
  writeFileSync(drift, readFileSync(drift, 'utf8').replace('severity: error', 'severity: note'));
  const edited = await runCli(['rules', 'list', '--policy', copy]);
  assert.is(edited.code, 2);
  assert.match(edited.stderr, `${copy}: duplicate pack id 'mesh-core'`);
  assert.match(edited.stderr, '--no-default-policy');
  // The same copy replacing the shipped pack on purpose is fine.
  assert.is((await runCli(['rules', 'list', '--policy', copy, '--no-default-policy'])).code, 0);
  // The shipped pack named again (a byte-identical copy of its folder) is loaded once.
  const same = join(dir, 'same');
  cpSync(join(PACKAGE_ROOT, 'policies', 'mesh-core'), same, { recursive: true });
  const once = await runCli(['rules', 'list', '--policy', same]);
  assert.is(once.code, 0, once.stderr);
  assert.is(once.stdout.split('\n').filter((l) => l.startsWith('MA1001 ')).length, 1);
});

test("--no-default-policy without a pack of one's own is a usage error", async () => {
  const r = await runCli([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--no-default-policy',
    '--out',
    '-',
    '--format',
    'json',
  ]);
  assert.is(r.code, 2);
  assert.match(r.stderr, 'leaves no rule to run');
});

test('the config file adds packs (relative to its folder) and can replace the shipped pack; --policy adds to its packs', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'site.yaml'), SITE_PACK);
  const other = join(dir, 'other.yaml');
  writeFileSync(
    other,
    SITE_PACK.replace('SITE001', 'SITE002')
      .replace('container-names-its-owner', 'container-names-its-team')
      .replace('site-owners', 'site-teams'),
  );
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'policy: [site.yaml]\n');
  const run = async (...extra: string[]) => {
    const r = await runCli([
      'evaluate',
      example('demo', 'snapshot.json'),
      '--config',
      config,
      '--out',
      '-',
      '--format',
      'json',
      '--fail-on',
      'none',
      ...extra,
    ]);
    assert.is(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as JsonReport;
  };
  assert.equal(
    (await run()).policy.packs.map((p) => p.id),
    ['mesh-core', 'site-owners'],
  );
  assert.equal(
    (await run('--policy', other)).policy.packs.map((p) => p.id),
    ['mesh-core', 'site-owners', 'site-teams'],
  );
  const shown = await runCli(['config', 'show', '--config', config, '--format', 'json']);
  const settings = (JSON.parse(shown.stdout) as { settings: Record<string, { value: unknown; from: string }> })
    .settings;
  assert.equal(settings['policy']?.value, [join(dir, 'site.yaml')]);
  assert.is(settings['defaultPolicy']?.value, true);
  writeFileSync(config, 'policy: [site.yaml]\ndefaultPolicy: false\n');
  const replaced = await run();
  assert.is(replaced.policy.shippedPack, false);
  assert.equal(
    replaced.policy.packs.map((p) => p.id),
    ['site-owners'],
  );
});

test.run();
