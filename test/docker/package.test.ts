import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { definedCli } from '../../src/cli/commands.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { runClaimedFromEnvFile } from '../support/claimed-container.js';
import { example, spawnCli, tempDir } from '../support/cli.js';
import { parseTrace, runProcess, straceBinary, type ProcessRun } from '../support/strace.js';
import { promtoolCheckMetrics, promtoolPath } from '../support/promtool.js';
import { forEachEngine, removeContainers, type Engine } from './engine.js';
import { envText, LiveHost, type LiveReport } from './live-host.js';

/*
 * What `npm run package` builds (dist/package), installed and run as an operator would: the single
 * executable alone in an empty folder with an empty environment, the .deb installed into a scratch
 * root, the image run against the test engine as examples/nightly/docker-run.sh runs it.
 * .ci/run builds the package before `npm test`; in CI a missing package is a failure.
 */
const PKG = join(PACKAGE_ROOT, 'dist', 'package');
const BINARY = join(PKG, 'mesh-audit-linux-x64');
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const DEB = join(PKG, `mesh-audit_${VERSION}_amd64.deb`);
const ROOTFS = join(PKG, 'mesh-audit-image-rootfs.tar');
const built = existsSync(BINARY) && existsSync(DEB) && existsSync(ROOTFS);
const ci = process.env['CI'] === 'true';
if (!built && !ci) process.stderr.write('package.test: dist/package not built (npm run package): skipped\n');
const it = built ? test : test.skip;

(ci ? test : test.skip)('the package is built (.ci/run runs `npm run package` before `npm test`)', () => {
  assert.ok(built, `${PKG} lacks the executable, the .deb or the image's rootfs: run \`npm run package\``);
});

const strace = straceBinary();

const run = (cmd: string, args: string[], cwd = '/'): { code: number; stdout: string; stderr: string } => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
};

/**
 * What an empty environment keeps for a live scan: the scope the test runner gives every live scan (this
 * machine's own listeners beyond loopback, test/uvu-each.mjs), as an operator's unit would set it.
 */
const MACHINE_SCOPE = process.env['MESH_AUDIT_EXCLUDE']
  ? [`MESH_AUDIT_EXCLUDE=${process.env['MESH_AUDIT_EXCLUDE']}`]
  : [];

/** `env -i PROGRAM ARGS` under `strace -f` (file opens only): which thread opened what. */
async function traced(
  dir: string,
  program: string,
  args: string[],
): Promise<ProcessRun & { opens: { pid: number; path: string; flags: string }[]; mainPid: number }> {
  const tracePath = join(tempDir('ma-pkg-trace-'), 'trace');
  // UV_USE_IO_URING=0: libuv's io_uring would do file opens where ptrace cannot see them.
  const r = await runProcess(
    strace!,
    [
      '-f',
      '-qq',
      '-e',
      'trace=execve,openat',
      '-o',
      tracePath,
      '--',
      'env',
      '-i',
      'UV_USE_IO_URING=0',
      ...MACHINE_SCOPE,
      program,
      ...args,
    ],
    { cwd: dir, timeoutMs: 300_000 },
  );
  const calls = parseTrace(readFileSync(tracePath, 'utf8')).calls;
  const exec = calls.find((c) => c.name === 'execve' && c.args[0] === JSON.stringify(program) && c.result === '0');
  assert.ok(exec, `the program was run under strace: ${r.stderr}`);
  // Nothing else is started: no node, no shell (env itself is the first execve).
  assert.equal(
    calls.filter((c) => c.name === 'execve' && c.result === '0').map((c) => c.args[0]),
    ['"/usr/bin/env"', JSON.stringify(program)],
  );
  assert.not.match(r.stderr, 'single-executable', 'a module looked for on disk (a SEA require() warning)');
  const opens = calls
    .filter((c) => c.name === 'openat' && !c.result.startsWith('-1'))
    .map((c) => ({ pid: c.pid, path: JSON.parse(c.args[1]!) as string, flags: c.args[2] ?? '' }));
  return { ...r, opens, mainPid: exec.pid };
}

/** The single executable copied alone into an empty folder. */
function alone(): string {
  const dir = tempDir('ma-pkg-alone-');
  copyFileSync(BINARY, join(dir, 'mesh-audit-linux-x64'));
  return dir;
}

/*
 * Every command and every --help, run by a packaged executable and by `node bin/mesh-audit.js` (from
 * source), each with an empty environment in a folder of its own holding the same inputs: the same
 * exit code, the same stdout (reports' times and the run's own numbers masked), the same files written.
 * The list of commands is the one `--help` shows from source: a command added without a case here fails.
 */
const SOURCE = [process.execPath, join(PACKAGE_ROOT, 'bin', 'mesh-audit.js')];

/**
 * What a command prints or writes that differs between two runs of the same program (times,
 * durations, the commit's dirty mark), and the one thing that differs by design: the shipped pack is
 * named by its path from source, `<built-in>/policies/…` in the executable, which carries it.
 */
const masked = (text: string) =>
  text
    .replaceAll(`${PACKAGE_ROOT}/policies/`, '<pack>/policies/')
    .replaceAll('<built-in>/policies/', '<pack>/policies/')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/"(durationMs|durationSeconds|elapsedMs)": [\d.]+/g, '"$1": <n>')
    .replace(/ in \d+ ms/g, ' in <n> ms')
    .replace(/\(commit [0-9a-f]{12}(-dirty)?\)/g, '(commit <commit>)');

