import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import type { FileRecord, Snapshot } from '../src/snapshot/types.js';
import { tempDir } from './support/cli.js';
import { ci, isRoot, requireRoot, rootTest } from './support/root.js';
import {
  callsReaching,
  hasCommand,
  runProcess,
  straceBinary,
  straceCli,
  writesOutside,
  type ProcessRun,
} from './support/strace.js';

// A hostile file system under the managed roots, scanned by the real CLI with no engine
// (`--docker-host unix:///nonexistent.sock`: exit 3 because of the engine, and only because of it).
// Each case must give a clear error or a record, never a crash, a hang or a lost result:
// permission denied, symlink loops, a FIFO, a socket, device nodes, files vanishing mid-walk, a
// tree 300 deep and one deeper than PATH_MAX, a folder wider than maxFiles.
const NO_ENGINE = 'unix:///nonexistent.sock';
const BIN = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
const strace = isRoot ? straceBinary() : null;
/** Each test scans as root under strace: skipped outside CI when not root, a failure in CI. */
const it = rootTest;
const sha = (text: string | Buffer): string => 'sha256:' + createHash('sha256').update(text).digest('hex');

interface Scan {
  run: ProcessRun;
  snapshot: Snapshot;
  files: Map<string, FileRecord>;
  trace: string;
  out: string;
}

/** One scan of `managedRoots` with a ledger of `entries`, into a fresh output folder; never more than `timeoutMs`. */
async function scan(
  base: string,
  name: string,
  managedRoots: string[],
  entries: unknown[],
  options: { uid?: number; gid?: number; wrap?: string[]; traced?: boolean; timeoutMs?: number } = {},
): Promise<Scan> {
  const out = join(base, `out-${name}`);
  mkdirSync(out, { mode: 0o750 });
  if (options.uid !== undefined) chownSync(out, options.uid, options.gid ?? options.uid);
  const ledger = join(base, `ledger-${name}.json`);
  writeFileSync(ledger, JSON.stringify(entries), { mode: 0o644 });
  const args = [
    'scan',
    '--docker-host',
    NO_ENGINE,
    '--ledger',
    ledger,
    ...managedRoots.flatMap((r) => ['--managed-root', r]),
    '--hostname',
    `hostile-${name}`,
    '--out',
    out,
    '--format',
    'json',
  ];
  const timeoutMs = options.timeoutMs ?? 30_000;
  let run: ProcessRun;
  let trace = '';
  if (options.traced && strace) {
    const traced = await straceCli(strace, join(base, `${name}.trace`), args, { timeoutMs });
    run = traced;
    trace = traced.trace;
  } else {
    const [cmd, ...pre] = [...(options.wrap ?? []), process.execPath];
    run = await runProcess(cmd, [...pre, BIN, ...args], {
      timeoutMs,
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid ?? options.uid, cwd: base } : {}),
    });
  }
  assert.not.ok(run.timedOut, `scan ${name} did not finish within ${timeoutMs} ms (a hang): ${run.stderr}`);
  assert.not.ok(run.stderr.includes('internal error'), `scan ${name} crashed: ${run.stderr}`);
  assert.is(run.code, 3, `scan ${name}: exit 3 (no engine), got ${run.code}: ${run.stderr}`);
  assert.match(run.stderr, 'cannot reach the Docker engine at unix:///nonexistent.sock');
  const historyDir = join(out, 'history', `hostile-${name}`);
  const kept = readdirSync(historyDir).filter((n) => n.endsWith('.json'));
  assert.is(kept.length, 1, `scan ${name} kept its snapshot`);
  const snapshot = JSON.parse(readFileSync(join(historyDir, kept[0]!), 'utf8')) as Snapshot;
  assert.ok(existsSync(join(out, 'mesh-audit.json')), `scan ${name} wrote its report`);
  return { run, snapshot, files: new Map(snapshot.files.map((f) => [f.path, f])), trace, out };
}

/**
 * The problems are the missing engine and, one each, the records that could not be read (what was
 * not checked is said, never lost).
 */
