import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, spawnCli, tempDir } from './support/cli.js';
import { promtoolCheckMetrics } from './support/promtool.js';
import { publishedSchemaErrors } from './support/published-schema.js';

/*
 * The `skip` setting (issue 47, src/policy/skip.ts): rule ids turned off on purpose, from a flag, the config file or
 * the environment. The real CLI (bin/mesh-audit.js) on the demo example: the skipped rule's findings are gone, every
 * format names the rule skipped, completeness is what it was, and an id no rule has is refused before anything is read.
 */

const NO_CONFIG = { MESH_AUDIT_SYSTEM_CONFIG: '/nonexistent/config.yaml', MESH_AUDIT_CONFIG: '', MESH_AUDIT_SKIP: '' };
const DEMO = example('demo', 'snapshot.json');

interface JsonReport {
  summary: { complete: boolean; byRule: Record<string, number>; notChecked: number };
  policy: { rulesRun: string[]; skipped?: string[] };
  findings: { ruleId: string }[];
  notifications: { level: string; source: string; message: string }[];
}
interface Sarif {
  runs: {
    results: { ruleId: string }[];
    tool: { driver: { rules: { id: string }[] } };
    invocations: { toolConfigurationNotifications?: { message: { text: string }; associatedRule: { id: string } }[] }[];
    properties: { policy: { skipped?: string[] } };
  }[];
}

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => spawnCli(args, { ...NO_CONFIG, ...env });
const jsonOf = (args: string[], env: NodeJS.ProcessEnv = {}): JsonReport => {
  const r = run([...args, '--format', 'json', '--out', '-'], env);
  assert.ok(r.code === 0 || r.code === 1 || r.code === 3, r.stderr);
  return JSON.parse(r.stdout) as JsonReport;
};

test('--skip MA2001: its findings are gone, and text, JSON and SARIF name it skipped', () => {
  const before = jsonOf(['evaluate', DEMO]);
  assert.is(before.summary.byRule['MA2001'], 2, 'the demo has MA2001 findings to lose');
  assert.is(before.policy.skipped, undefined);

  const out = tempDir();
  const r = run(['evaluate', DEMO, '--skip', 'MA2001', '--format', 'text,json,sarif', '--out', out]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stdout, /^Skipped by configuration: MA2001$/m);
  assert.not.match(r.stdout, /MA2001 no-unclaimed-container/);

  const json = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as JsonReport;
  assert.equal(json.policy.skipped, ['MA2001']);
  assert.equal(publishedSchemaErrors('report.schema.json', json), [], 'the published schema knows the field');
  assert.not.ok(json.policy.rulesRun.includes('MA2001'));
  assert.is(json.findings.filter((f) => f.ruleId === 'MA2001').length, 0);
  assert.is(json.findings.length, before.findings.length - 2, 'every other finding stays');
  assert.is(json.summary.complete, true);

  const sarif = JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8')) as Sarif;
  const [sarifRun] = sarif.runs;
  assert.equal(sarifRun!.properties.policy.skipped, ['MA2001']);
  const told = sarifRun!.invocations[0]!.toolConfigurationNotifications ?? [];
  assert.equal(
    told.map((n) => n.associatedRule.id),
    ['MA2001'],
  );
  assert.match(told[0]!.message.text, 'skipped by configuration');
  assert.is(sarifRun!.results.filter((x) => x.ruleId === 'MA2001').length, 0);
  assert.not.ok(sarifRun!.tool.driver.rules.some((x) => x.id === 'MA2001'));
});