/** The inputs every command's run reads, copied into a fresh folder (relative paths: both programs print the same). */
function commandFolder(): string {
  const dir = tempDir('ma-pkg-cmd-');
  cpSync(example('045', 'snapshot.json'), join(dir, '045.json'));
  cpSync(example('demo'), join(dir, 'demo'), { recursive: true });
  cpSync(example('adopted-node'), join(dir, 'adopted'), { recursive: true });
  writeFileSync(
    join(dir, 'config.yaml'),
    'ledger: /srv/ledger.json\nmanagedRoots: [/etc/mesh]\nbaseline: auto\nformat: sarif,json\nprofile: nightly\npromFile: /tmp/x/mesh-audit.prom\nfailOnNew: true\n',
  );
  return dir;
}

/** Each command with real work to do (`snapshot` reads a live host: see the live tests below), and every --help. */
async function everyInvocation(): Promise<string[][]> {
  const cli = await definedCli({
    now: () => new Date(),
    stdout: () => undefined,
    stderr: () => undefined,
    color: false,
    interactive: false,
  });
  const commands = cli.commands.map((c) => c.name).filter((n) => n !== '');
  const work: Record<string, string[][]> = {
    completion: [
      ['completion', 'bash'],
      ['completion', 'zsh'],
      ['completion', 'fish'],
    ],
    config: [
      ['config', 'show', '--config', 'config.yaml'],
      ['config', 'show', '--config', 'config.yaml', '--format', 'json'],
    ],
    diff: [
      ['diff', 'demo/expected.json', 'adopted/expected.json'],
      ['diff', 'demo/expected.json', 'adopted/expected.json', '--format', 'json'],
    ],
    evaluate: [
      ['evaluate', '045.json', '--format', 'json', '--out', '-'],
      [
        'evaluate',
        'demo/snapshot.json',
        '--history',
        'demo/history',
        '--out',
        'out',
        '--format',
        'text,json,sarif,prom',
        '--baseline',
        'auto',
      ],
    ],
    man: [['man']],
    premigrate: [
      [
        'premigrate',
        '--snapshot',
        'adopted/snapshot.json',
        '--history',
        'adopted/history',
        '--out',
        'pre',
        '--plan',
        'plan.json',
      ],
      ['premigrate', '--snapshot', 'adopted/snapshot.json', '--format', 'md', '--out', '-'],
    ],
    rules: [
      ['rules', 'list'],
      ['rules', 'show', 'MA1001'],
      // The shipped packs' cases: the executable carries them (they are not files beside it).
      ['rules', 'test'],
      ['rules', 'test', '--profile', 'hardening'],
    ],
    scan: [['scan', '--snapshot', '045.json', '--format', 'json', '--out', '-']],
    // Resident: what it refuses and says before it would stay (its live runs: test/docker/serve-live.test.ts).
    serve: [['serve', '--listen', '0.0.0.0:9101']],
    status: [['status', '--socket', 'nobody.sock']],
    snapshot: [['snapshot']],
  };
  assert.equal(
    commands.filter((c) => !Object.hasOwn(work, c)),
    [],
    'commands this test does not run',
  );
  return [['--help'], ['--version'], ...commands.map((c) => [c, '--help']), ...commands.flatMap((c) => work[c]!)];
}

/** One run in `dir` with an empty environment: its exit code, what it printed, the files it wrote (masked; not the lock, which holds a pid, nor the run folders, named by time). */
function runIn(
  dir: string,
  program: string[],
  args: string[],
): { code: number; stdout: string; stderr: string; files: Record<string, string> } {
  const before = new Set(listFiles(dir));
  const r = spawnSync('env', ['-i', ...program, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 300_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const files = Object.fromEntries(
    listFiles(dir)
      .filter((f) => !before.has(f) && !f.includes('/runs/') && !f.endsWith('.mesh-audit.lock'))
      .map((f) => [f, masked(readFileSync(join(dir, f), 'utf8'))]),
  );
  return { code: r.status ?? -1, stdout: masked(r.stdout), stderr: masked(r.stderr), files };
}

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(dir, join(prefix, e.name)) : e.isFile() ? [join(prefix, e.name)] : [],
  );
}

/** Every invocation by `binary` and from source: the same results; returns how many ran. */
async function assertEveryCommandAsFromSource(binary: string): Promise<number> {
  const packaged = commandFolder();
  const source = commandFolder();
  const invocations = await everyInvocation();
  for (const args of invocations) {
    const got = runIn(packaged, [binary], args);
    const want = runIn(source, SOURCE, args);
    const what = `mesh-audit ${args.join(' ')}`;
    assert.not.match(got.stderr, 'internal error', `${what}: ${got.stderr}`);
    assert.equal(got, want, what);
    if (args.includes('--help')) assert.ok(got.code === 0 && got.stdout.includes('Usage:'), `${what}: ${got.stderr}`);
  }
  return invocations.length;
}

const findingsOf = (json: string) =>
  (JSON.parse(json) as LiveReport).findings.map((f) => `${f.ruleId} ${f.subject.id} ${f.discriminator ?? ''}`).sort();

