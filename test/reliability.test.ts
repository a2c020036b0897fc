import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { HISTORY_INDEX_FILE } from '../src/snapshot/history-index.js';
import { example, FIXED_NOW, runCli, tempDir } from './support/cli.js';
import { runProcess, type ProcessRun } from './support/strace.js';

// The faults of issue 12, one test per kind, each through the CLI: concurrent runs into one output
// folder, a clock that goes back, special files where files are read, a full disk, a run stopped by a
// signal, and the rest (a symlinked output folder reached as `link/`, a folder named like a snapshot,
// an empty ledger). SECURITY.md, "Reliability", lists each with what the scanner does.
const BIN = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
const DEMO = example('demo', 'snapshot.json');
const DEMO_HISTORY = example('demo', 'history');
const NO_ENGINE = 'unix:///nonexistent.sock';
const isRoot = process.getuid?.() === 0;
/** Needs root (mount): skipped on a developer's machine without it, a failure in CI. */
const asRoot = isRoot || process.env['CI'] === 'true' ? test : test.skip;

const cli = (args: string[], timeoutMs = 60_000): Promise<ProcessRun> =>
  runProcess(process.execPath, [BIN, ...args], { timeoutMs });

interface JsonReport {
  generatedAt: string;
  summary: { complete: boolean };
  findings: { ruleId: string; state?: string; fingerprint: string }[];
  notifications: { message: string }[];
  baseline?: string;
  absent?: { ruleId: string; fingerprint: string }[];
}
const readJson = (path: string): JsonReport => JSON.parse(readFileSync(path, 'utf8')) as JsonReport;

/** Everything under `dir` whose name says it is unfinished: temp files and unpublished run folders. */
function leftovers(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (name.endsWith('.tmp') || name.startsWith('.incomplete-')) found.push(path);
      if (lstatSync(path).isDirectory()) walk(path);
    }
  };
  walk(dir);
  return found;
}

/** The published set: every report name resolves into one existing run folder that holds exactly that set. */
function publishedSet(out: string, names: string[]): string {
  const folders = new Set(names.map((name) => dirname(realpathSync(join(out, name)))));
  assert.is(folders.size, 1, `one run behind all of ${names.join(', ')}: ${[...folders].join(', ')}`);
  const run = [...folders][0]!;
  assert.equal(readdirSync(run).sort(), [...names].sort(), 'the run folder holds exactly its set');
  return run;
}

test('1. concurrent runs: 3 at once into one --out, 20 rounds, --keep 1 --baseline auto: every published set whole and consistent, no run lost', async () => {
  const out = join(tempDir(), 'reports');
  const names = ['mesh-audit.json', 'mesh-audit.prom', 'mesh-audit.sarif'];
  const args = [
    'evaluate',
    DEMO,
    '--history',
    DEMO_HISTORY,
    '--out',
    out,
    '--format',
    'json,sarif,prom',
    '--baseline',
    'auto',
    '--keep',
    '1',
    '--fail-on',
    'none',
  ];
  let runs = 0;
  for (let round = 0; round < 20; round++) {
    const results = await Promise.all([cli(args), cli(args), cli(args)]);
    for (const r of results) {
      assert.is(r.code, 0, `round ${round}: ${r.stderr}`);
      assert.not.match(r.stderr, 'internal error');
    }
    runs += 3;
    const run = publishedSet(out, names);
    assert.equal(readdirSync(join(out, 'runs')), [run.split('/').pop()], '--keep 1: one run folder, the published one');
    assert.equal(leftovers(out), []);
    const json = readJson(join(run, 'mesh-audit.json'));
    const sarif = JSON.parse(readFileSync(join(run, 'mesh-audit.sarif'), 'utf8')) as { runs: { results: unknown[] }[] };
    assert.is(sarif.runs[0]!.results.length, json.findings.length, 'SARIF and JSON of one run');
    // Runs followed one another: each compared with the one before it, never with a lost or half-written one.
    assert.ok(
      json.baseline !== undefined && json.baseline.includes('/runs/'),
      `round ${round}: baseline ${json.baseline}`,
    );
    assert.equal(
      json.findings.filter((f) => f.state !== 'unchanged'),
      [],
      `round ${round}: nothing new against the previous run`,
    );
    // Every run took its own number: the published one is the last of them.
    assert.is(
      Number(/^(\d+)-/.exec(run.split('/').pop()!)?.[1]),
      runs,
      `round ${round}: the run numbered ${runs} is published`,
    );
  }
  assert.match(readlinkSync(join(out, 'latest')), /^runs\/\d{6,}-\d{8}T\d{9}Z$/, 'latest names the run folder');
});

