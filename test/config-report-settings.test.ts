import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli, spawnCli, tempDir } from './support/cli.js';
import { driftHostSnapshot } from './support/drift-host.js';

/*
 * A config file holds every setting of the nightly command (issue 28): format, profile, baseline,
 * failOnNew, promFile, waivers, beside out. A job can then run with `--config` alone.
 */
function nightlyConfig(dir: string, extra = ''): string {
  const config = join(dir, 'nightly.yaml');
  writeFileSync(
    config,
    [
      `out: ${join(dir, 'reports')}`,
      'format: sarif,json',
      'profile: nightly',
      'baseline: auto',
      'failOnNew: true',
      `promFile: ${join(dir, 'mesh-audit.prom')}`,
      extra,
    ].join('\n'),
  );
  return config;
}

test("a job with --config alone: the config's formats, baseline, failOnNew and promFile are what the run does", async () => {
  const dir = tempDir();
  const config = nightlyConfig(dir);
  const night = (name: string, drift = false) =>
    runCli(['evaluate', driftHostSnapshot(dir, name, { drift }), '--config', config]);

  const first = await night('a');
  assert.is(first.code, 0, first.stderr);
  assert.is(first.stdout, '', 'no text format: the config says sarif,json');
  assert.equal(
    readdirSync(join(dir, 'reports'))
      .filter((n) => n.startsWith('mesh-audit.'))
      .sort(),
    ['mesh-audit.json', 'mesh-audit.sarif'],
  );
  assert.match(readFileSync(join(dir, 'mesh-audit.prom'), 'utf8'), 'mesh_audit_run_complete{host="drift-host"} 1');

  const drifted = await night('b', true);
  assert.is(drifted.code, 1, 'a new error finding fails the run');
  const report = JSON.parse(readFileSync(join(dir, 'reports', 'mesh-audit.json'), 'utf8')) as {
    findings: { ruleId: string; state?: string }[];
  };
  assert.equal(
    report.findings.map((f) => [f.ruleId, f.state]),
    [['MA1001', 'new']],
  );

  const standing = await night('c', true);
  assert.is(standing.code, 0, `failOnNew: the same finding the next night does not fail it: ${standing.stderr}`);
  assert.match(
    readFileSync(join(dir, 'mesh-audit.prom'), 'utf8'),
    /mesh_audit_findings_new\{host="drift-host",rule_id="MA1001",[^}]*\} 0/,
  );
});

test("flags win over the config's reporting settings, and config show says where each came from", async () => {
  const dir = tempDir();
  const config = nightlyConfig(dir);
  const other = join(dir, 'other');
  const r = await runCli([
    'evaluate',
    driftHostSnapshot(dir, 'a', { drift: true }),
    '--config',
    config,
    '--format',
    'text,json',
    '--out',
    other,
    '--fail-on',
    'none',
  ]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, 'MA1001', 'the text table, as the flags ask');
  assert.equal(
    readdirSync(other).filter((n) => n.startsWith('mesh-audit.')),
    ['mesh-audit.json'],
  );
  assert.not.ok(existsSync(join(dir, 'reports')), "the config's out is not used");

  const shown = spawnCli(['config', 'show', '--config', config, '--format', 'json'], { MESH_AUDIT_CONFIG: '' });
  const settings = (JSON.parse(shown.stdout) as { settings: Record<string, { value: unknown; from: string }> })
    .settings;
  // Each origin is the config's key's own line.
  assert.equal(
    settings['format'],
    { value: 'sarif,json', from: `config ${config}:2` },
    "config show's own --format is not the reports' format",
  );
  assert.equal(settings['failOnNew'], { value: true, from: `config ${config}:5` });
  assert.equal(settings['promFile'], { value: join(dir, 'mesh-audit.prom'), from: `config ${config}:6` });
  assert.equal(settings['waivers'], { value: null, from: 'default' });
});

test('a bad reporting setting in the config is a usage error with its line, before anything is read', async () => {
  const dir = tempDir();
  const config = join(dir, 'nightly.yaml');
  writeFileSync(config, `out: ${join(dir, 'reports')}\nformat: sarif,xml\nbaseline: auto\nfailOnNew: yes please\n`);
  const r = await runCli(['evaluate', driftHostSnapshot(dir, 'a'), '--config', config]);
  assert.is(r.code, 2);
  assert.match(r.stderr, `${config}:2: /format must match pattern`);
  assert.match(r.stderr, `${config}:4: /failOnNew must be boolean`);
  assert.not.ok(existsSync(join(dir, 'reports')), 'nothing written');
});

test.run();