it('the binary, alone in an empty folder with an empty environment (no node on PATH), prints its version and commit', () => {
  const dir = alone();
  const r = run('env', ['-i', './mesh-audit-linux-x64', '--version'], dir);
  assert.is(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    new RegExp(`^mesh-audit/${VERSION.replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}(-dirty)? *\\)`),
  );
  assert.is(r.stderr, '', 'no warning (SEA, require) on stderr');
});

it('the binary, alone with an empty environment, runs every command and every --help as from source (completion, man, premigrate --plan included)', async () => {
  const ran = await assertEveryCommandAsFromSource(join(alone(), 'mesh-audit-linux-x64'));
  assert.ok(ran > 25, `${ran} invocations`);
  // `man` prints the page the .deb installs.
  const man = run('env', ['-i', BINARY, 'man']);
  assert.is(man.stdout, readFileSync(join(PACKAGE_ROOT, 'man', 'mesh-audit.1'), 'utf8'));
});

it('the binary evaluates a shipped example with the pack inside it, reading no file of the repository', async () => {
  if (!strace) throw new Error('strace is needed');
  const dir = alone();
  copyFileSync(example('045', 'snapshot.json'), join(dir, 'snapshot.json'));
  const r = await traced(dir, './mesh-audit-linux-x64', [
    'evaluate',
    'snapshot.json',
    '--format',
    'json',
    '--out',
    '-',
  ]);
  assert.is(r.code, 1, r.stderr);
  const npm = spawnCli(['evaluate', example('045', 'snapshot.json'), '--format', 'json', '--out', '-']);
  assert.equal(findingsOf(r.stdout), findingsOf(npm.stdout));
  assert.ok(findingsOf(r.stdout).length >= 3, 'the 045 findings');
  const outside = r.opens.filter(
    (o) => o.path.startsWith(PACKAGE_ROOT) || o.path.includes('policies') || o.path.includes('node_modules'),
  );
  assert.equal(outside, [], 'files of the repository were opened');
  // No report file, no lock: no native addon loaded (write/flock.ts loads fs-ext only for a lock).
  assert.equal(r.opens.filter(addonLoad), [], 'an addon was loaded');
});

/** The opens of an embedded addon's load (write/embedded-addon.ts): its unnamed file, then dlopen through /proc/self/fd. */
const addonLoad = (o: { path: string; flags: string }) =>
  o.flags.includes('O_TMPFILE') || o.path.startsWith('/proc/self/fd/');

it("the binary takes the output folder's flock(2), the one flock(1) takes: it waits for a holder, then exits 3; its addon is loaded from inside --out and leaves nothing", async () => {
  const dir = alone();
  copyFileSync(example('demo', 'snapshot.json'), join(dir, 'snapshot.json'));
  const out = join(dir, 'out');
  const evaluate = ['evaluate', 'snapshot.json', '--format', 'json', '--out', 'out', '--fail-on', 'none'];
  const first = await traced(dir, './mesh-audit-linux-x64', evaluate);
  assert.is(first.code, 0, first.stderr);
  const loads = first.opens.filter(addonLoad);
  assert.equal(
    loads.map((o) => (o.flags.includes('O_TMPFILE') ? o.path : 'dlopen')),
    [out, 'dlopen'],
    'fs-ext loaded once, through an unnamed file in --out',
  );
  const writes = first.opens.filter((o) => /O_CREAT|O_WRONLY|O_RDWR|O_TMPFILE/.test(o.flags));
  assert.equal(
    writes.filter((o) => o.path !== out && !o.path.startsWith(`${out}/`)),
    [],
    'a file opened for writing outside --out',
  );
  assert.equal(
    readdirSync(out).sort(),
    ['.mesh-audit.lock', '.mesh-audit.sequence', 'latest', 'mesh-audit.json', 'runs'],
    'nothing of the addon left',
  );

  // flock(1) holds the folder's lock: the binary waits --lock-timeout, then exits 3.
  const holder = spawn('flock', [join(out, '.mesh-audit.lock'), 'sh', '-c', 'echo locked; exec cat'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      holder.once('exit', () => reject(new Error('flock(1) ended')));
    });
    const waited = run('env', ['-i', './mesh-audit-linux-x64', ...evaluate, '--lock-timeout', '1'], dir);
    assert.is(waited.code, 3, waited.stderr);
    // (The pid is the file's content: flock(1) writes none, so it names the earlier run's.)
    assert.match(
      waited.stderr,
      /another mesh-audit run \(pid (\d+|unknown)\) is writing this output folder; gave up after waiting 1 s/,
    );

    // Stopped by SIGTERM while it waits (systemd stopping the nightly unit): as from source, one line and exit 143.
    const stopped = spawn('env', ['-i', './mesh-audit-linux-x64', ...evaluate, '--lock-timeout', '60'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stoppedErr = '';
    stopped.stderr.setEncoding('utf8').on('data', (t: string) => (stoppedErr += t));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    stopped.kill('SIGTERM');
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      stopped.once('close', (c, s) => resolve([c, s])),
    );
    assert.is(code, 143, `exit ${code} ${signal}: ${stoppedErr}`);
    assert.match(stoppedErr, /^mesh-audit: stopped by SIGTERM; nothing published/m);
  } finally {
    holder.stdin.end();
    await new Promise((resolve) => holder.once('close', resolve));
  }
  const after = run('env', ['-i', './mesh-audit-linux-x64', ...evaluate, '--lock-timeout', '0'], dir);
  assert.is(after.code, 0, after.stderr);
  assert.is(readdirSync(join(out, 'runs')).length, 2, 'the second run is published once the holder is gone');
});