test("1. a second run waits for the first up to --lock-timeout, then exits 3 naming the holder's pid", async () => {
  const out = join(tempDir(), 'reports');
  mkdirSync(out, { mode: 0o750 });
  // A holder of the output folder's lock, as a running scan holds it.
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `import('${join(PACKAGE_ROOT, 'dist', 'src', 'write', 'lock.js')}').then(async ({ lockOutputFolder }) => { await lockOutputFolder(${JSON.stringify(out)}, 0); process.stdout.write('locked\\n'); process.stdin.resume(); })`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      holder.once('exit', () => reject(new Error('the lock holder ended')));
    });
    const waited = await cli(['evaluate', DEMO, '--out', out, '--format', 'json', '--lock-timeout', '1']);
    assert.is(waited.code, 3, waited.stderr);
    assert.match(waited.stderr, `another mesh-audit run (pid ${holder.pid}) is writing this output folder`);
    assert.match(waited.stderr, '--lock-timeout');
    assert.not.ok(existsSync(join(out, 'runs')), 'nothing written while the other run held the folder');
  } finally {
    if (holder.exitCode === null && holder.signalCode === null) {
      const closed = new Promise((r) => holder.once('close', r));
      holder.kill('SIGKILL');
      await closed;
    }
  }
  // The kernel dropped the lock with its holder: the folder is free again.
  const after = await cli([
    'evaluate',
    DEMO,
    '--out',
    out,
    '--format',
    'json',
    '--lock-timeout',
    '0',
    '--fail-on',
    'none',
  ]);
  assert.is(after.code, 0, after.stderr);
});

test('2. a clock moved back a month loses nothing: the run just written stays published, the snapshot reported kept stays kept', async () => {
  const ahead = new Date(FIXED_NOW.getTime() + 31 * 24 * 3600 * 1000);
  const out = join(tempDir(), 'reports');
  const evaluate = (now: Date) =>
    runCli(
      [
        'evaluate',
        DEMO,
        '--history',
        DEMO_HISTORY,
        '--out',
        out,
        '--format',
        'json,sarif',
        '--keep',
        '1',
        '--fail-on',
        'none',
      ],
      now,
    );
  assert.is((await evaluate(ahead)).code, 0);
  const back = await evaluate(FIXED_NOW);
  assert.is(back.code, 0, back.stderr);
  const run = publishedSet(out, ['mesh-audit.json', 'mesh-audit.sarif']);
  assert.is(
    readJson(join(run, 'mesh-audit.json')).generatedAt,
    FIXED_NOW.toISOString(),
    'the published run is the one written last, whatever its time',
  );
  assert.equal(readdirSync(join(out, 'runs')), [run.split('/').pop()]);

  const dir = tempDir();
  const ledger = join(dir, 'ledger.json');
  writeFileSync(ledger, '[]\n');
  const scanOut = join(dir, 'out');
  const scan = (now: Date) =>
    runCli(
      [
        'scan',
        '--docker-host',
        NO_ENGINE,
        '--ledger',
        ledger,
        '--hostname',
        'clock',
        '--out',
        scanOut,
        '--format',
        'json',
        '--keep',
        '1',
      ],
      now,
    );
  assert.is((await scan(ahead)).code, 3);
  const second = await scan(FIXED_NOW);
  assert.is(second.code, 3, second.stderr);
  const kept = /kept snapshot (\S+)/.exec(second.stderr)?.[1];
  assert.ok(kept, second.stderr);
  assert.ok(existsSync(kept), `${kept} was reported kept and is there`);
  assert.equal(
    readdirSync(join(scanOut, 'history', 'clock')).filter((n) => n !== HISTORY_INDEX_FILE),
    [kept.split('/').pop()],
  );
  assert.is((JSON.parse(readFileSync(kept, 'utf8')) as { takenAt: string }).takenAt, FIXED_NOW.toISOString());
});