function onlyEngineProblem(s: Scan): void {
  const problems = s.snapshot.problems;
  assert.equal(problems.filter((p) => p.source === 'docker').length, 1, JSON.stringify(problems));
  const unread = s.snapshot.files
    .filter((f) => f.error !== undefined)
    .map((f) => f.path)
    .sort();
  const said = problems
    .filter((p) => p.source === 'files' && p.subject !== undefined && p.message.includes(' not checked: '))
    .map((p) => p.subject!)
    .sort();
  assert.equal(said, unread, JSON.stringify(problems));
  assert.is(problems.length, 1 + unread.length, JSON.stringify(problems));
}

/** Nothing is ever recorded below a symlink, except the explicit path it blocked (with that error). */
function nothingBelowSymlinks(s: Scan): void {
  const links = s.snapshot.files.filter((f) => f.kind === 'symlink').map((f) => f.path + '/');
  for (const f of s.snapshot.files) {
    const under = links.find((l) => f.path.startsWith(l));
    if (under) assert.match(f.error ?? '', 'a parent folder is a symlink', `${f.path} recorded below symlink ${under}`);
  }
}

/** A process blocked in open(2) of a FIFO for writing, until a reader opens it (even O_NONBLOCK); it then leaves a mark. */
function fifoWatcher(fifo: string, mark: string): ChildProcess {
  const w = spawn('sh', ['-c', 'exec 3>"$1"; echo opened > "$2"; sleep 30', 'sh', fifo, mark], {
    stdio: 'ignore',
    detached: true,
  });
  w.unref(); // a failed assertion must not leave the test process waiting for it
  return w;
}
const stopWatcher = (w: ChildProcess | undefined): void => {
  if (w?.pid !== undefined && w.exitCode === null && w.signalCode === null) {
    try {
      process.kill(-w.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
};

// Trees deeper than PATH_MAX cannot be removed by fs.rmSync (it works with whole paths): rm -rf can.
const deepDirs: string[] = [];
let watcher: ChildProcess | undefined;
let churner: ChildProcess | undefined;
process.once('exit', () => {
  stopWatcher(watcher);
  stopWatcher(churner);
  for (const d of deepDirs) spawnSync('rm', ['-rf', d]);
});

// ---------------------------------------------------------------------------------------------

it('loops, a FIFO, a socket, device nodes, a tree 300 deep and one deeper than PATH_MAX: recorded, never followed or opened, no hang', async () => {
  requireRoot();
  const base = realpathSync(tempDir('ma-hostile-', '/tmp'));
  const m = join(base, 'm');
  mkdirSync(m);
  // Symlink loops: a -> b -> a, a self-loop, and folder loops under the root (.., ../dir, /).
  symlinkSync('loop-b', join(m, 'loop-a'));
  symlinkSync('loop-a', join(m, 'loop-b'));
  symlinkSync('self', join(m, 'self'));
  mkdirSync(join(m, 'dir'));
  writeFileSync(join(m, 'dir', 'real.env'), 'REAL=1\n');
  symlinkSync('..', join(m, 'dir', 'up'));
  symlinkSync('../dir', join(m, 'dir', 'again'));
  symlinkSync('/', join(m, 'dir', 'root'));
  // A FIFO named like an env file (and named by the ledger as a source): opening it for reading would block.
  const fifo = join(m, 'pipe.env');
  assert.is(spawnSync('mkfifo', [fifo]).status, 0);
  const mark = join(base, 'fifo-opened');
  watcher = fifoWatcher(fifo, mark);
  // A unix socket with a live listener: a connection would be seen.
  const sock = join(m, 'agent.sock');
  let connections = 0;
  const server: Server = createServer((c) => {
    connections++;
    c.destroy();
  });
  await new Promise<void>((resolve) => server.listen(sock, resolve));
  server.unref(); // a failed assertion must not leave the test process waiting on it
  try {
    await kindsCase(base, m, { fifo, mark, sock, connections: () => connections });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    stopWatcher(watcher);
  }
});

async function kindsCase(
  base: string,
  m: string,
  k: { fifo: string; mark: string; sock: string; connections: () => number },
): Promise<void> {
  const { fifo, mark, sock } = k;
  // Device nodes: /dev/null's numbers as a char device, a loop device's as a block device.
  const devices = hasCommand('mknod');
  if (devices) {
    assert.is(spawnSync('mknod', [join(m, 'null.env'), 'c', '1', '3']).status, 0);
    assert.is(spawnSync('mknod', [join(m, 'disk'), 'b', '7', '250']).status, 0);
  }
  // 300 levels, a file at the bottom.
  let deep = join(m, 'deep');
  for (let i = 0; i < 300; i++) deep = join(deep, 'd');
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, 'bottom.env'), 'BOTTOM=1\n');
  // Deeper than PATH_MAX (4096): 1400 levels of 'ddd/' under its own root, made in two relative
  // steps of 700 from a child that changes into the first (no path it uses is longer than 2800).
  const abyss = mkdtempSync('/tmp/ma-hostile-abyss-');
  deepDirs.push(abyss);
  const made = spawnSync(
    process.execPath,
    [
      '-e',
      `
    const fs = require('node:fs'); process.chdir(process.argv[1]);
    const step = Array(700).fill('ddd').join('/');
    for (let k = 0; k < 2; k++) { fs.mkdirSync(step, { recursive: true }); process.chdir(step); }
    fs.writeFileSync('bottom.txt', 'x\\n');`,
      abyss,
    ],
    { encoding: 'utf8' },
  );
  assert.is(made.status, 0, made.stderr);
  // A root after the abyss: what comes after a failure is still collected.
  const after = join(base, 'after');
  mkdirSync(after);
  writeFileSync(join(after, 'last.env'), 'LAST=1\n');

  const s = await scan(
    base,
    'kinds',
    [abyss, m, after],
    [
      { id: 'k.app', type: 'container', target: 'k-app', sources: [fifo, join(m, 'null.env')] },
      { id: 'k.pipe', type: 'file', target: fifo },
      { id: 'k.through-loop', type: 'file', target: join(m, 'loop-a', 'x.env') },
      { id: 'k.through-up', type: 'file', target: join(m, 'dir', 'up', 'dir', 'real.env') },
      { id: 'k.sock', type: 'file', target: sock },
    ],
    { traced: true, timeoutMs: 20_000 },
  );
  onlyEngineProblem(s);
  nothingBelowSymlinks(s);
  const rec = (p: string) => s.files.get(p);

  // Loops: symlinks, with their text, not followed.
  for (const [name, target] of [
    ['loop-a', 'loop-b'],
    ['loop-b', 'loop-a'],
    ['self', 'self'],
    ['dir/up', '..'],
    ['dir/again', '../dir'],
    ['dir/root', '/'],
  ] as const) {
    assert.equal([rec(join(m, name))?.kind, rec(join(m, name))?.linkTarget], ['symlink', target], name);
  }
  assert.is(
    rec(join(m, 'loop-a', 'x.env'))?.error,
    `a parent folder is a symlink (${join(m, 'loop-a')}): not followed`,
  );
  assert.is(
    rec(join(m, 'dir', 'up', 'dir', 'real.env'))?.error,
    `a parent folder is a symlink (${join(m, 'dir', 'up')}): not followed`,
  );
  assert.is(rec(join(m, 'dir', 'real.env'))?.sha256, sha('REAL=1\n'));
  assert.not.ok(
    s.snapshot.files.some((f) => f.path === '/etc' || f.path.startsWith(join(m, 'dir', 'root') + '/')),
    'the host root was not walked',
  );

  // FIFO, socket, devices: recorded by kind, no digest, no env, no error (nothing was attempted).
  const kinds: Array<[string, string]> = [
    [fifo, 'fifo'],
    [sock, 'socket'],
  ];
  if (devices) kinds.push([join(m, 'null.env'), 'char-device'], [join(m, 'disk'), 'block-device']);
  for (const [path, kind] of kinds) {
    const r = rec(path);
    assert.ok(r, `${path} recorded`);
    assert.equal([r.kind, r.sha256, r.env, r.error], [kind, undefined, undefined, undefined], path);
  }
  assert.not.ok(existsSync(mark), 'the FIFO was opened for reading: its blocked writer woke up');
  assert.is(k.connections(), 0, 'the socket was connected to');
  if (strace) {
    for (const [path] of kinds)
      assert.equal(
        callsReaching(s.trace, PACKAGE_ROOT, path).map((c) => c.text),
        [],
        `${path} was opened`,
      );
    assert.equal(writesOutside(s.trace, { outDir: s.out, cwd: PACKAGE_ROOT }), [], 'writes outside --out');
  }

  // 300 deep: every level and the file at the bottom.
  assert.is(rec(join(deep, 'bottom.env'))?.sha256, sha('BOTTOM=1\n'));
  assert.is(s.snapshot.files.filter((f) => f.path.startsWith(join(m, 'deep')) && f.kind === 'directory').length, 301);

  // Deeper than PATH_MAX: walked as far as a path can go, then one clear error; nothing after it lost.
  const inAbyss = s.snapshot.files.filter((f) => f.path.startsWith(abyss + '/'));
  const tooLong = inAbyss.filter((f) => f.error !== undefined);
  assert.equal(
    tooLong.map((f) => [f.kind, f.error]),
    [['unknown', 'cannot read: ENAMETOOLONG']],
  );
  assert.ok(
    tooLong[0]!.path.length >= 4096 &&
      inAbyss.every((f) => f === tooLong[0] || (f.kind === 'directory' && f.path.length < 4096)),
  );
  assert.ok(inAbyss.length > 900, `${inAbyss.length} levels recorded`);
  assert.is(rec(join(after, 'last.env'))?.sha256, sha('LAST=1\n'));
  spawnSync('rm', ['-rf', abyss]);
}

// Honest privilege drop: nobody (uid/gid 65534) when it can run the scanner from where it is;
// else root without the capabilities that bypass file permissions (files then owned by uid 4242).
const asNobody =
  isRoot &&
  spawnSync(process.execPath, [BIN, '--version'], { uid: 65534, gid: 65534, cwd: '/', encoding: 'utf8' }).status === 0;
const setpriv = [
  '/usr/bin/setpriv',
  '--bounding-set=-dac_override,-dac_read_search',
  '--inh-caps=-dac_override,-dac_read_search',
  '--',
];
/** Without either way to drop privileges the test is skipped outside CI (uvu counts it) and fails in CI. */
const canDropPrivileges = asNobody || existsSync(setpriv[0]!);

(canDropPrivileges || ci ? it : test.skip)(
  'permission denied (scanner as nobody, or as root without CAP_DAC_*): errors on the records, the readable rest collected',
  async () => {
    requireRoot();
    assert.ok(canDropPrivileges, 'nobody cannot run the scanner from here and setpriv (util-linux) is missing');
    const base = realpathSync(tempDir('ma-hostile-perm-', '/tmp'));
    chmodSync(base, 0o755);
    const owner = asNobody ? 0 : 4242;
    const m = join(base, 'm');
    mkdirSync(join(m, 'private'), { recursive: true, mode: 0o755 });
    writeFileSync(join(m, 'public.env'), 'PUBLIC=1\n', { mode: 0o644 });
    const CANARY = `perm-canary-${process.pid}`;
    writeFileSync(join(m, 'secret.env'), `SECRET=${CANARY}\n`, { mode: 0o600 });
    writeFileSync(join(m, 'private', 'inner.env'), `INNER=${CANARY}\n`, { mode: 0o600 });
    chownSync(join(m, 'secret.env'), owner, owner);
    chownSync(join(m, 'private', 'inner.env'), owner, owner);
    chownSync(join(m, 'private'), owner, owner);
    chmodSync(join(m, 'private'), 0o700);
    const s = await scan(
      base,
      'perm',
      [m],
      [
        { id: 'p.app', type: 'container', target: 'p-app', sources: [join(m, 'secret.env')] },
        { id: 'p.inner', type: 'file', target: join(m, 'private', 'inner.env') },
      ],
      asNobody ? { uid: 65534, gid: 65534 } : { wrap: setpriv },
    );
    onlyEngineProblem(s);
    const secret = s.files.get(join(m, 'secret.env'))!;
    assert.equal(
      [secret.kind, secret.mode, secret.uid, secret.sha256, secret.env, secret.error],
      ['file', '0600', owner, undefined, undefined, 'permission denied'],
    );
    assert.equal(
      [s.files.get(join(m, 'private'))?.kind, s.files.get(join(m, 'private'))?.error],
      ['directory', 'permission denied'],
    );
    assert.equal(s.files.get(join(m, 'private', 'inner.env')), {
      path: join(m, 'private', 'inner.env'),
      kind: 'unknown',
      error: `permission denied on parent folder ${join(m, 'private')}`,
    });
    assert.is(s.files.get(join(m, 'public.env'))?.sha256, sha('PUBLIC=1\n'));
    for (const name of readdirSync(s.out)) {
      if (name.endsWith('.json')) assert.not.ok(readFileSync(join(s.out, name), 'utf8').includes(CANARY));
    }
  },
);

it('files vanishing mid-walk (a process creating, renaming and deleting under the root): no crash, each one recorded whole or absent, nothing stable lost', async () => {
  requireRoot();
  const base = realpathSync(tempDir('ma-hostile-churn-', '/tmp'));
  const m = join(base, 'm');
  const stable = join(m, 'stable');
  const churn = join(m, 'churn');
  mkdirSync(stable, { recursive: true });
  mkdirSync(churn);
  const STABLE = 3000;
  for (let i = 0; i < STABLE; i++) writeFileSync(join(stable, `s${String(i).padStart(4, '0')}.env`), `S${i}=1\n`);
  // The churner: files written in place (a reader may meet them empty), files renamed into place and
  // one name replaced by rename again and again (hot.env), folders made and removed with a file
  // inside; about 300 entries alive at a time.
  const script = `
    const fs = require('node:fs'); const p = require('node:path'); const dir = process.argv[1];
    const body = (n) => 'CHURN_' + n.replace(/[^a-z0-9]/gi, '_') + '=1\\n';
    let i = 0; let ready = false;
    for (;;) {
      const f = 'f' + i + '.env';
      fs.writeFileSync(p.join(dir, f), body(f));
      const r = 'r' + i + '.env';
      fs.writeFileSync(p.join(dir, r + '.tmp'), body(r)); fs.renameSync(p.join(dir, r + '.tmp'), p.join(dir, r));
      const d = p.join(dir, 'd' + i); fs.mkdirSync(d); fs.writeFileSync(p.join(d, 'in.env'), body('in.env'));
      fs.writeFileSync(p.join(dir, 'hot.env.tmp'), body('hot.env')); fs.renameSync(p.join(dir, 'hot.env.tmp'), p.join(dir, 'hot.env'));
      if (i >= 100) {
        const o = i - 100;
        fs.rmSync(p.join(dir, 'f' + o + '.env'), { force: true });
        fs.rmSync(p.join(dir, 'r' + o + '.env'), { force: true });
        fs.rmSync(p.join(dir, 'd' + o), { recursive: true, force: true });
      }
      i++;
      if (!ready && i === 200) { ready = true; process.stdout.write('ready\\n'); }
    }`;
  churner = spawn(process.execPath, ['-e', script, churn], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  churner.unref();
  await new Promise<void>((resolve, reject) => {
    churner!.stdout!.once('data', () => {
      churner!.stdout!.destroy(); // it says 'ready' once; the pipe must not keep the test process alive
      resolve();
    });
    churner!.once('exit', (code) => reject(new Error(`the churner stopped (${code})`)));
  });
  let s: Scan;
  try {
    s = await scan(base, 'churn', [m], [{ id: 'c.stable', type: 'file', target: join(stable, 's0000.env') }], {
      timeoutMs: 30_000,
    });
  } finally {
    stopWatcher(churner);
  }
  onlyEngineProblem(s);
  for (let i = 0; i < STABLE; i++) {
    const name = `s${String(i).padStart(4, '0')}.env`;
    assert.is(s.files.get(join(stable, name))?.sha256, sha(`S${i}=1\n`), `${name} lost`);
  }
  const churned = s.snapshot.files.filter((f) => f.path.startsWith(churn + '/'));
  assert.ok(churned.length > 0, 'the walk met the churning folder while it was populated');
  const outcomes: Record<string, number> = {};
  for (const f of churned) {
    const base = f.path.slice(f.path.lastIndexOf('/') + 1).replace(/\.tmp$/, '');
    const body = `CHURN_${base.replace(/[^a-z0-9]/gi, '_')}=1\n`;
    let outcome: string;
    if (f.kind === 'missing') outcome = 'gone before lstat';
    else if (f.kind === 'directory') outcome = f.error ? `directory: ${f.error}` : 'directory';
    else if (f.kind === 'file' && f.error === undefined) {
      // Whole or (written in place, met before the write) empty: never a mix of two files.
      assert.ok(
        f.sha256 === sha(body) || f.sha256 === sha(''),
        `${f.path}: ${f.sha256} is neither its content nor empty`,
      );
      outcome = f.sha256 === sha(body) ? 'file' : 'file (met empty)';
    } else if (f.kind === 'file') outcome = `file: ${f.error}`;
    else if (f.kind === 'unknown' && f.error !== undefined) outcome = `unknown: ${f.error}`;
    else throw new Error(`unexpected record ${JSON.stringify(f)}`);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  for (const [outcome, count] of Object.entries(outcomes)) {
    assert.ok(
      /^(gone before lstat|directory|file|file \(met empty\)|file: cannot read: ENOENT|file: changed while being read: not read|file: its path changed while being read \(a parent replaced\?\): not read|directory: (cannot read: ENOENT|changed while being read: not read|its path changed while being read \(a parent replaced\?\): not read)|unknown: cannot read: ENOENT)$/.test(
        outcome,
      ),
      `${outcome} (${count})`,
    );
  }
  console.log(`  churn: ${churned.length} records under the churning folder: ${JSON.stringify(outcomes)}`);
});

it('a folder as wide as maxFiles (20000) is recorded whole; one file more gives the Problem about the bound', async () => {
  requireRoot();
  const base = realpathSync(tempDir('ma-hostile-wide-', '/tmp'));
  const m = join(base, 'm');
  const wide = join(m, 'wide');
  const m2 = join(base, 'm2');
  const wider = join(m2, 'wide');
  mkdirSync(wide, { recursive: true });
  mkdirSync(wider, { recursive: true });
  // The root and the folder are records too: 19998 files make exactly 20000; one more is over.
  for (let i = 0; i < 19_998; i++) writeFileSync(join(wide, `w${String(i).padStart(5, '0')}`), '');
  for (let i = 0; i < 19_999; i++) writeFileSync(join(wider, `w${String(i).padStart(5, '0')}`), '');
  // The two scans run side by side (each reads 20000 files).
  const [full, over] = await Promise.all([
    scan(base, 'wide', [m], [], { timeoutMs: 45_000 }),
    scan(base, 'wider', [m2], [], { timeoutMs: 45_000 }),
  ]);
  onlyEngineProblem(full);
  assert.is(full.snapshot.files.length, 20_000);
  assert.ok(full.snapshot.files.filter((f) => f.path.startsWith(wide + '/')).every((f) => f.sha256 === sha('')));

  const bound =
    'more than 20000 files to record: collection stopped there (raise --max-files / maxFiles, or narrow the managed roots)';
  assert.equal(
    over.snapshot.problems.map((p) => [p.source, p.message]).filter(([source]) => source === 'files'),
    [['files', bound]],
  );
  assert.equal(over.snapshot.problems.map((p) => p.source).sort(), ['docker', 'files']);
  assert.match(over.run.stderr, bound);
  const reportText = readFileSync(join(over.out, 'mesh-audit.json'), 'utf8');
  assert.ok(reportText.includes(bound), 'the report says what was not checked');
  assert.is(over.snapshot.files.length, 20_000);
});

test.run();