it('the binary evaluates 9 snapshots in worker threads (--jobs 4): each snapshot is opened by a worker, the report is the one thread gives', async () => {
  const dir = alone();
  const names = Array.from({ length: 9 }, (_, i) => `s${i + 1}.json`);
  for (const name of names) copyFileSync(example('demo', 'snapshot.json'), join(dir, name));
  const r = await traced(dir, './mesh-audit-linux-x64', [
    'evaluate',
    ...names,
    '--jobs',
    '4',
    '--format',
    'json',
    '--out',
    'w4',
    '--fail-on',
    'none',
  ]);
  assert.is(r.code, 0, r.stderr);
  for (const name of names) {
    const by = r.opens.filter((o) => o.path.endsWith(name)).map((o) => o.pid);
    assert.ok(
      by.length > 0 && by.every((pid) => pid !== r.mainPid),
      `${name} opened by ${by.join(',')} (main thread ${r.mainPid})`,
    );
  }
  const one = run(
    'env',
    [
      '-i',
      './mesh-audit-linux-x64',
      'evaluate',
      ...names,
      '--jobs',
      '1',
      '--format',
      'json',
      '--out',
      'w1',
      '--fail-on',
      'none',
    ],
    dir,
  );
  assert.is(one.code, 0, one.stderr);
  assert.equal(
    findingsOf(readFileSync(join(dir, 'w4', 'mesh-audit.json'), 'utf8')),
    findingsOf(readFileSync(join(dir, 'w1', 'mesh-audit.json'), 'utf8')),
  );
});

const asRoot = built && (ci || process.getuid?.() === 0) ? test : test.skip;

asRoot(
  'the binary and an output folder on a file system mounted noexec (root: mounts a tmpfs): exit 3 saying why, nothing written, nothing left',
  () => {
    const dir = alone();
    copyFileSync(example('demo', 'snapshot.json'), join(dir, 'snapshot.json'));
    const mount = join(dir, 'noexec');
    mkdirSync(mount);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'noexec,size=8m,mode=0750', 'tmpfs', mount], {
      encoding: 'utf8',
    });
    assert.is(mounted.status, 0, `mount a tmpfs (needs root): ${mounted.stderr}`);
    try {
      const r = run(
        'env',
        [
          '-i',
          './mesh-audit-linux-x64',
          'evaluate',
          'snapshot.json',
          '--format',
          'json',
          '--out',
          'noexec/out',
          '--fail-on',
          'none',
        ],
        dir,
      );
      assert.is(r.code, 3, r.stderr);
      assert.match(r.stderr, /cannot lock the output folder: .*not mounted noexec/);
      assert.equal(readdirSync(join(mount, 'out')), [], 'no lock taken, no report, no copy of the addon');
    } finally {
      spawnSync('umount', ['-l', mount]);
    }
  },
);

/** A 045 host on the test engine (as test/docker/scan-045.test.ts builds it) with a 5 MiB file under the managed root. */
function host045(
  eng: Engine,
  tag: string,
): { host: LiveHost; app: string; appEnv: string; blob: string; blobDigest: string } {
  const host = new LiveHost();
  const app = `ma-pkg-${tag}-${process.pid}`;
  const blobBytes = createHash('sha512').update(tag).digest();
  const blobData = Buffer.concat(Array.from({ length: (5 * 1024 * 1024) / blobBytes.length }, () => blobBytes));
  const blob = host.path('app', 'model.bin');
  mkdirSync(join(host.managedRoot, 'app'), { recursive: true });
  writeFileSync(blob, blobData);
  const claimed = runClaimedFromEnvFile(eng, host, app, {
    env: { DATABASE_URL: 'postgresql://app:pw@:20000/app', APP_MODE: 'prod' },
  });
  const appEnv = claimed.envFile;
  host.ledger([claimed.claim, claimed.declared, { id: 'app.model', type: 'file', origin: 'declared', target: blob }]);
  host.replaceByRename(
    appEnv,
    envText({ DATABASE_URL: 'postgresql://app:pw@db.mesh.internal:20000/app', APP_MODE: 'prod' }),
  );
  mkdirSync(host.out, { recursive: true, mode: 0o750 });
  return { host, app, appEnv, blob, blobDigest: `sha256:${createHash('sha256').update(blobData).digest('hex')}` };
}

function assert045(report: LiveReport, app: string, appEnv: string, stderr: string): void {
  assert.ok(report.summary.complete, `complete scan: ${stderr} ${JSON.stringify(report.notifications)}`);
  const drift = report.findings.filter(
    (f) => f.subject.id === app && f.ruleName === 'container-env-matches-composed-file',
  );
  assert.equal(
    drift.map((f) => f.discriminator),
    [`${appEnv}#DATABASE_URL`],
  );
}

const keptSnapshot = (out: string, hostname: string) => {
  const dir = join(out, 'history', hostname);
  return readFileSync(join(dir, readdirSync(dir).find((n) => n.endsWith('.json'))!), 'utf8');
};

// ---------------------------------------------------------------------------------------------
// The .deb