test("3. a FIFO never hangs a run: in --history, in the scan's own history, as --baseline, --config or --waivers", async () => {
  const dir = tempDir();
  const fifo = (path: string): string => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    assert.is(spawnSync('mkfifo', [path]).status, 0);
    return path;
  };
  const history = join(dir, 'history');
  mkdirSync(history);
  for (const name of readdirSync(DEMO_HISTORY))
    writeFileSync(join(history, name), readFileSync(join(DEMO_HISTORY, name)));
  fifo(join(history, 'zz.json'));
  const fromHistory = await cli(['evaluate', DEMO, '--history', history, '--format', 'json', '--out', '-'], 20_000);
  assert.not.ok(fromHistory.timedOut, 'a FIFO in --history hung the run');
  assert.is(fromHistory.code, 3, fromHistory.stderr);
  const report = JSON.parse(fromHistory.stdout) as JsonReport;
  assert.ok(
    report.notifications.some((n) => n.message.includes('zz.json') && n.message.includes('a FIFO')),
    JSON.stringify(report.notifications),
  );

  const out = join(dir, 'out');
  fifo(join(out, 'history', 'fifo-host', 'snapshot-20260101T000000Z.json'));
  const ledger = join(dir, 'ledger.json');
  writeFileSync(ledger, '[]\n');
  const own = await cli(
    [
      'scan',
      '--docker-host',
      NO_ENGINE,
      '--ledger',
      ledger,
      '--hostname',
      'fifo-host',
      '--out',
      out,
      '--format',
      'json',
    ],
    20_000,
  );
  assert.not.ok(own.timedOut, "a FIFO in the scan's own history hung the run");
  assert.is(own.code, 3, own.stderr);
  assert.ok(readJson(join(out, 'mesh-audit.json')).notifications.some((n) => n.message.includes('a FIFO')));

  for (const [flag, name] of [
    ['--baseline', 'baseline.json'],
    ['--config', 'config.yaml'],
    ['--waivers', 'waivers.yaml'],
  ] as const) {
    const path = fifo(join(dir, name));
    const args =
      flag === '--config'
        ? ['scan', '--docker-host', NO_ENGINE, '--config', path, '--out', '-', '--format', 'json']
        : ['evaluate', DEMO, flag, path, '--out', '-', '--format', 'json'];
    const r = await cli(args, 20_000);
    assert.not.ok(r.timedOut, `a FIFO as ${flag} hung the run`);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `${path}: cannot read`);
    assert.match(r.stderr, 'a FIFO, not a regular file');
  }
});

