import { mkdirSync, readFileSync, symlinkSync, writeFileSync, chmodSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { runClaimedFromEnvFile } from '../support/claimed-container.js';
import { tempDir } from '../support/cli.js';
import {
  parseTrace,
  runProcess,
  straceBinary,
  straceCli,
  TRACED_SYSCALLS,
  treeState,
  writesOutside,
  type Violation,
} from '../support/strace.js';
import { forEachEngine, removeContainers, type Engine } from './engine.js';
import { LiveHost, type LiveReport } from './live-host.js';

// Design section 8, "Read-only": a LIVE scan (real engine, containers with env files and single-file
// and folder bind mounts, a ledger, a managed root, its own history) runs under strace -f; no call in
// the trace may create, change, rename, link or remove anything outside the output folder, or open
// anything outside it for writing; nothing is executed. The host tree is the same, byte for byte and
// timestamp for timestamp, after the scan as before it.
const strace = straceBinary();
const withStrace = strace ? test : test.skip;

const show = (v: readonly Violation[]): string => v.map((x) => `  line ${x.line}: ${x.why}\n    ${x.text}`).join('\n');

// ---------------------------------------------------------------------------------------------
// The auditor itself, on a hand-written trace: it must see every form of write.

test('the trace auditor flags each kind of write outside the output folder, and none inside it', () => {
  const out = '/srv/out';
  const lines = [
    `100  execve("/usr/bin/node", ["node", "bin/mesh-audit.js"], 0x7ffc /* 3 vars */) = 0`,
    // reads, anywhere: fine
    `100  openat(AT_FDCWD</work>, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3</etc/passwd>`,
    `101  openat(AT_FDCWD</work>, "/proc/self/fd/19", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 20</srv/host>`,
    // writes inside the output folder: fine
    `101  mkdir("/srv/out", 0750)          = -1 EEXIST (File exists)`,
    `101  openat(AT_FDCWD</work>, "/srv/out/runs/.r.tmp", O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0640 <unfinished ...>`,
    `102  openat(AT_FDCWD</work>, "/etc/hosts", O_RDONLY <unfinished ...>`,
    `101  <... openat resumed>)            = 21</srv/out/runs/.r.tmp>`,
    `102  <... openat resumed>)            = 22</etc/hosts>`,
    `101  rename("/srv/out/runs/.r.tmp", "/srv/out/runs/r.json") = 0`,
    `101  symlink("runs/r.json", "/srv/out/.latest.tmp") = 0`,
    `101  unlinkat(AT_FDCWD</work>, "/srv/out/history/h/old.json", 0) = 0`,
    `101  openat(5</srv/out>, "x.json", O_WRONLY|O_CREAT|O_TRUNC, 0640) = 23</srv/out/x.json>`,
    // writes outside: each one flagged (line numbers 14…)
    `101  openat(AT_FDCWD</work>, "/etc/mesh/app.env", O_RDWR) = 24</etc/mesh/app.env>`,
    `101  openat(AT_FDCWD</work>, "notes.txt", O_WRONLY|O_APPEND|O_CLOEXEC) = -1 EACCES (Permission denied)`,
    `101  openat(7</srv/host>, "../host2/f", O_RDONLY|O_TRUNC) = 25</srv/host2/f>`,
    `101  openat(AT_FDCWD</work>, "/srv/out/evil", O_WRONLY|O_CREAT, 0640) = 26</etc/shadow>`,
    `101  openat2(AT_FDCWD</work>, "/etc/x", {flags=O_RDONLY|O_CREAT|O_CLOEXEC, mode=0600, resolve=0}, 24) = 27</etc/x>`,
    `101  open("/var/log/x", 0x441) = 28</var/log/x>`,
    `101  creat("/tmp/c", 0644)            = 29</tmp/c>`,
    `101  rename("/srv/out/a", "/etc/a")   = 0`,
    `101  renameat2(AT_FDCWD</work>, "/etc/b", 5</srv/out>, "b", RENAME_NOREPLACE) = 0`,
    `101  unlink("/etc/mesh/stale")        = 0`,
    `101  rmdir("/etc/mesh/old")           = -1 ENOTEMPTY (Directory not empty)`,
    `101  mkdirat(AT_FDCWD</work>, "tmp", 0700) = 0`,
    `101  chmod("/etc/mesh/app.env", 0600) = 0`,
    `101  fchmod(24</etc/mesh/app.env>, 0644) = 0`,
    `101  fchownat(AT_FDCWD</work>, "/etc/mesh", 0, 0, AT_SYMLINK_NOFOLLOW) = 0`,
    `101  linkat(AT_FDCWD</work>, "/etc/mesh/app.env", AT_FDCWD</work>, "/srv/out/copy", 0) = 0`,
    `101  symlinkat("/srv/out/r.json", 9</etc>, "latest") = 0`,
    `101  truncate("/etc/mesh/app.env", 0) = 0`,
    `101  ftruncate(30</etc/mesh/app.env>, 0) = 0`,
    `101  utimensat(31</etc/mesh/app.env>, NULL, [UTIME_NOW, UTIME_NOW], 0) = 0`,
    `101  mknodat(AT_FDCWD</work>, "/etc/mesh/fifo", S_IFIFO|0600) = 0`,
    `101  fsetxattr(32</etc/mesh/app.env>, "user.x", "1", 1, 0) = 0`,
    `101  ioctl(33</etc/mesh/app.env>, FS_IOC_SETFLAGS, [FS_IMMUTABLE_FL]) = 0`,
    `101  bind(34<socket:[1]>, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110) = 0`,
    `101  execve("/bin/sh", ["sh"], 0x1 /* 3 vars */) = 0`,
    `101  io_uring_setup(64, {flags=0}) = 35<anon_inode:[io_uring]>`,
    `101  chdir("/srv/out")                = 0`,
    `101  openat(AT_FDCWD</srv/out>, "fine.json", O_WRONLY|O_CREAT, 0640) = 36</srv/out/fine.json>`,
    `101  mkdir("../escape", 0750)         = 0`,
    `101  what is this line`,
    // mkdir -p of the output folder: an existing ancestor (EEXIST) is fine (44); creating one (43),
    // or trying a folder that is not an ancestor (45), is not.
    `101  mkdir("/srv/new", 0750)          = 0`,
    `101  mkdir("/srv", 0750)              = -1 EEXIST (File exists)`,
    `101  mkdir("/srv/other", 0750)        = -1 EEXIST (File exists)`,
  ];
  const violations = writesOutside(lines.join('\n') + '\n', { outDir: out, cwd: '/work' });
  const flagged = [...new Set(violations.map((v) => v.line))].sort((a, b) => a - b);
  // Lines 1-12 are the scanner's own launch, reads, and writes inside /srv/out; 39 is a chdir and 40
  // a write inside /srv/out after it; 44 the mkdir of an existing ancestor of /srv/out; every other
  // line (42 cannot be parsed) is flagged.
  const expected = [...Array.from({ length: 38 - 13 + 1 }, (_, i) => 13 + i), 41, 42, 43, 45];
  assert.equal(flagged, expected, show(violations));
  assert.ok(violations.some((v) => v.why === 'cannot parse this trace line' && v.text.includes('what is this line')));
  assert.ok(
    violations.some((v) => v.why.startsWith('write-open outside /srv/out: /work/notes.txt')),
    'relative to AT_FDCWD</work>',
  );
  assert.ok(
    violations.some((v) => v.why.endsWith(': /srv/host2/f')),
    'relative to a directory descriptor, .. resolved',
  );
  assert.ok(
    violations.some((v) => v.why.endsWith(': /etc/shadow')),
    'what a descriptor really reached counts, whatever the path said',
  );
  assert.ok(
    violations.some((v) => v.why.endsWith(': /srv/escape')),
    'after chdir, relative paths resolve from the new folder',
  );
  assert.ok(violations.some((v) => v.why.startsWith('io_uring')));
});

test('the parser joins unfinished and resumed halves by pid and unescapes strings', () => {
  const { calls, unparsed } = parseTrace(
    [
      `7  openat(AT_FDCWD</w>, "/a\\"b\\x41\\n", O_RDONLY <unfinished ...>`,
      `8  rename("/x", <unfinished ...>`,
      `7  <... openat resumed>) = 3</a"bA>`,
      `8  <... rename resumed>"/y") = 0`,
      `8  +++ exited with 0 +++`,
    ].join('\n'),
  );
  assert.equal(unparsed, []);
  assert.equal(
    calls.map((c) => [c.line, c.name, c.args, c.result]),
    [
      [1, 'openat', ['AT_FDCWD</w>', '"/a\\"b\\x41\\n"', 'O_RDONLY'], '3</a"bA>'],
      [2, 'rename', ['"/x"', '"/y"'], '0'],
    ],
  );
});

// ---------------------------------------------------------------------------------------------
// The same auditor on a real strace of a process that does write outside: the pipeline can fail.

withStrace(
  'strace with these options sees writes made from the thread pool, relative to a chdir, by rename and utimes',
  async () => {
    const dir = realpathSync(tempDir('ma-strace-self-'));
    const out = join(dir, 'out');
    const victim = join(dir, 'host');
    mkdirSync(out);
    mkdirSync(victim);
    writeFileSync(join(victim, 'keep.env'), 'A=1\n');
    const script = `
    const fs = require('node:fs'); const fsp = require('node:fs/promises');
    (async () => {
      await fsp.writeFile(${JSON.stringify(join(out, 'ok.json'))}, '{}');           // inside: fine
      await fsp.readFile(${JSON.stringify(join(victim, 'keep.env'))});              // a read: fine
      await fsp.writeFile(${JSON.stringify(join(victim, 'planted.txt'))}, 'x');     // outside, from the thread pool
      process.chdir(${JSON.stringify(victim)});
      fs.writeFileSync('relative.txt', 'x');                                        // outside, relative path
      fs.renameSync('relative.txt', ${JSON.stringify(join(out, 'moved.txt'))});     // a rename out of the host tree
      fs.utimesSync('keep.env', 1, 1);                                              // metadata only
    })();`;
    const tracePath = join(dir, 'trace');
    const run = await runProcess(
      strace!,
      [
        '-f',
        '-qq',
        '-y',
        '-e',
        `trace=${TRACED_SYSCALLS.join(',')}`,
        '-o',
        tracePath,
        '--',
        process.execPath,
        '-e',
        script,
      ],
      {
        env: { UV_USE_IO_URING: '0' },
        timeoutMs: 30_000,
      },
    );
    assert.is(run.code, 0, run.stderr);
    const violations = writesOutside(readFileSync(tracePath, 'utf8'), { outDir: out, cwd: PACKAGE_ROOT });
    const whys = violations.map((v) => v.why);
    for (const expected of [
      `write-open outside ${out}: ${join(victim, 'planted.txt')}`,
      `write-open outside ${out}: ${join(victim, 'relative.txt')}`,
      `rename outside ${out}: ${join(victim, 'relative.txt')}`,
      `change outside ${out}: ${join(victim, 'keep.env')}`,
    ]) {
      assert.ok(whys.includes(expected), `expected «${expected}» in:\n${show(violations)}`);
    }
    assert.not.ok(
      whys.some((w) => w.includes('ok.json') || w.includes('moved.txt')),
      show(violations),
    );
  },
);

// ---------------------------------------------------------------------------------------------
// The live scan.

// Without strace (outside CI only: straceBinary throws in CI) the live scans are skipped.
if (strace) forEachEngine('strace', (e, it) => liveScansUnderStrace(strace, e, it));
else test.skip('live scans under strace (no strace on this machine)', () => undefined);

function liveScansUnderStrace(strace: string, e: Engine, it: Test): void {
  const host = new LiveHost();
  // MA_KEEP_TRACES=DIR keeps the traces for a look afterwards; by default they go with the temp folder.
  const traces = process.env['MA_KEEP_TRACES'] ?? tempDir('ma-strace-traces-', '/tmp');
  const APP = `mastrace-app-${process.pid}`;
  const WEB = `mastrace-web-${process.pid}`;
  const CANARY = `canary-${process.pid}-52d1e0`;

  interface ScanUnderTrace {
    code: number | null;
    stderr: string;
    report: LiveReport;
    trace: string;
    before: string[];
    after: string[];
  }

  async function tracedScan(label: string, extra: string[]): Promise<ScanUnderTrace> {
    mkdirSync(host.out, { recursive: true, mode: 0o750 });
    const outDir = realpathSync(host.out);
    const before = treeState(host.dir, [outDir]);
    const run = await straceCli(
      strace,
      join(traces, `${label}.trace`),
      [
        'scan',
        '--docker-host',
        e.dockerHost,
        '--ledger',
        host.ledgerPath,
        '--managed-root',
        host.managedRoot,
        '--hostname',
        'live-strace',
        '--out',
        host.out,
        ...extra,
      ],
      { timeoutMs: 90_000 },
    );
    const after = treeState(host.dir, [outDir]);
    assert.not.ok(run.timedOut, `the scan under strace did not finish: ${run.stderr}`);
    const report = JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport;
    return { code: run.code, stderr: run.stderr, report, trace: run.trace, before, after };
  }

  function assertReadOnly(scan: ScanUnderTrace): void {
    const outDir = realpathSync(host.out);
    const violations = writesOutside(scan.trace, { outDir, cwd: PACKAGE_ROOT });
    assert.equal(violations, [], `writes outside ${outDir}:\n${show(violations)}`);
    assert.equal(scan.after, scan.before, 'the host tree changed during the scan');
  }

  /** The trace really is of a scan that read the host (not an empty or io_uring-hidden one). */
  function assertTraceIsLive(scan: ScanUnderTrace, mustRead: string[]): void {
    const { calls } = parseTrace(scan.trace);
    const opened = new Set(calls.filter((c) => /^open/.test(c.name)).map((c) => c.args[1] ?? ''));
    for (const path of mustRead) assert.ok(opened.has(JSON.stringify(path)), `the trace shows no open of ${path}`);
    assert.ok(
      calls.some((c) => c.name === 'rename' && c.args[1]?.includes('/reports/')),
      'the trace shows the reports being renamed into place',
    );
  }

  it('a live scan (containers, env files, single-file and folder binds, ledger, managed root) writes nothing outside --out', async () => {
    const eng = e;
    const appIni = host.write(host.path('app', 'app.ini'), '[server]\nport = 2999\n');
    host.write(host.path('web', 'conf', 'site.conf'), 'listen 127.0.0.1:1\n');
    host.write(host.path('stray.txt'), 'not claimed\n');
    host.write(host.path('private.env'), `SECRET=${CANARY}\n`);
    chmodSync(host.path('private.env'), 0o600);
    symlinkSync('app/app.ini', host.path('ini-link'));
    const app = runClaimedFromEnvFile(eng, host, APP, {
      env: { DATABASE_URL: `postgresql://app:${CANARY}@db:5432/app`, APP_MODE: 'prod' },
      options: ['-v', `${appIni}:/etc/app/app.ini:ro`],
    });
    const web = runClaimedFromEnvFile(eng, host, WEB, {
      env: { WEB_TOKEN: `tok-${CANARY}` },
      module: 'web',
      options: [
        '-v',
        `${host.path('web', 'conf')}:/etc/web:ro`,
        '-v',
        `${host.path('web', 'web.env')}:/etc/web.env:ro`,
      ],
    });
    const appEnv = app.envFile;
    const webEnv = web.envFile;
    host.ledger([
      app.claim,
      app.declared,
      { id: 'app.ini', type: 'file', origin: 'declared', target: appIni },
      web.claim,
      web.declared,
    ]);

    const scan = await tracedScan('first', ['--format', 'json']);
    assert.ok(
      scan.report.summary.complete,
      `complete scan: ${scan.stderr} ${JSON.stringify(scan.report.notifications)}`,
    );
    assert.ok(scan.code === 0 || scan.code === 1, `exit ${scan.code}: ${scan.stderr}`);
    const pid = Number(eng.docker(['inspect', '-f', '{{.State.Pid}}', APP]).trim());
    assertTraceIsLive(scan, [
      appEnv,
      webEnv,
      host.ledgerPath,
      `/proc/${pid}/environ`,
      `/proc/${pid}/root/etc/app/app.ini`,
    ]);
    assertReadOnly(scan);
  });

  it('a second live scan (history read, a former target, baseline, all file formats, --keep 1 pruning) writes nothing outside --out either', async () => {
    // The ledger moves app.ini: the former target comes from the history kept by the first scan.
    const moved = host.write(host.path('app', 'conf', 'app.ini'), '[server]\nport = 2999\n');
    host.ledger([
      { id: 'app.server', type: 'container', origin: 'declared', target: APP, sources: [host.path('app', 'app.env')] },
      { id: 'app.env', type: 'file', origin: 'declared', target: host.path('app', 'app.env') },
      { id: 'app.ini', type: 'file', origin: 'declared', target: moved },
      { id: 'web.server', type: 'container', origin: 'declared', target: WEB, sources: [host.path('web', 'web.env')] },
      { id: 'web.env', type: 'file', origin: 'declared', target: host.path('web', 'web.env') },
    ]);
    const scan = await tracedScan('second', ['--format', 'json,sarif,jsonl,prom', '--baseline', 'auto', '--keep', '1']);
    assert.ok(scan.report.summary.complete, scan.stderr);
    const stale = scan.report.findings.find((f) => f.ruleName === 'no-stale-file-at-old-target');
    assert.ok(
      stale,
      `the former target was collected through history: ${JSON.stringify(scan.report.findings.map((f) => f.ruleName))}`,
    );
    const outDir = realpathSync(host.out);
    const { calls } = parseTrace(scan.trace);
    assert.ok(
      calls.some((c) => c.name === 'unlink' && c.args[0]?.startsWith(`"${outDir}/history/`)),
      'the trace shows --keep 1 pruning the older snapshot (inside --out)',
    );
    assertReadOnly(scan);
    // The reports hold no raw env value either (SECURITY.md, What it never does).
    for (const name of ['mesh-audit.json', 'mesh-audit.sarif', 'mesh-audit.jsonl', 'mesh-audit.prom']) {
      assert.not.ok(readFileSync(join(host.out, name), 'utf8').includes(CANARY), `${name} holds a raw value`);
    }
  });

  it('clean-up: remove the containers this test made', () => {
    removeContainers(e, [APP, WEB]);
  });
}

test.run();