/** The paths the README's Install section says the package installs (lines ending "(when built)" are optional). */
function readmeFileList(): { required: string[]; optional: string[] } {
  const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const block = /<!-- deb-files -->\s*```[a-z]*\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, 'README has the list of installed files (<!-- deb-files --> then a code block)');
  const lines = block[1]!
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('/'));
  const path = (l: string) => l.split(/\s+/)[0]!;
  return {
    required: lines.filter((l) => !l.endsWith('(when built)')).map(path),
    optional: lines.filter((l) => l.endsWith('(when built)')).map(path),
  };
}

it("the .deb: sane metadata (dpkg-deb --info), its files are the README's list, lintian reports no error", () => {
  const info = run('dpkg-deb', ['--info', DEB]);
  assert.is(info.code, 0, info.stderr);
  for (const field of [
    'Package: mesh-audit',
    `Version: ${VERSION}`,
    'Architecture: amd64',
    'Maintainer: ',
    'Depends: libc6',
    'Section: admin',
    'Description: ',
  ])
    assert.match(info.stdout, field);
  assert.match(info.stdout, /Installed-Size: \d{5,}/);
  const contents = run('dpkg-deb', ['--contents', DEB]);
  assert.is(contents.code, 0, contents.stderr);
  const entries = contents.stdout
    .trim()
    .split('\n')
    .map((l) => ({
      mode: l.split(/\s+/)[0]!,
      owner: l.split(/\s+/)[1]!,
      path: l.replace(/^.* \.\//, '/').replace(/\/$/, ''),
    }));
  for (const entry of entries) assert.is(entry.owner, 'root/root', entry.path);
  const files = entries.filter((x) => !x.mode.startsWith('d')).map((x) => x.path);
  const { required, optional } = readmeFileList();
  // A listed path ending in `/` is a folder whose files are listed with it (the shipped pack's rule files).
  const listed = (f: string) => [...required, ...optional].some((l) => (l.endsWith('/') ? f.startsWith(l) : f === l));
  assert.equal(
    files.filter((f) => !listed(f)),
    [],
    'files the README does not list',
  );
  assert.equal(
    required.filter(
      (l) => l !== '/var/lib/mesh-audit' && !files.some((f) => (l.endsWith('/') ? f.startsWith(l) : f === l)),
    ),
    [],
    'files the README lists that the package lacks',
  );
  for (const name of ['mesh-audit.rules.yml', 'mesh-audit.rules.test.yml'])
    assert.ok(files.includes(`/usr/share/mesh-audit/alerting/${name}`), `${name} in the .deb`);
  for (const shell of [
    '/usr/share/bash-completion/completions/mesh-audit',
    '/usr/share/zsh/vendor-completions/_mesh-audit',
    '/usr/share/fish/vendor_completions.d/mesh-audit.fish',
    '/usr/share/man/man1/mesh-audit.1.gz',
  ]) {
    assert.ok(files.includes(shell), `${shell} in the .deb (the executable's completion command ran)`);
  }
  assert.equal(entries.find((x) => x.path === '/var/lib/mesh-audit')?.mode, 'drwxr-x---');
  const lintian = run('lintian', ['--no-tag-display-limit', DEB]);
  const errors = lintian.stdout.split('\n').filter((l) => l.startsWith('E:'));
  assert.equal(errors, [], lintian.stdout);
  assert.ok(lintian.code === 0 || errors.length === 0, lintian.stderr);
});

