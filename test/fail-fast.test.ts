import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, runCli, tempDir } from './support/cli.js';

// Issue 28, item 7; issue 31, item 9: a usage error is found before the host is read. It keeps no
// snapshot, writes nothing, and does not take a run number; it exits 2 and says what to fix, a config
// mistake with its key's own file:line and the nearest known key or value.

const dir = tempDir();
const out = join(dir, 'reports');
const ledger = join(dir, 'ledger.json');
writeFileSync(ledger, '[]\n');
// An engine that is not there: a scan that got as far as reading the host says so on stderr.
const scan = (extra: string[]) =>
  runCli([
    'scan',
    '--docker-host',
    `unix://${join(dir, 'no-engine.sock')}`,
    '--ledger',
    ledger,
    '--hostname',
    'ff',
    '--out',
    out,
    '--format',
    'json',
    ...extra,
  ]);
const write = (name: string, text: string): string => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};
const emptyConfig = write('empty.yaml', '{}\n');

/** What a run leaves in the output folder: its run number, kept snapshots, run folders. */
function folderState(): { sequence: string | null; history: string[]; runs: string[] } {
  const list = (d: string): string[] => (existsSync(d) ? readdirSync(d, { recursive: true }).map(String).sort() : []);
  return {
    sequence: existsSync(join(out, '.mesh-audit.sequence'))
      ? readFileSync(join(out, '.mesh-audit.sequence'), 'utf8')
      : null,
    history: list(join(out, 'history')),
    runs: list(join(out, 'runs')),
  };
}

let before: ReturnType<typeof folderState>;

test('set-up: one scan that reads the host (no engine there: exit 3) keeps a snapshot and takes run 1', async () => {
  const r = await scan(['--config', emptyConfig]);
  assert.is(r.code, 3, r.stderr);
  assert.match(r.stderr, 'cannot reach the Docker engine');
  before = folderState();
  assert.is(before.sequence, '1\n');
  assert.ok(
    before.history.some((f) => f.endsWith('.json')),
    'the scan kept its snapshot: the check below can fail',
  );
});

const waivers = write(
  'waivers.yaml',
  'waivers:\n  - {rule: no-unclaimed-containr, subject: x, justification: a long enough reason, expires: 2099-01-01}\n',
);
const badFailOn = write('bad-fail-on.yaml', `ledger: ${ledger}\nfailOn: eror\n`);
const badKey = write('bad-key.yaml', `ledger: ${ledger}\nexcluds: [name:ci-*]\n`);
const badProfile = write('bad-profile.yaml', `ledger: ${ledger}\nprofile: nighty\n`);
const badBaseline = write('bad-baseline.yaml', `ledger: ${ledger}\nbaseline: autp\n`);

const cases: { name: string; args: string[]; says: string[] }[] = [
  {
    name: '--fail-on eror',
    args: ['--fail-on', 'eror'],
    says: ["--fail-on must be one of error, warning, note, none, not 'eror' (did you mean 'error'?)"],
  },
  { name: '--profile nighty', args: ['--profile', 'nighty'], says: ["not 'nighty' (did you mean 'nightly'?)"] },
  {
    name: '--baseline autp (not read as a file name)',
    args: ['--baseline', 'autp'],
    says: ['--baseline autp: no such file', "(did you mean 'auto'?)"],
  },
  {
    name: 'a waiver naming an unknown rule',
    args: ['--waivers', waivers],
    says: [`${waivers}:2: waiver names rule 'no-unclaimed-containr'`, "did you mean 'no-unclaimed-container'"],
  },
  { name: '--prom-file x.txt', args: ['--prom-file', join(dir, 'x.txt')], says: ["the name must end in '.prom'"] },
  {
    name: '--alertmanager that is not a URL',
    args: ['--alertmanager', 'localhost:9093'],
    says: ['--alertmanager needs an http:// or https:// URL'],
  },
  {
    name: '--alertmanager with a password: never echoed',
    args: ['--alertmanager', 'ftp://mesh:s3cret-pw@127.0.0.1:9093'],
    says: ['--alertmanager needs an http:// or https:// URL'],
  },
  {
    name: '--alert-ttl 0',
    args: ['--alert-ttl', '0'],
    says: ["--alert-ttl must be a whole number of at least 1, not '0'"],
  },
  { name: '--keep 0', args: ['--keep', '0'], says: ['--keep must be a whole number of at least 1'] },
  {
    name: 'an unknown selector kind',
    args: ['--exclude', 'lable:x=y'],
    says: ["unknown selector kind 'lable:'", "did you mean 'label:'"],
  },
  { name: 'an unknown format', args: ['--format', 'jsn'], says: ["unknown format 'jsn'"] },
  {
    name: "a bad failOn in the config: its file:line, not '--fail-on'",
    args: ['--config', badFailOn],
    says: [`${badFailOn}:2: /failOn must be one of error, warning, note, none, not 'eror' (did you mean 'error'?)`],
  },
  {
    name: 'a bad profile in the config: its line and the nearest value',
    args: ['--config', badProfile],
    says: [
      `${badProfile}:2: /profile must be one of nightly, premigration, hardening, all, not 'nighty' (did you mean 'nightly'?)`,
    ],
  },
  {
    name: 'a baseline in the config that is no file (nor auto)',
    args: ['--config', badBaseline],
    says: [`baseline (config ${badBaseline}:2) autp: no such file`, "(did you mean 'auto'?)"],
  },
  {
    name: 'a mistyped config key: its own line and the nearest key',
    args: ['--config', badKey],
    says: [`${badKey}:2: (root) must NOT have additional properties 'excluds' (did you mean 'exclude'?)`],
  },
];