test('skip from the config file and from $MESH_AUDIT_SKIP, added to the flag; config show tells where from', () => {
  const dir = tempDir();
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'skip:\n  - MA2001\n');
  const fromConfig = jsonOf(['evaluate', DEMO, '--config', config]);
  assert.equal(fromConfig.policy.skipped, ['MA2001']);
  const fromEnv = jsonOf(['evaluate', DEMO], { MESH_AUDIT_SKIP: 'MA2001, MA1003' });
  assert.equal(fromEnv.policy.skipped, ['MA1003', 'MA2001']);
  const all = jsonOf(['evaluate', DEMO, '--config', config, '--skip', 'MA1002,MA1003', '--skip', 'MA2004']);
  assert.equal(all.policy.skipped, ['MA1002', 'MA1003', 'MA2001', 'MA2004']);
  assert.equal(Object.keys(all.summary.byRule), ['MA1001']);
  const shown = JSON.parse(
    run(['config', 'show', '--format', 'json', '--config', config, '--skip', 'MA1003']).stdout,
  ) as {
    settings: Record<string, { value: unknown; from: string }>;
  };
  assert.equal(shown.settings['skip']!.value, ['MA2001', 'MA1003']);
  assert.match(shown.settings['skip']!.from, /^config .*config\.yaml:1 \+ flag --skip$/);
});

test('an id no rule has is refused (exit 2), with the nearest id, before anything is written', () => {
  const out = tempDir();
  const r = run(['evaluate', DEMO, '--skip', 'MA2010', '--skip', 'ma1003', '--out', out]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, "--skip: no rule 'MA2010' (did you mean 'MA2001'?)");
  assert.match(r.stderr, "--skip: no rule 'ma1003' (did you mean 'MA1003'?)");
  assert.equal(readdirSync(out), [], 'nothing written');
  const dir = tempDir();
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'failOn: none\nskip: [XX9]\n');
  const fromConfig = run(['evaluate', DEMO, '--config', config, '--format', 'json', '--out', '-']);
  assert.is(fromConfig.code, 2, fromConfig.stderr);
  assert.match(fromConfig.stderr, /skip \(config .*config\.yaml:2\): no rule 'XX9'/);
  const premigrate = run(['premigrate', '--snapshot', example('adopted-node', 'snapshot.json'), '--skip', 'MA30O1']);
  assert.is(premigrate.code, 2, premigrate.stderr);
  assert.match(premigrate.stderr, "--skip: no rule 'MA30O1' (did you mean 'MA3001'?)");
});

test("the hardening pack's ids are known outside its profile, and said skipped only where its rules run", () => {
  // One config serves the nightly run and the hardening run: an HD id is no typo for the nightly run.
  const nightly = jsonOf(['evaluate', DEMO, '--skip', 'HD2001']);
  assert.is(nightly.policy.skipped, undefined, 'HD2001 would not run here: nothing was left out');
  const hardening = jsonOf(['evaluate', DEMO, '--profile', 'hardening']);
  assert.ok(hardening.policy.rulesRun.includes('HD2001'));
  const skipped = jsonOf(['evaluate', DEMO, '--profile', 'hardening', '--skip', 'HD2001']);
  assert.equal(skipped.policy.skipped, ['HD2001']);
  assert.not.ok(skipped.policy.rulesRun.includes('HD2001'));
  assert.is(skipped.findings.filter((f) => f.ruleId === 'HD2001').length, 0);
});

test('a skipped rule makes an incomplete run neither complete nor more incomplete; other rules not checked stay', () => {
  const snap = JSON.parse(readFileSync(DEMO, 'utf8')) as { problems: unknown[] };
  snap.problems.push({
    source: 'files',
    subject: '/etc/mesh/gitea/app.ini',
    message: '/etc/mesh/gitea/app.ini: not read',
  });
  const path = join(tempDir(), 'snapshot.json');
  writeFileSync(path, JSON.stringify(snap));
  const whole = run(['evaluate', path, '--format', 'json', '--out', '-']);
  const skipping = run(['evaluate', path, '--format', 'json', '--out', '-', '--skip', 'MA2001']);
  assert.is(whole.code, 3, whole.stderr);
  assert.is(skipping.code, 3, skipping.stderr);
  const a = JSON.parse(whole.stdout) as JsonReport;
  const b = JSON.parse(skipping.stdout) as JsonReport;
  assert.is(b.summary.complete, false);
  const errors = (r: JsonReport) =>
    r.notifications.filter((n) => n.level === 'error' && n.source !== 'MA2001').map((n) => n.message);
  assert.ok(errors(a).length > 0);
  assert.equal(errors(b), errors(a));
  // A complete run stays complete.
  assert.is(jsonOf(['evaluate', DEMO, '--skip', 'MA2001']).summary.complete, true);
});