it('the .deb installs into a scratch root: binary, pack, alerting rules whose promtool test passes, units that verify, conffile, 0750 state folder; the installed binary runs every command as from source; purge removes config and state', async () => {
  const root = tempDir('ma-pkg-root-');
  for (const d of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/lib/dpkg/triggers'])
    mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'var', 'lib', 'dpkg', 'status'), '');
  // No chroot (the scratch root has no shell): the maintainer scripts act under $DPKG_ROOT.
  const dpkg = (args: string[]) =>
    run('dpkg', [
      `--root=${root}`,
      '--force-script-chrootless',
      '--force-depends',
      '--force-not-root',
      '--log=/dev/null',
      ...args,
    ]);
  const install = dpkg(['--install', DEB]);
  assert.is(install.code, 0, install.stderr + install.stdout);
  const state = statSync(join(root, 'var', 'lib', 'mesh-audit'));
  assert.is(state.mode & 0o777, 0o750);
  const status = run('dpkg-query', [
    `--admindir=${join(root, 'var', 'lib', 'dpkg')}`,
    '-W',
    '-f=${Status}\n${Conffiles}',
    'mesh-audit',
  ]);
  assert.match(status.stdout, 'install ok installed');
  assert.match(status.stdout, / \/etc\/mesh-audit\/config\.yaml [0-9a-f]{32}/);
  assert.match(readFileSync(join(root, 'etc', 'mesh-audit', 'config.yaml'), 'utf8'), /^# /);
  for (const name of ['pack.yaml', 'MA1-drift.yaml', 'MA1-drift.cases.yaml'])
    assert.ok(existsSync(join(root, 'usr', 'share', 'mesh-audit', 'policies', 'mesh-core', name)), name);
  assert.not.ok(
    existsSync(join(root, 'etc', 'systemd', 'system', 'timers.target.wants', 'mesh-audit.timer')),
    'the timer is not enabled',
  );

  // The base system's targets, as any host has them (Debian's systemd package): the units' own deps.
  for (const unit of readdirSync('/lib/systemd/system').filter((n) => n.endsWith('.target'))) {
    if (!existsSync(join(root, 'lib', 'systemd', 'system', unit)))
      copyFileSync(join('/lib/systemd/system', unit), join(root, 'lib', 'systemd', 'system', unit));
  }
  const verify = run('systemd-analyze', [
    'verify',
    `--root=${root}`,
    '/lib/systemd/system/mesh-audit.service',
    '/lib/systemd/system/mesh-audit.timer',
    '/lib/systemd/system/mesh-audit-serve.service',
  ]);
  assert.is(verify.code, 0, verify.stderr);
  assert.not.match(verify.stderr, 'mesh-audit', verify.stderr);

  const bin = join(root, 'usr', 'bin', 'mesh-audit');
  const version = run('env', ['-i', bin, '--version']);
  assert.match(version.stdout, `mesh-audit/${VERSION} (commit `);
  const dir = tempDir('ma-pkg-deb-');
  copyFileSync(example('045', 'snapshot.json'), join(dir, 'snapshot.json'));
  const embedded = run('env', ['-i', bin, 'evaluate', 'snapshot.json', '--format', 'json', '--out', '-'], dir);
  const shipped = run(
    'env',
    [
      '-i',
      bin,
      'evaluate',
      'snapshot.json',
      '--policy',
      join(root, 'usr', 'share', 'mesh-audit', 'policies', 'mesh-core'),
      '--format',
      'json',
      '--out',
      '-',
    ],
    dir,
  );
  assert.is(embedded.code, 1, embedded.stderr);
  assert.equal(findingsOf(embedded.stdout), findingsOf(shipped.stdout), 'the installed pack is the embedded one');

  // The alerting rules' own test passes where the package put them (it names the rules beside it).
  const rulesTest = run(promtoolPath()!, [
    'test',
    'rules',
    join(root, 'usr', 'share', 'mesh-audit', 'alerting', 'mesh-audit.rules.test.yml'),
  ]);
  assert.is(rulesTest.code, 0, rulesTest.stdout + rulesTest.stderr);

  // Every command and --help of the installed binary, as from source.
  await assertEveryCommandAsFromSource(bin);
  const completion = readFileSync(join(root, 'usr', 'share', 'bash-completion', 'completions', 'mesh-audit'), 'utf8');
  assert.is(
    completion,
    run('env', ['-i', bin, 'completion', 'bash']).stdout,
    "the installed bash completion is the program's",
  );

  const purge = dpkg(['--purge', 'mesh-audit']);
  assert.is(purge.code, 0, purge.stderr + purge.stdout);
  for (const gone of ['usr/bin/mesh-audit', 'etc/mesh-audit/config.yaml', 'var/lib/mesh-audit'])
    assert.not.ok(existsSync(join(root, gone)), `${gone} left after purge`);
});

/** The shipped unit's command line (ExecStart), as words (it has no quoting). */
const unitCommand = (unitFile: string): string[] => {
  const line = readFileSync(unitFile, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('ExecStart='));
  assert.ok(line, `${unitFile} has an ExecStart`);
  return line.slice('ExecStart='.length).trim().split(/\s+/);
};

it("the nightly job is the same everywhere: the crontab and docker-run.sh run the unit's scan, with --baseline auto, --prom-file in node_exporter's textfile folder and --quiet", () => {
  const unit = unitCommand(join(PACKAGE_ROOT, 'examples', 'nightly', 'mesh-audit.service'));
  for (const flag of [
    '--baseline auto',
    '--quiet',
    '--only-new',
    '--format text,',
    '--fail-on-new',
    '--prom-file /var/lib/prometheus/node-exporter/mesh-audit.prom',
    '--out /var/lib/mesh-audit',
  ])
    assert.match(unit.join(' '), flag);
  const cron = readFileSync(join(PACKAGE_ROOT, 'examples', 'nightly', 'crontab'), 'utf8')
    .split('\n')
    .find((l) => /^[0-9*]/.test(l))!;
  assert.ok(cron.endsWith(unit.join(' ')), `the crontab runs the unit's command: ${cron}`);
  const image = readFileSync(join(PACKAGE_ROOT, 'examples', 'nightly', 'docker-run.sh'), 'utf8').replace(
    /\\\n\s*/g,
    '',
  );
  for (const arg of unit.slice(unit.indexOf('--out'))) assert.match(image, arg, `docker-run.sh passes ${arg}`);
});

// ---------------------------------------------------------------------------------------------
// The image

// ---------------------------------------------------------------------------------------------
// Live scans by the binary, the installed binary and the image, on each engine (Docker, Podman).