for (const c of cases) {
  test(`scan ${c.name}: exit 2 before the host is read; no snapshot kept, no run number taken, nothing written`, async () => {
    const r = await scan([...(c.args.includes('--config') ? [] : ['--config', emptyConfig]), ...c.args]);
    assert.is(r.code, 2, r.stderr);
    for (const text of c.says) assert.match(r.stderr, text);
    assert.not.match(r.stderr, 'cannot reach the Docker engine', 'the host was not read');
    assert.not.match(r.stderr, 's3cret-pw');
    assert.equal(folderState(), before);
  });
}

test('evaluate and premigrate check the same before reading a snapshot or the host, and create no output folder', async () => {
  const fresh = join(dir, 'fresh');
  const evaluate = await runCli([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--config',
    emptyConfig,
    '--out',
    fresh,
    '--baseline',
    'autp',
  ]);
  assert.is(evaluate.code, 2, evaluate.stderr);
  const premigrate = await runCli([
    'premigrate',
    '--config',
    badFailOn,
    '--docker-host',
    `unix://${join(dir, 'no-engine.sock')}`,
    '--out',
    fresh,
  ]);
  assert.is(premigrate.code, 2, premigrate.stderr);
  assert.match(premigrate.stderr, `${badFailOn}:2: /failOn`);
  const scoped = await runCli([
    'premigrate',
    '--config',
    emptyConfig,
    '--exclude',
    'nmae:x',
    '--docker-host',
    `unix://${join(dir, 'no-engine.sock')}`,
    '--out',
    fresh,
  ]);
  assert.is(scoped.code, 2, scoped.stderr);
  assert.match(scoped.stderr, "did you mean 'name:'");
  assert.not.ok(existsSync(fresh), 'no output folder made');
});

test('config show takes the flags of a scan, checks them as a run would, and shows the merged lists with their origins', async () => {
  const config = write('lists.yaml', `ledger: ${ledger}\nexclude:\n  - label:com.example.system=ci\n`);
  const show = async (extra: string[]) => {
    const r = await runCli(['config', 'show', '--config', config, '--format', 'json', ...extra]);
    assert.is(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { settings: Record<string, { value: unknown; from: string }> }).settings;
  };
  // The test runner may set MESH_AUDIT_EXCLUDE (test/uvu-each.mjs): this test sets it itself.
  const inherited = process.env['MESH_AUDIT_EXCLUDE'];
  try {
    delete process.env['MESH_AUDIT_EXCLUDE'];
    assert.equal((await show([])).exclude, { value: ['label:com.example.system=ci'], from: `config ${config}:2` });
    assert.equal((await show(['--exclude', 'name:scratch-*'])).exclude, {
      value: ['label:com.example.system=ci', 'name:scratch-*'],
      from: `config ${config}:2 + flag --exclude`,
    });
    assert.equal((await show(['--exclude', 'name:scratch-*', '--replace-lists'])).exclude, {
      value: ['name:scratch-*'],
      from: 'flag --exclude',
    });
    // The environment's selectors (split on spaces) add to the config's, and flags to both.
    process.env['MESH_AUDIT_EXCLUDE'] = ' listener:0.0.0.0:2024  name:ci-* ';
    assert.equal((await show(['--exclude', 'name:scratch-*'])).exclude, {
      value: ['label:com.example.system=ci', 'listener:0.0.0.0:2024', 'name:ci-*', 'name:scratch-*'],
      from: `config ${config}:2 + env MESH_AUDIT_EXCLUDE + flag --exclude`,
    });
    process.env['MESH_AUDIT_EXCLUDE'] = 'nmae:ci-*';
    const misspelt = await runCli(['config', 'show', '--config', config]);
    assert.is(misspelt.code, 2, 'a selector from the environment is checked as a flag is');
    assert.match(misspelt.stderr, "did you mean 'name:'");
  } finally {
    if (inherited === undefined) delete process.env['MESH_AUDIT_EXCLUDE'];
    else process.env['MESH_AUDIT_EXCLUDE'] = inherited;
  }
  assert.equal((await show(['--fail-on', 'warning'])).failOn, { value: 'warning', from: 'flag --fail-on' });
  const bad = await runCli(['config', 'show', '--config', config, '--fail-on', 'eror']);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, "did you mean 'error'?");
  const badSelector = await runCli(['config', 'show', '--config', config, '--include', 'nmae:x']);
  assert.is(badSelector.code, 2);
});

test("a command-line --exclude adds to the config's list; --replace-lists replaces it", async () => {
  const demo = [
    'evaluate',
    example('demo', 'snapshot.json'),
    '--history',
    example('demo', 'history'),
    '--format',
    'json',
    '--out',
    '-',
  ];
  const excludedOf = async (args: string[]) => {
    const r = await runCli([...demo, ...args]);
    return (
      (JSON.parse(r.stdout) as { summary: { excluded?: { containers: number } } }).summary.excluded?.containers ?? 0
    );
  };
  const snapshot = JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')) as {
    containers: { name: string }[];
  };
  const [first, second] = snapshot.containers.map((c) => c.name);
  assert.ok(first !== undefined && second !== undefined, 'the demo has two containers to exclude');
  const config = write('demo-scope.yaml', `exclude: ['name:${first}']\n`);
  assert.is(await excludedOf(['--config', config]), 1);
  assert.is(await excludedOf(['--config', emptyConfig, '--exclude', `name:${second}`]), 1);
  assert.is(await excludedOf(['--config', config, '--exclude', `name:${second}`]), 2, 'the flag adds to the config');
  assert.is(
    await excludedOf(['--config', config, '--exclude', `name:${second}`, '--replace-lists']),
    1,
    '--replace-lists: the flag alone',
  );
});

test.run();
