import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, runCli, spawnCli, tempDir } from './support/cli.js';

// Issue 18: the command line as an operator setting up a nightly job meets it.
const BIN = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
const demo = ['evaluate', example('demo', 'snapshot.json'), '--history', example('demo', 'history')];
const clean = ['evaluate', example('clean', 'snapshot.json')];

/** Runs a shell line (pipes, a pty through `script`) from the package root. */
function sh(line: string, env: NodeJS.ProcessEnv = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['-c', line], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
/** The CLI in a pseudo-terminal (Debian's `script`): stdout and stderr are a TTY, as for a person. */
function inPty(args: string[], env: NodeJS.ProcessEnv = {}): { code: number; output: string } {
  const cmd = [process.execPath, BIN, ...args].map(q).join(' ');
  const r = sh(`script -qefc ${q(cmd)} /dev/null`, { TERM: 'xterm', ...env });
  return { code: r.code, output: r.stdout };
}

function write(dir: string, name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

interface JsonReport {
  summary: {
    complete: boolean;
    findings: number;
    excluded?: { containers: number; files: number; ledger: number; listeners: number; total: number };
  };
  findings: { ruleName: string; subject: { id: string }; suppressed?: unknown }[];
  notifications: { level: string; message: string }[];
}
const jsonOf = (stdout: string) => JSON.parse(stdout) as JsonReport;

// --- errors that help ---------------------------------------------------------------------------

test("an unknown option is echoed as typed (not camelCased), with the nearest one and the command's own help", () => {
  const r = spawnCli(['premigrate', '--fail-onn', 'none']);
  assert.is(r.code, 2);
  assert.match(r.stderr, 'unknown option `--fail-onn` for `premigrate`');
  assert.not.match(r.stderr, 'failOn');
  const typo = spawnCli(['scan', '--ledgr', 'x']);
  assert.is(typo.code, 2);
  assert.match(
    typo.stderr,
    'unknown option `--ledgr` for `scan` (did you mean `--ledger`?) (see `mesh-audit scan --help`)',
  );
});

test('an unknown command or format is answered with the nearest one', () => {
  const cmd = spawnCli(['scna']);
  assert.is(cmd.code, 2);
  assert.match(cmd.stderr, "unknown command 'scna' (did you mean 'scan'?)");
  const fmt = spawnCli([...clean, '--format', 'srif', '--out', '-']);
  assert.is(fmt.code, 2);
  assert.match(fmt.stderr, "unknown format 'srif' (did you mean 'sarif'?)");
  const far = spawnCli([...clean, '--format', 'pdf']);
  assert.not.match(far.stderr, 'did you mean', 'no suggestion when nothing is near');
});

test('enum values are case-insensitive; an empty list item is refused, not skipped', async () => {
  assert.is((await runCli([...demo, '--format', 'text', '--fail-on', 'Error'])).code, 1);
  assert.is((await runCli([...demo, '--format', 'TEXT', '--fail-on', 'NONE', '--profile', 'Nightly'])).code, 0);
  for (const list of ['text,,json', 'text,', ',json']) {
    const r = await runCli([...clean, '--format', list]);
    assert.is(r.code, 2, list);
    assert.match(r.stderr, `--format has an empty item in '${list}'`);
  }
  const sev = await runCli([...clean, '--fail-on', 'eror']);
  assert.match(sev.stderr, "(did you mean 'error'?)");
});

test('a closed stdout (| head -1) ends quietly with the exit code the run had', () => {
  const list = sh(`node bin/mesh-audit.js rules list | head -1; exit \${PIPESTATUS[0]}`);
  assert.is(list.code, 0, list.stderr);
  assert.is(list.stdout.split('\n').filter(Boolean).length, 1);
  assert.is(list.stderr, '', 'no stack trace, no EPIPE');
  // A run with findings keeps its exit 1 when the reader goes away early.
  const findings = sh(
    `node bin/mesh-audit.js evaluate examples/demo/snapshot.json --history examples/demo/history --format text | head -1; exit \${PIPESTATUS[0]}`,
  );
  assert.is(findings.code, 1, findings.stderr);
  assert.not.match(findings.stderr, 'EPIPE');
});

test('a bad waivers file reports every error at once, each with its line', async () => {
  const dir = tempDir();
  const file = write(
    dir,
    'waivers.yaml',
    [
      'waivers:',
      '  - rule: no-unclaimed-container',
      '    subject: old',
      '    justification: short',
      '    expires: 2027-01-01',
      '  - rule: MA2001',
      '    subject: x',
      '    justification: a long enough reason',
      '    expires: tomorrow',
      '    colour: red',
      '',
    ].join('\n'),
  );
  const r = await runCli([...demo, '--format', 'text', '--waivers', file]);
  assert.is(r.code, 2);
  assert.match(r.stderr, `${file}:4: /waivers/0/justification must NOT have fewer than 10 characters`);
  assert.match(r.stderr, `${file}:9: /waivers/1/expires must match format "date"`);
  // An unknown key is shown on its own line, not its mapping's (issue 28).
  assert.match(r.stderr, `${file}:10: /waivers/1 must NOT have additional properties 'colour'`);
  const rules = write(
    dir,
    'rules.yaml',
    [
      'waivers:',
      '  - {rule: no-unclaimed-containr, subject: a, justification: a long enough reason, expires: 2027-01-01}',
      '  - {rule: MA9999, subject: b, justification: a long enough reason, expires: 2027-01-01}',
      '',
    ].join('\n'),
  );
  const r2 = await runCli([...demo, '--format', 'text', '--waivers', rules]);
  assert.match(
    r2.stderr,
    `${rules}:2: waiver names rule 'no-unclaimed-containr', which no loaded pack has (did you mean 'no-unclaimed-container'?)`,
  );
  assert.match(r2.stderr, `${rules}:3: waiver names rule 'MA9999'`);
});

test('waiver subject globs are real globs: [!u]* waives every container not starting with u', async () => {
  const dir = tempDir();
  const before = jsonOf((await runCli([...demo, '--format', 'json', '--out', '-'])).stdout);
  const unclaimed = before.findings.filter((f) => f.ruleName === 'no-unclaimed-container');
  assert.ok(unclaimed.length > 0);
  const file = write(
    dir,
    'w.yaml',
    'waivers:\n  - {rule: no-unclaimed-container, subject: "[!u]*", justification: leftovers being removed this week, expires: 2099-01-01}\n',
  );
  const after = jsonOf((await runCli([...demo, '--format', 'json', '--out', '-', '--waivers', file])).stdout);
  for (const f of after.findings.filter((x) => x.ruleName === 'no-unclaimed-container')) {
    assert.is(f.suppressed !== undefined, !f.subject.id.startsWith('u'), f.subject.id);
  }
  assert.ok(after.findings.some((f) => f.suppressed !== undefined));
});

test('a bad policy pack reports every error at once, each with file:line and rule', async () => {
  const dir = tempDir();
  const rule = (id: string, name: string, assertion: string, message: string) =>
    `  - id: ${id}\n    name: ${name}\n    title: T\n    severity: warning\n    subject: containers\n    assert: ${assertion}\n    message: "${message}"\n    help: H\n    remediation: R\n    tags: []\n    profiles: [nightly]\n`;
  const pack = write(
    dir,
    'bad.yaml',
    'schema: mesh-audit/policy@1\npack: {id: t, name: t, version: "1"}\nrules:\n' +
      rule('T1', 'one', '{"frobnicate": [1]}', '{name}') +
      rule('T2', 'two', '{"var": "running"}', '{nmae} is off'),
  );
  const r = await runCli([...clean, '--format', 'text', '--policy', pack]);
  assert.is(r.code, 2);
  assert.match(r.stderr, new RegExp(`${pack}:9: rule T1: assert`));
  assert.match(r.stderr, `${pack}:21: rule T2: message: unknown placeholder {nmae}`);
  const schema = write(
    dir,
    'schema.yaml',
    'schema: mesh-audit/policy@1\npack: {id: t, name: t, version: "1"}\nrules:\n' +
      rule('T1', 'one', '{"var": "running"}', '{name}').replace('severity: warning', 'severity: loud') +
      rule('T2', 'two', '{"var": "running"}', '{name}').replace('subject: containers', 'subject: boxes'),
  );
  const r2 = await runCli([...clean, '--format', 'text', '--policy', schema]);
  assert.is(r2.code, 2);
  assert.match(r2.stderr, `${schema}:7: rule T1: /rules/0/severity must be equal to one of the allowed values`);
  assert.match(r2.stderr, `${schema}:19: rule T2: /rules/1/subject`);
});

// --- verbosity ----------------------------------------------------------------------------------

test('--quiet: nothing on stderr for a clean, complete run (reports still written); findings still printed', () => {
  const out = tempDir();
  const r = spawnCli([...clean, '--out', out, '--quiet']);
  assert.is(r.code, 0);
  assert.is(r.stderr, '');
  assert.ok(existsSync(join(out, 'mesh-audit.json')));
  const loud = spawnCli([...clean, '--out', out]);
  assert.match(loud.stderr, 'wrote ');
  const findings = spawnCli([...demo, '--format', 'text', '-q']);
  assert.is(findings.code, 1);
  assert.match(findings.stdout, 'no-unclaimed-container');
  assert.is(spawnCli([...clean, '--quiet', '--verbose']).code, 2);
});

test('--verbose says what was evaluated and how long it took', () => {
  const r = spawnCli([...clean, '--format', 'text', '--verbose']);
  assert.is(r.code, 0);
  assert.match(r.stderr, /evaluated 1 snapshot with \d+ rules in \d+ ms/);
});

test('colour on a terminal only; --no-color and NO_COLOR turn it off', () => {
  const args = [...demo, '--format', 'text'];
  // The test runner sets NO_COLOR=1; empty counts as unset (no-color.org).
  assert.match(inPty(args, { NO_COLOR: '' }).output, '\x1b[', 'colour on a pty');
  assert.not.match(inPty([...args, '--no-color'], { NO_COLOR: '' }).output, '\x1b[');
  assert.not.match(inPty(args, { NO_COLOR: '1' }).output, '\x1b[');
  assert.not.match(spawnCli(args).stdout, '\x1b[', 'never into a pipe');
});

test('progress: a line rewritten in place on a terminal once a scan runs long; nothing for a short scan or off a terminal', () => {
  const dir = tempDir();
  const ledger = write(dir, 'ledger.json', '[]\n');
  const args = [
    'scan',
    '--docker-host',
    `unix://${join(dir, 'no-engine.sock')}`,
    '--ledger',
    ledger,
    '--hostname',
    'h',
    '--out',
    join(dir, 'out'),
    '--format',
    'json',
  ];
  // "Long" is past MESH_AUDIT_PROGRESS_AFTER_MS: 0 makes every scan long, an hour none (no clock in the test).
  const long = inPty(args, { MESH_AUDIT_PROGRESS_AFTER_MS: '0' });
  assert.is(long.code, 3, long.output);
  assert.match(long.output, '\r\x1b[Kmesh-audit: reading ledger');
  const short = inPty(args, { MESH_AUDIT_PROGRESS_AFTER_MS: '3600000' });
  assert.not.match(short.output, 'reading ledger');
  const piped = spawnCli(args, { MESH_AUDIT_PROGRESS_AFTER_MS: '0' });
  assert.not.match(piped.stderr, 'reading ledger', 'no progress into a log');
  const verbose = spawnCli([...args, '--verbose']);
  assert.match(verbose.stderr, /\[\d+ ms\] reading ledger /, 'with --verbose each step, timed, even into a log');
  assert.match(verbose.stderr, /\[\d+ ms\] read 0 containers, \d+ files, 0 ledger entries; 1 source not read/);
  const quiet = inPty([...args, '--quiet'], { MESH_AUDIT_PROGRESS_AFTER_MS: '0' });
  assert.not.match(quiet.output, 'reading ledger');
  assert.match(quiet.output, 'cannot reach the Docker engine', 'problems are still told under --quiet');
});

// --- config discovery ---------------------------------------------------------------------------

test('config discovery: system config when present, MESH_AUDIT_CONFIG over it, env over the file, flags over all; config show tells where each came from', () => {
  const dir = tempDir();
  const system = write(
    dir,
    'system.yaml',
    'ledger: /srv/system/ledger.json\nhostname: from-system\nout: /srv/system/reports\n',
  );
  const named = write(dir, 'named.yaml', 'ledger: /srv/named/ledger.json\nhostname: from-named\n');
  const show = (args: string[], env: NodeJS.ProcessEnv) =>
    JSON.parse(
      spawnCli(['config', 'show', '--format', 'json', ...args], {
        MESH_AUDIT_SYSTEM_CONFIG: system,
        MESH_AUDIT_CONFIG: '',
        ...env,
      }).stdout,
    ) as {
      configFile: string | null;
      settings: Record<string, { value: unknown; from: string }>;
    };
  const sys = show([], {});
  assert.is(sys.configFile, system);
  assert.equal(sys.settings['ledger'], { value: '/srv/system/ledger.json', from: `config ${system}:1` });
  const byEnv = show([], { MESH_AUDIT_CONFIG: named, MESH_AUDIT_HOSTNAME: 'from-env', MESH_AUDIT_FAIL_ON: 'warning' });
  assert.is(byEnv.configFile, named);
  assert.equal(byEnv.settings['ledger'], { value: '/srv/named/ledger.json', from: `config ${named}:1` });
  assert.equal(byEnv.settings['hostname'], { value: 'from-env', from: 'env MESH_AUDIT_HOSTNAME' });
  assert.equal(byEnv.settings['failOn'], { value: 'warning', from: 'env MESH_AUDIT_FAIL_ON' });
  assert.equal(byEnv.settings['keep'], { value: 30, from: 'default' });
  const byFlag = show(['--config', system], { MESH_AUDIT_CONFIG: named, MESH_AUDIT_LEDGER: '/srv/env/ledger.json' });
  assert.is(byFlag.configFile, system);
  assert.equal(byFlag.settings['ledger'], { value: '/srv/env/ledger.json', from: 'env MESH_AUDIT_LEDGER' });
  const none = show([], { MESH_AUDIT_SYSTEM_CONFIG: join(dir, 'absent.yaml') });
  assert.is(none.configFile, null);
  // Root's reports go to /var/lib/mesh-audit, not to a `reports/` in whatever folder cron starts in.
  assert.equal(none.settings['out'], {
    value: process.getuid?.() === 0 ? '/var/lib/mesh-audit' : 'reports',
    from: 'default',
  });
  const text = spawnCli(['config', 'show'], { MESH_AUDIT_SYSTEM_CONFIG: system, MESH_AUDIT_CONFIG: '' });
  assert.match(text.stdout, `hostname              from-system  (config ${system}:2)`);
});

test('the config decides the output folder and the threshold of a run; a bad env value is named', () => {
  const dir = tempDir();
  const out = join(dir, 'nightly');
  const config = write(dir, 'c.yaml', `out: ${out}\nfailOn: none\n`);
  const r = spawnCli([...demo, '--format', 'json'], { MESH_AUDIT_CONFIG: config });
  assert.is(r.code, 0, r.stderr);
  assert.ok(existsSync(join(out, 'mesh-audit.json')));
  const bad = spawnCli(['config', 'show'], { MESH_AUDIT_FAIL_ON: 'eror', MESH_AUDIT_CONFIG: '' });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, "$MESH_AUDIT_FAIL_ON: must be one of error, warning, note, none (it is 'eror')");
});

test('a bad config file reports every error at once, each with its line', () => {
  const dir = tempDir();
  const config = write(
    dir,
    'bad.yaml',
    'ledger: relative.json\nkeep: 0\nlabelz: {}\nignore:\n  - {select: "name:x", until: soon}\n',
  );
  const r = spawnCli(['config', 'show', '--config', config]);
  assert.is(r.code, 2);
  assert.match(r.stderr, `${config}:1: /ledger must be an absolute path, not 'relative.json'`);
  assert.match(r.stderr, `${config}:2: /keep must be >= 1`);
  assert.match(r.stderr, `${config}:3: (root) must NOT have additional properties 'labelz' (did you mean 'labels'?)`);
  assert.match(r.stderr, `${config}:5: /ignore/0`);
});

// --- scope --------------------------------------------------------------------------------------

test('--exclude leaves containers out and counts them in every summary; --include narrows', async () => {
  const all = jsonOf((await runCli([...demo, '--format', 'json', '--out', '-'])).stdout);
  assert.is(all.summary.excluded, undefined, 'no scope, no count');
  const scoped = await runCli([...demo, '--format', 'json', '--out', '-', '--exclude', 'label:mesh.module=forge']);
  const report = jsonOf(scoped.stdout);
  assert.ok(report.summary.excluded!.containers > 0, JSON.stringify(report.summary));
  assert.ok(report.findings.length < all.findings.length);
  const text = await runCli([...demo, '--format', 'text', '--exclude', 'label:mesh.module=forge']);
  assert.match(
    text.stdout,
    `${report.summary.excluded!.total} out of scope (${report.summary.excluded!.containers} container`,
  );
  const sarif = JSON.parse(
    (await runCli([...demo, '--format', 'sarif', '--out', '-', '--exclude', 'label:mesh.module=forge'])).stdout,
  ) as { runs: { properties: { excludedByScope?: unknown } }[] };
  assert.equal(sarif.runs[0]!.properties.excludedByScope, {
    containers: report.summary.excluded!.containers,
    files: report.summary.excluded!.files,
    ledger: report.summary.excluded!.ledger,
    listeners: report.summary.excluded!.listeners,
  });
  const only = jsonOf(
    (await runCli([...demo, '--format', 'json', '--out', '-', '--include', 'name:nothing-is-called-this'])).stdout,
  );
  assert.ok(only.summary.excluded!.containers > 0);
  assert.equal(
    only.findings.filter((f) => f.ruleName === 'no-unclaimed-container'),
    [],
  );
});

test('path selectors and an ignore file with expiry; an expired entry checks its subjects again and says so', async () => {
  const dir = tempDir();
  const all = jsonOf((await runCli([...demo, '--format', 'json', '--out', '-'])).stdout);
  const file = all.findings.find((f) => f.subject.id.startsWith('/'))!;
  assert.ok(file, 'the demo has a finding about a file');
  const live = write(dir, 'live', `# scratch files\npath:${file.subject.id}  until 2099-12-31\n`);
  const liveRun = jsonOf((await runCli([...demo, '--format', 'json', '--out', '-', '--ignore-file', live])).stdout);
  assert.ok(!liveRun.findings.some((f) => f.subject.id === file.subject.id));
  assert.ok(liveRun.summary.excluded!.files >= 1);
  const expired = write(dir, 'expired', `${file.subject.id} until 2020-01-01\n`);
  const expiredRun = jsonOf(
    (await runCli([...demo, '--format', 'json', '--out', '-', '--ignore-file', expired])).stdout,
  );
  assert.ok(expiredRun.findings.some((f) => f.subject.id === file.subject.id));
  assert.ok(expiredRun.notifications.some((n) => n.message.includes('expired on 2020-01-01')));
  const bad = write(dir, 'bad', 'lable:mesh.module=x\npath:relative\nname:ok until someday\n');
  const r = await runCli([...demo, '--format', 'text', '--ignore-file', bad]);
  assert.is(r.code, 2);
  assert.match(r.stderr, `${bad}:1: unknown selector kind 'lable:' in 'lable:mesh.module=x' (did you mean 'label:'?`);
  assert.match(r.stderr, `${bad}:2: a path selector needs an absolute glob`);
  assert.match(r.stderr, `${bad}:3: 'until' needs a day`);
});

test('the scope holds when snapshots are evaluated by worker threads; ./.mesh-auditignore is read when present', () => {
  const snap = example('demo', 'snapshot.json');
  const one = jsonOf(
    spawnCli(['evaluate', snap, '--format', 'json', '--out', '-', '--exclude', 'label:mesh.module=forge']).stdout,
  );
  const two = jsonOf(
    spawnCli([
      'evaluate',
      snap,
      snap,
      '--jobs',
      '2',
      '--format',
      'json',
      '--out',
      '-',
      '--exclude',
      'label:mesh.module=forge',
    ]).stdout,
  );
  assert.is(two.summary.excluded!.containers, 2 * one.summary.excluded!.containers);
  assert.is(two.findings.length, 2 * one.findings.length);
  const dir = tempDir();
  write(dir, '.mesh-auditignore', 'label:mesh.module=forge\n');
  const r = spawnSync(process.execPath, [BIN, 'evaluate', snap, '--format', 'json', '--out', '-'], {
    cwd: dir,
    encoding: 'utf8',
  });
  assert.equal(jsonOf(r.stdout).summary.excluded, one.summary.excluded);
});

test('against a baseline, findings about subjects now out of scope are not declared absent (not checked is not gone)', () => {
  const dir = tempDir();
  const baseline = join(dir, 'before.json');
  writeFileSync(baseline, spawnCli([...demo, '--format', 'json', '--out', '-']).stdout);
  type WithAbsent = JsonReport & { absent: { subject: { id: string } }[] };
  const scoped = JSON.parse(
    spawnCli([
      ...demo,
      '--format',
      'json',
      '--out',
      '-',
      '--baseline',
      baseline,
      '--exclude',
      'label:mesh.module=forge',
    ]).stdout,
  ) as WithAbsent;
  assert.ok(scoped.summary.excluded!.containers > 0);
  assert.equal(scoped.absent, [], JSON.stringify(scoped.absent.map((f) => f.subject.id)));
});

// --- completions and the man page ---------------------------------------------------------------

test("completion bash completes commands and each command's own options, from the same definitions as --help", () => {
  const script = spawnCli(['completion', 'bash']).stdout;
  const complete = (words: string) =>
    sh(
      `source /dev/stdin <<'EOF'\n${script}\nEOF\nCOMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _mesh_audit; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ).stdout.split('\n');
  assert.ok(complete('mesh-audit sc').includes('scan'));
  const scan = complete('mesh-audit scan --led');
  assert.equal(scan.filter(Boolean), ['--ledger']);
  assert.ok(complete('mesh-audit scan --fail-on w').includes('warning'));
  assert.ok(complete('mesh-audit scan --ex').includes('--exclude'));
  for (const shell of ['zsh', 'fish']) {
    const r = spawnCli(['completion', shell]);
    assert.is(r.code, 0);
    assert.match(r.stdout, 'managed-root');
  }
  assert.match(spawnCli(['completion', 'bsh']).stderr, "(did you mean 'bash'?)");
});

test('the man page is generated from the command definitions and is current (npm run man)', () => {
  const page = readFileSync(join(PACKAGE_ROOT, 'man', 'mesh-audit.1'), 'utf8');
  const fresh = join(tempDir(), 'mesh-audit.1');
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'dist', 'scripts', 'man.js'), fresh], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  assert.is(readFileSync(fresh, 'utf8'), page, 'man/mesh-audit.1 is stale: run `npm run man`');
  for (const command of ['scan', 'evaluate', 'premigrate', 'completion', 'config'])
    assert.match(page, `.SS ${command}`);
  const help = spawnCli(['scan', '--help']).stdout;
  for (const flag of help.match(/--[a-z][a-z-]+/g) ?? []) assert.match(page, flag.replace(/-/g, '\\-'), flag);
  const rendered = sh(`man -l ${q(fresh)} 2>&1`, { MANWIDTH: '100' });
  assert.is(rendered.code, 0);
  assert.match(rendered.stdout, 'MESH-AUDIT(1)');
});

test.run();