if (built) {
  forEachEngine('package, live', (e, it) => {
    it('the binary, alone with an empty environment, scans the test engine live: the 045 drift found, the 5 MiB file hashed by a worker thread', async () => {
      const { host, app, appEnv, blob, blobDigest } = host045(e, 'bin');
      try {
        const dir = alone();
        const r = await traced(dir, './mesh-audit-linux-x64', [
          'scan',
          '--docker-host',
          e.dockerHost,
          '--ledger',
          host.ledgerPath,
          '--managed-root',
          host.managedRoot,
          '--hostname',
          'pkg-bin',
          '--out',
          host.out,
          '--format',
          'json',
        ]);
        assert.is(r.code, 1, r.stderr);
        assert045(
          JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport,
          app,
          appEnv,
          r.stderr,
        );
        const by = r.opens.filter((o) => o.path === blob).map((o) => o.pid);
        assert.ok(
          by.length > 0 && by.every((pid) => pid !== r.mainPid),
          `${blob} opened by ${by.join(',')} (main thread ${r.mainPid})`,
        );
        assert.ok(
          keptSnapshot(host.out, 'pkg-bin').includes(blobDigest),
          'the kept snapshot holds the digest the worker computed',
        );

        // `snapshot`, the one command the every-command test cannot give work without an engine: the
        // same host as from source (containers, files and their digests), and evaluated to the same findings.
        const collect = [
          'snapshot',
          '--docker-host',
          e.dockerHost,
          '--ledger',
          host.ledgerPath,
          '--managed-root',
          host.managedRoot,
          '--hostname',
          'pkg-bin',
        ];
        const packaged = run(
          'env',
          ['-i', ...MACHINE_SCOPE, './mesh-audit-linux-x64', ...collect, '-o', 'packaged.json'],
          dir,
        );
        const source = run('env', ['-i', ...MACHINE_SCOPE, ...SOURCE, ...collect, '-o', 'source.json'], dir);
        assert.is(packaged.code, 0, packaged.stderr);
        assert.is(source.code, 0, source.stderr);
        type Taken = { containers: { name: string }[]; files: { path: string; sha256?: string }[] };
        const seen = (file: string) => {
          const snap = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Taken;
          return {
            containers: snap.containers.map((c) => c.name).sort(),
            files: snap.files.map((f) => `${f.path} ${f.sha256 ?? ''}`).sort(),
          };
        };
        assert.equal(seen('packaged.json'), seen('source.json'));
        assert.ok(seen('packaged.json').containers.includes(app));
        assert.ok(seen('packaged.json').files.includes(`${blob} ${blobDigest}`), 'the 5 MiB file with its digest');
        const evaluated = run(
          'env',
          [
            '-i',
            ...MACHINE_SCOPE,
            './mesh-audit-linux-x64',
            'evaluate',
            'packaged.json',
            '--format',
            'json',
            '--out',
            '-',
          ],
          dir,
        );
        assert.is(evaluated.code, 1, evaluated.stderr);
        assert045(JSON.parse(evaluated.stdout) as LiveReport, app, appEnv, evaluated.stderr);
      } finally {
        removeContainers(e, [app]);
      }
    });

    it('the installed binary scans the test engine live with workers (045 drift, 5 MiB file hashed)', async () => {
      const root = tempDir('ma-pkg-x-');
      assert.is(run('dpkg-deb', ['-x', DEB, root]).code, 0);
      const { host, app, appEnv, blob, blobDigest } = host045(e, 'deb');
      try {
        const r = await traced(host.dir, join(root, 'usr', 'bin', 'mesh-audit'), [
          'scan',
          '--docker-host',
          e.dockerHost,
          '--ledger',
          host.ledgerPath,
          '--managed-root',
          host.managedRoot,
          '--hostname',
          'pkg-deb',
          '--out',
          host.out,
          '--format',
          'json',
        ]);
        assert.is(r.code, 1, r.stderr);
        assert045(
          JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport,
          app,
          appEnv,
          r.stderr,
        );
        assert.ok(
          r.opens.some((o) => o.path === blob && o.pid !== r.mainPid),
          'hashed by a worker',
        );
        assert.ok(keptSnapshot(host.out, 'pkg-deb').includes(blobDigest));
      } finally {
        removeContainers(e, [app]);
      }
    });

    it("the shipped unit's command, run by the installed binary on three nights: a .prom file promtool accepts, a baseline-aware report, exit 1 only for what is new", () => {
      const root = tempDir('ma-pkg-unit-');
      assert.is(run('dpkg-deb', ['-x', DEB, root]).code, 0);
      const { host, app, appEnv } = host045(e, 'unit');
      try {
        const textfiles = tempDir('ma-pkg-textfile-');
        // The shipped conffile, pointed at the test host.
        const shippedConfig = readFileSync(join(root, 'etc', 'mesh-audit', 'config.yaml'), 'utf8');
        const config = join(host.dir, 'config.yaml');
        writeFileSync(
          config,
          `${shippedConfig.replace(/^ledger: .*$/m, `ledger: ${host.ledgerPath}`).replace(/^ {2}- \/etc\/mesh$/m, `  - ${host.managedRoot}`)}\ndockerHost: ${e.dockerHost}\nhostname: pkg-unit\n`,
        );
        const paths: [string, string][] = [
          ['/usr/bin/mesh-audit', join(root, 'usr', 'bin', 'mesh-audit')],
          ['/etc/mesh-audit/config.yaml', config],
          ['/var/lib/mesh-audit', host.out],
          ['/var/lib/prometheus/node-exporter', textfiles],
        ];
        const command = unitCommand(join(root, 'lib', 'systemd', 'system', 'mesh-audit.service')).map((arg) =>
          paths.reduce((a, [from, to]) => (a.startsWith(from) ? to + a.slice(from.length) : a), arg),
        );
        assert.equal(
          command.filter((a) => /^\/(etc|var|usr)\//.test(a)),
          [],
          'every path of the unit is mapped into the test',
        );
        const night = () => {
          const r = run('env', ['-i', ...MACHINE_SCOPE, ...command], host.dir);
          const report = JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport;
          const prom = readFileSync(join(textfiles, 'mesh-audit.prom'), 'utf8');
          const check = promtoolCheckMetrics(prom);
          assert.ok(check.ok, check.output);
          return { ...r, report, prom };
        };
        const newOf = (prom: string) =>
          prom.split('\n').filter((l) => l.startsWith('mesh_audit_findings_new{') && !l.endsWith(' 0'));

        const first = night();
        assert.is(first.code, 1, `the first night: every finding is new: ${first.stderr}`);
        assert045(first.report, app, appEnv, first.stderr);
        assert.ok(first.report.findings.every((f) => f.state === 'new'));
        assert.match(first.prom, 'mesh_audit_run_complete{host="pkg-unit"} 1');
        assert.ok(
          newOf(first.prom).some((l) => l.includes('rule_id="MA1001"')),
          first.prom,
        );

        const second = night();
        assert.is(
          second.code,
          0,
          `the second night: nothing new, the standing drift does not fail the unit: ${second.stderr}`,
        );
        assert.ok(
          second.report.findings.length > 0 && second.report.findings.every((f) => f.state === 'unchanged'),
          JSON.stringify(second.report.findings.map((f) => f.state)),
        );
        assert.equal(newOf(second.prom), []);
        assert.match(second.prom, /mesh_audit_findings\{host="pkg-unit",rule_id="MA1001",[^}]*\} 1/);

        // The third night the composed file drifts again, on another key: new, exit 1, in the metrics.
        host.replaceByRename(
          appEnv,
          envText({ DATABASE_URL: 'postgresql://app:pw@db.mesh.internal:20000/app', APP_MODE: 'staging' }),
        );
        const third = night();
        assert.is(third.code, 1, third.stderr);
        assert.ok(
          third.report.findings.some((f) => f.state === 'new' && f.discriminator === `${appEnv}#APP_MODE`),
          JSON.stringify(third.report.findings),
        );
        assert.ok(
          newOf(third.prom).some((l) => l.includes('rule_id="MA1001"')),
          third.prom,
        );
      } finally {
        removeContainers(e, [app]);
      }
    });

    it('the image, built from the rootfs with packaging/image/build-image.sh, runs scan as docker-run.sh shows (host read-only at /host, --pid host) and finds the 045 drift; its --help of every command, completion and man are the ones from source', async () => {
      const env = { ...process.env, DOCKER_HOST: e.dockerHost };
      const built = spawnSync('sh', [join(PACKAGE_ROOT, 'packaging', 'image', 'build-image.sh'), ROOTFS, VERSION], {
        env,
        encoding: 'utf8',
        timeout: 300_000,
      });
      assert.is(built.status, 0, built.stderr);
      assert.match(
        e.docker(['image', 'inspect', '--format', '{{json .Config.Entrypoint}}', 'mesh-audit:latest']),
        '["/usr/bin/mesh-audit"]',
      );
      const { host, app, appEnv } = host045(e, 'img');
      try {
        const configDir = tempDir('ma-pkg-etc-');
        const textfiles = tempDir('ma-pkg-img-textfile-');
        writeFileSync(
          join(configDir, 'config.yaml'),
          `ledger: ${host.ledgerPath}\nmanagedRoots:\n  - ${host.managedRoot}\n`,
        );
        const socket = e.dockerHost.replace(/^unix:\/\//, '');
        const r = spawnSync(
          'sh',
          [join(PACKAGE_ROOT, 'examples', 'nightly', 'docker-run.sh'), '--hostname', 'pkg-img'],
          {
            env: {
              ...env,
              DOCKER_SOCKET: socket,
              MESH_AUDIT_CONFIG_DIR: configDir,
              MESH_AUDIT_OUT: host.out,
              MESH_AUDIT_TEXTFILE_DIR: textfiles,
            },
            encoding: 'utf8',
            timeout: 300_000,
          },
        );
        assert.is(r.status, 1, r.stderr);
        assert045(
          JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport,
          app,
          appEnv,
          r.stderr,
        );
        // As the unit: the metrics in the textfile folder, and a baseline (the first night's: all new).
        const prom = readFileSync(join(textfiles, 'mesh-audit.prom'), 'utf8');
        assert.ok(promtoolCheckMetrics(prom).ok, promtoolCheckMetrics(prom).output);
        assert.match(prom, 'mesh_audit_run_complete{host="pkg-img"} 1');
        assert.ok(
          (JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport).findings.every(
            (f) => f.state === 'new',
          ),
        );
      } finally {
        removeContainers(e, [app]);
      }

      // The image's own help, completion and man page are the ones from source (its CMD is --help).
      const cli = await definedCli({
        now: () => new Date(),
        stdout: () => undefined,
        stderr: () => undefined,
        color: false,
        interactive: false,
      });
      const asked = [
        [],
        ...cli.commands.filter((c) => c.name !== '').map((c) => [c.name, '--help']),
        ['completion', 'bash'],
        ['man'],
      ];
      const name = `mesh-audit-help-${process.pid}`;
      for (const args of asked) {
        try {
          const got = e.docker([
            'run',
            '--name',
            name,
            '--network',
            'none',
            ...e.runOptions,
            'mesh-audit:latest',
            ...args,
          ]);
          const want = run('env', ['-i', ...SOURCE, ...(args.length > 0 ? args : ['--help'])]);
          assert.is(masked(got), masked(want.stdout), `docker run mesh-audit:latest ${args.join(' ')}`);
        } finally {
          removeContainers(e, [name]);
        }
      }
    });
  });
}

test.run();