/** A tmpfs of `size` at `dir` for the duration of `work`. */
async function onTmpfs(dir: string, size: string, work: () => Promise<void>): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0750`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  assert.is(mounted.status, 0, `mount a tmpfs (needs root): ${mounted.stderr}`);
  try {
    await work();
  } finally {
    spawnSync('umount', ['-l', dir]);
  }
}

/** Fills the file system of `dir` to the last byte, but for `spare` bytes. */
function fill(dir: string, spare = 0): void {
  if (spare > 0) writeFileSync(join(dir, 'spare'), Buffer.alloc(spare));
  for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 64, 1]) {
    for (let i = 0; ; i++) {
      try {
        writeFileSync(join(dir, `filler-${size}-${i}`), Buffer.alloc(size));
      } catch {
        break;
      }
    }
  }
  if (spare > 0) rmSync(join(dir, 'spare'));
}

asRoot(
  '4. a full disk (ENOSPC on a small tmpfs): exit 3 naming the path and the OS error, the previous set intact and still published',
  async () => {
    const mnt = join(tempDir(), 'mnt');
    await onTmpfs(mnt, '2m', async () => {
      const out = join(mnt, 'out');
      const args = [
        'evaluate',
        DEMO,
        '--history',
        DEMO_HISTORY,
        '--out',
        out,
        '--format',
        'json,sarif',
        '--fail-on',
        'none',
      ];
      const first = await cli(args);
      assert.is(first.code, 0, first.stderr);
      const before = publishedSet(out, ['mesh-audit.json', 'mesh-audit.sarif']);
      const json = readFileSync(join(out, 'mesh-audit.json'), 'utf8');
      const sarif = readFileSync(join(out, 'mesh-audit.sarif'), 'utf8');
      mkdirSync(join(mnt, 'filler'));
      // Two pages free: room for the run's bookkeeping, not for its reports.
      fill(join(mnt, 'filler'), 8192);
      const full = await cli(args);
      assert.is(full.code, 3, full.stderr);
      assert.match(full.stderr, new RegExp(`${out}/\\S+: cannot write: ENOSPC \\(no space left on device\\)`));
      assert.match(full.stderr, 'not published (the previous ones stand)');
      assert.not.match(full.stderr, 'internal error');
      assert.is(publishedSet(out, ['mesh-audit.json', 'mesh-audit.sarif']), before);
      assert.is(readFileSync(join(out, 'mesh-audit.json'), 'utf8'), json);
      assert.is(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8'), sarif);
      assert.equal(leftovers(out), []);
    });

    // The history snapshot cannot be kept (its folder is full): the reports say the run is incomplete.
    const dir = tempDir();
    const out = join(dir, 'out');
    const ledger = join(dir, 'ledger.json');
    writeFileSync(ledger, '[]\n');
    const historyDir = join(out, 'history', 'full-host');
    await onTmpfs(historyDir, '64k', async () => {
      fill(historyDir);
      const scan = await cli([
        'scan',
        '--docker-host',
        NO_ENGINE,
        '--ledger',
        ledger,
        '--hostname',
        'full-host',
        '--out',
        out,
        '--format',
        'json',
      ]);
      assert.is(scan.code, 3, scan.stderr);
      assert.not.match(scan.stderr, 'internal error');
      assert.match(
        scan.stderr,
        new RegExp(`history snapshot not kept: ${historyDir}/snapshot-\\S+\\.json: cannot write: ENOSPC`),
      );
      const report = readJson(join(out, 'mesh-audit.json'));
      assert.is(report.summary.complete, false);
      assert.ok(
        report.notifications.some((n) => n.message.includes('history snapshot not kept')),
        JSON.stringify(report.notifications),
      );
      assert.equal(leftovers(historyDir), []);
    });
  },
);

/** A fleet of `count` copies of the demo host: enough to catch a run in the middle of writing its reports. */
function fleet(dir: string, count: number): string[] {
  const snapshot = JSON.parse(readFileSync(DEMO, 'utf8')) as { host: { hostname: string } };
  return Array.from({ length: count }, (_, i) => {
    snapshot.host.hostname = `fleet-${i}`;
    const file = join(dir, `host-${i}.json`);
    writeFileSync(file, JSON.stringify(snapshot));
    return file;
  });
}

test("5. SIGTERM or SIGINT mid-run: one line on stderr, exit 143 or 130, no partial set; killed runs' leftovers are cleaned and never counted by --keep", async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const small = [
    'evaluate',
    DEMO,
    '--history',
    DEMO_HISTORY,
    '--out',
    out,
    '--format',
    'json,sarif,jsonl,prom',
    '--keep',
    '3',
    '--fail-on',
    'none',
  ];
  for (let i = 0; i < 3; i++) assert.is((await cli(small)).code, 0);
  const names = ['mesh-audit.json', 'mesh-audit.jsonl', 'mesh-audit.prom', 'mesh-audit.sarif'];
  const published = publishedSet(out, names);
  const complete = readdirSync(join(out, 'runs')).sort();

  // A long run, stopped as soon as it starts writing its run folder: by SIGTERM (systemd, timeout(1)), then by SIGINT (Ctrl-C).
  const files = fleet(dir, 300);
  for (const [sent, expected] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'evaluate',
        ...files,
        '--history',
        DEMO_HISTORY,
        '--out',
        out,
        '--format',
        'json,sarif,jsonl,prom',
        '--keep',
        '3',
        '--jobs',
        '1',
        '--fail-on',
        'none',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    let caught = false;
    const watcher = watch(join(out, 'runs'), (_event, name) => {
      // The first new entry in runs/ is the run starting to write its folder.
      if (!caught && name !== null && !complete.includes(String(name))) {
        caught = true;
        child.kill(sent);
      }
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (c, s) => resolve([c, s])),
    );
    clearTimeout(guard);
    watcher.close();
    assert.ok(caught, `the run was stopped while writing (exit ${code} ${signal}): ${stderr}`);
    assert.is(code, expected, `${sent}: exit ${expected} (${signal}): ${stderr}`);
    assert.match(stderr, new RegExp(`^mesh-audit: stopped by ${sent}; nothing published`, 'm'));
    assert.equal(leftovers(out), [], 'no temp file, no unpublished run folder');
    assert.is(publishedSet(out, names), published, 'the previous set is still the published one');
    assert.equal(readdirSync(join(out, 'runs')).sort(), complete);
  }

  // What a run killed outright (SIGKILL) leaves: an unpublished run folder and temp files, here and in history.
  const killed = join(out, 'runs', '.incomplete-000099-20261001T000000000Z');
  mkdirSync(killed);
  writeFileSync(join(killed, 'mesh-audit.json'), '{"half":');
  writeFileSync(join(out, 'runs', complete[2]!, '.mesh-audit.sarif.4242.0123456789ab.tmp'), 'half');
  symlinkSync('runs/x', join(out, '.latest.4242.0123456789ab.tmp'));
  mkdirSync(join(out, 'history', 'h'), { recursive: true, mode: 0o750 });
  writeFileSync(join(out, 'history', 'h', '.snapshot-000099-20261001T000000Z.json.4242.0123456789ab.tmp'), '{');
  const next = await cli(small);
  assert.is(next.code, 0, next.stderr);
  assert.equal(leftovers(out), [], 'leftovers of killed runs are cleaned');
  const runs = readdirSync(join(out, 'runs')).sort();
  assert.is(runs.length, 3, '--keep 3 counts complete runs only');
  assert.equal(runs.slice(0, 2), complete.slice(1), 'the two newest earlier complete runs are kept');
  assert.is(publishedSet(out, names).split('/').pop(), runs[2]);
});

test('6. --out link/ and link/. are the symlink link: refused (exit 3), nothing written through it', async () => {
  const dir = tempDir();
  const real = join(dir, 'real');
  mkdirSync(real, { mode: 0o750 });
  symlinkSync(real, join(dir, 'link'));
  for (const out of [`${join(dir, 'link')}/`, `${join(dir, 'link')}/.`]) {
    const r = await runCli(['evaluate', DEMO, '--out', out, '--format', 'json']);
    assert.is(r.code, 3, `${out}: ${r.stderr}`);
    assert.match(r.stderr, 'is a symlink; refusing to write through it');
    assert.equal(readdirSync(real), [], `${out}: nothing written`);
  }
  const through = await runCli(['evaluate', DEMO, '--out', `${join(dir, 'link')}/../elsewhere`, '--format', 'json']);
  assert.is(through.code, 3);
  assert.match(through.stderr, "'..' after the symlink");
});

test('6. a folder named like a snapshot in history is a problem said once, not an internal error; --keep leaves it alone', async () => {
  const dir = tempDir();
  const out = join(dir, 'out');
  const odd = join(out, 'history', 'odd', 'snapshot-20260101T000000Z.json');
  mkdirSync(odd, { recursive: true, mode: 0o750 });
  const ledger = join(dir, 'ledger.json');
  writeFileSync(ledger, '[]\n');
  for (let i = 0; i < 2; i++) {
    const r = await cli([
      'scan',
      '--docker-host',
      NO_ENGINE,
      '--ledger',
      ledger,
      '--hostname',
      'odd',
      '--out',
      out,
      '--format',
      'json',
      '--keep',
      '1',
    ]);
    assert.is(r.code, 3, r.stderr);
    assert.not.match(r.stderr, 'internal error');
    assert.ok(
      readJson(join(out, 'mesh-audit.json')).notifications.some(
        (n) => n.message.includes('snapshot-20260101T000000Z.json') && n.message.includes('a folder'),
      ),
    );
  }
  assert.ok(lstatSync(odd).isDirectory());
  assert.is(
    readdirSync(join(out, 'history', 'odd')).filter(
      (n) => n !== 'snapshot-20260101T000000Z.json' && n !== HISTORY_INDEX_FILE,
    ).length,
    1,
    '--keep 1 kept the newest snapshot',
  );
});

test('6. a 0-byte or blank ledger (caught mid-rewrite) is unreadable: exit 3, and no earlier ledger finding becomes absent', async () => {
  const dir = tempDir();
  const out = join(dir, 'out');
  const ledger = join(dir, 'ledger.json');
  const scan = () =>
    cli([
      'scan',
      '--docker-host',
      NO_ENGINE,
      '--ledger',
      ledger,
      '--hostname',
      'ledger-host',
      '--out',
      out,
      '--format',
      'json',
      '--baseline',
      'auto',
    ]);
  // An entry without a type: a ledger finding.
  writeFileSync(ledger, JSON.stringify([{ id: 'broken.entry', target: '/etc/x' }]));
  assert.is((await scan()).code, 3);
  const ledgerFindings = readJson(join(out, 'mesh-audit.json')).findings.map((f) => f.fingerprint);
  assert.ok(ledgerFindings.length > 0, 'the broken entry gave a finding');
  for (const text of ['', ' \n\n']) {
    writeFileSync(ledger, text);
    const r = await scan();
    assert.is(r.code, 3, r.stderr);
    assert.match(r.stderr, `ledger ${ledger} is empty (0 bytes or only whitespace): not read`);
    const report = readJson(join(out, 'mesh-audit.json'));
    assert.is(report.summary.complete, false);
    assert.equal(
      (report.absent ?? []).filter((f) => ledgerFindings.includes(f.fingerprint)),
      [],
      'what was not read is not absent',
    );
  }
  rmSync(ledger);
});

test.run();