test("a baseline's findings of a skipped rule are carried forward not checked, said so, the run still complete", () => {
  const dir = tempDir();
  const baseline = join(dir, 'baseline.json');
  writeFileSync(baseline, run(['evaluate', DEMO, '--format', 'json', '--out', '-']).stdout);
  const r = run(['evaluate', DEMO, '--skip', 'MA2001', '--baseline', baseline, '--format', 'json', '--out', '-']);
  assert.is(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout) as JsonReport & {
    absent: { ruleId: string }[];
    notCheckedFindings?: { ruleId: string }[];
  };
  assert.is(report.summary.complete, true);
  assert.is(report.absent.filter((f) => f.ruleId === 'MA2001').length, 0, 'a skipped rule has not seen them go');
  assert.is(report.notCheckedFindings?.filter((f) => f.ruleId === 'MA2001').length, 2);
  assert.ok(report.notifications.some((n) => n.message.includes('(MA2001: skipped by configuration)')));
});

test('premigrate --skip: the text, Markdown and JSON reports name the rule skipped', () => {
  const base = ['premigrate', '--snapshot', example('adopted-node', 'snapshot.json'), '--out', '-'];
  const args = [...base, '--skip', 'MA3002'];
  const text = run([...args, '--format', 'text']);
  assert.match(text.stdout, /^Skipped by configuration \(not evaluated\): MA3002$/m);
  const md = run([...args, '--format', 'md']);
  assert.match(md.stdout, /^Skipped by configuration \(not evaluated\): MA3002\.$/m);
  const raw = run([...args, '--format', 'json']).stdout;
  const json = JSON.parse(raw) as { policy: { skipped: string[] } };
  assert.equal(json.policy.skipped, ['MA3002']);
  assert.not.match(raw, '"ruleId": "MA3002"', 'no finding of the skipped rule');
  assert.match(run([...base, '--format', 'json']).stdout, '"ruleId": "MA3002"', 'which it has without skip');
});

test('JSON Lines, JUnit and Prometheus say the rule skipped too; JUnit stays valid, the metrics pass promtool', () => {
  const out = tempDir();
  const r = run(['evaluate', DEMO, '--skip', 'MA2001', '--format', 'jsonl,junit,prom', '--out', out]);
  assert.is(r.code, 1, r.stderr);
  const lines = readFileSync(join(out, 'mesh-audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { ruleId?: string; skipped?: boolean; host: string });
  assert.equal(
    lines.filter((l) => l.ruleId === 'MA2001'),
    lines.filter((l) => l.skipped === true),
  );
  assert.equal(
    lines.filter((l) => l.skipped === true).map((l) => [l.host, l.ruleId]),
    [['edge-7', 'MA2001']],
  );
  const junit = join(out, 'mesh-audit.junit.xml');
  assert.match(
    readFileSync(junit, 'utf8'),
    /<testcase classname="MA2001" name="skipped by configuration">\s*<skipped>rule MA2001 skipped by configuration/,
  );
  const schema = join(PACKAGE_ROOT, 'test', 'fixtures', 'junit', 'jenkins-junit.xsd');
  const lint = spawnSync('xmllint', ['--noout', '--schema', schema, junit], { encoding: 'utf8' });
  assert.is(lint.status, 0, `${lint.stderr}${lint.error?.message ?? ''}`);
  const prom = readFileSync(join(out, 'mesh-audit.prom'), 'utf8');
  assert.match(prom, /^mesh_audit_rules_skipped\{host="edge-7"\} 1$/m);
  assert.not.match(prom, /rule_id="MA2001"/);
  const check = promtoolCheckMetrics(prom);
  assert.ok(check.ok, check.output);
});

test.run();
