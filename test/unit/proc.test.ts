import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cgroupHasContainer,
  hostKind,
  parseStat,
  procUnavailableReason,
  processTree,
  readProcView,
  socketInodes,
  type ProcOptions,
} from '../../src/collect/proc.js';
import { listeningSockets, parseProcNet, type ProcNetRow } from '../../src/collect/proc-net.js';
import { createSafeValueMaker } from '../../src/secret/value.js';
import type { ProcView } from '../../src/snapshot/types.js';

const id = (seed: string): string => createHash('sha256').update(seed).digest('hex');
const ID = id('container-one');
const OTHER = id('container-two');
const CANARY = 'CANARY-raw-9f3e';

const tmp = mkdtempSync(join(tmpdir(), 'mesh-audit-proc-'));
const procRoot = join(tmp, 'proc');
const outside = join(tmp, 'outside');
const hostRoot = join(tmp, 'host');
const opts = (): ProcOptions => ({ procRoot, hostRoot, safe: createSafeValueMaker() });

/** A `/proc/<pid>/stat` line: starttime is field 22. */
const statLine = (pid: number, comm: string, ppid: number, start = 5000): string =>
  `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 ${start} 1000000 200 18446744073709551615\n`;

function fakePid(
  pid: number,
  p: { comm?: string; ppid: number; cgroup?: string; environ?: string; sockets?: number[] },
): string {
  const dir = join(procRoot, String(pid));
  mkdirSync(join(dir, 'fd'), { recursive: true });
  writeFileSync(join(dir, 'stat'), statLine(pid, p.comm ?? 'sh', p.ppid));
  writeFileSync(join(dir, 'cgroup'), p.cgroup ?? '0::/init.scope\n');
  writeFileSync(join(dir, 'environ'), p.environ ?? 'PATH=/bin\0');
  symlinkSync('/dev/null', join(dir, 'fd', '0'));
  (p.sockets ?? []).forEach((inode, i) => symlinkSync(`socket:[${inode}]`, join(dir, 'fd', String(3 + i))));
  return dir;
}

const tcpRow = (n: number, local: string, remote: string, st: string, inode: number): string =>
  `   ${n}: ${local} ${remote} ${st} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0`;
const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const TCP6_HEADER =
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';

// ---- the fake tree -------------------------------------------------------------------------
// 100: the container's main process (cgroup v1, cgroupfs driver with a custom parent)
//   101: child (a comm with spaces and parentheses), 102: grandchild, 103: child that vanished (no fd/)
// 200: an unrelated host process (another container's id), listening on the same (host) table
// 300: a pid dir whose stat is gone (exited mid-walk)
const main = fakePid(100, {
  comm: 'sleep',
  ppid: 1,
  cgroup: `12:memory:/mesh-audit-docker/${ID}\n11:pids:/mesh-audit-docker/${ID}\n0::/\n`,
  environ: `PATH=/bin\0DATABASE_URL=postgresql://gitea:${CANARY}@:20000/gitea\0SECRET_KEY=${CANARY}\0HOME=/root\0SECRET_KEY=second-${CANARY}\0`,
  sockets: [501, 502],
});
fakePid(101, { comm: 'wo) rk (er', ppid: 100, sockets: [503] });
fakePid(102, { ppid: 101, sockets: [504] });
fakePid(103, { ppid: 100 });
rmSync(join(procRoot, '103', 'fd'), { recursive: true });
fakePid(200, { ppid: 1, cgroup: `12:memory:/docker/${OTHER}\n`, sockets: [600] });
mkdirSync(join(procRoot, '300'));
mkdirSync(join(main, 'net'));
writeFileSync(
  join(main, 'net', 'tcp'),
  [
    TCP_HEADER,
    tcpRow(0, '0100007F:752F', '00000000:0000', '0A', 501), // 127.0.0.1:29999, main
    tcpRow(1, '00000000:0BB7', '00000000:0000', '0A', 503), // 0.0.0.0:2999, child
    tcpRow(2, '00000000:07E8', '00000000:0000', '0A', 600), // 0.0.0.0:2024, NOT the container's
    tcpRow(3, '0100007F:752F', '0100007F:9D8A', '01', 777), // established
    '',
  ].join('\n'),
);
writeFileSync(
  join(main, 'net', 'tcp6'),
  [
    TCP6_HEADER,
    tcpRow(0, '00000000000000000000000000000000:1F90', '00000000000000000000000000000000:0000', '0A', 504),
    '',
  ].join('\n'),
);
writeFileSync(
  join(main, 'net', 'udp'),
  [TCP_HEADER, tcpRow(0, '00000000:14E9', '00000000:0000', '07', 502), ''].join('\n'),
);
// no udp6: a kernel without IPv6 has none

// The container's root, with the traps.
const root = join(main, 'root');
mkdirSync(join(root, 'etc', 'app'), { recursive: true });
mkdirSync(join(root, 'run'), { recursive: true });
mkdirSync(outside, { recursive: true });
const APP_ENV = 'APP_ENV=fixture\nAPP_TOKEN=fake-token-0000\n';
writeFileSync(join(root, 'etc', 'app', 'app.env'), APP_ENV);
// Outside the container: a FIFO (opening it for reading would hang) and a file that must never be hashed.
execFileSync('mkfifo', [join(outside, 'pipe.env')]);
writeFileSync(join(outside, 'host.env'), `HOST_SECRET=${CANARY}\n`);
symlinkSync(outside, join(root, 'etc', 'evil')); // /etc/evil -> <tmp>/outside (a planted absolute link)
symlinkSync(join(outside, 'host.env'), join(root, 'etc', 'last.env')); // symlink as the last component
execFileSync('mkfifo', [join(root, 'run', 'pipe.env')]); // a FIFO inside the container itself

// The host as mounted at --root: the app.env source is a file, /srv/data a directory; the rest are missing there.
mkdirSync(join(hostRoot, 'srv', 'app'), { recursive: true });
mkdirSync(join(hostRoot, 'srv', 'data'), { recursive: true });
writeFileSync(join(hostRoot, 'srv', 'app', 'app.env'), 'APP_TOKEN=fake-token-1111-rotated\n');
symlinkSync('/etc', join(hostRoot, 'srv', 'etc'));

const container = (over: Partial<Parameters<typeof readProcView>[0]> = {}): Parameters<typeof readProcView>[0] => ({
  id: ID,
  running: true,
  pid: 100,
  mounts: [
    { type: 'bind', source: '/srv/app/app.env', destination: '/etc/app/app.env' },
    { type: 'bind', source: '/srv/evil/pipe.env', destination: '/etc/evil/pipe.env' },
    { type: 'bind', source: '/srv/evil/host.env', destination: '/etc/evil/host.env' },
    { type: 'bind', source: '/srv/last.env', destination: '/etc/last.env' },
    { type: 'bind', source: '/srv/pipe.env', destination: '/run/pipe.env' },
    { type: 'bind', source: '/srv/missing.env', destination: '/etc/missing.env' },
    { type: 'bind', source: '/srv/data', destination: '/data' }, // a directory bind on the host: skipped
    { type: 'bind', source: '/srv/other', destination: '/other' }, // not in the set: skipped
    { type: 'volume', source: '/var/lib/docker/volumes/x/_data', destination: '/etc/app/app.env' },
  ],
  ...over,
});
const FILE_SOURCES = new Set([
  '/srv/app/app.env',
  '/srv/evil/pipe.env',
  '/srv/evil/host.env',
  '/srv/last.env',
  '/srv/pipe.env',
  '/srv/missing.env',
  '/srv/data',
  '/var/lib/docker/volumes/x/_data',
]);

/** Fails instead of hanging when something opens a FIFO it should not have. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms (followed a link to a FIFO?)`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function available(view: ProcView): Extract<ProcView, { available: true }> {
  if (!view.available) throw new Error(`unavailable: ${view.reason}`);
  return view;
}

let view: ProcView;

test.before(async () => {
  view = await within(5000, readProcView(container(), FILE_SOURCES, opts()));
});

test.after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

test('fake proc: env from environ, SafeValues only, first duplicate wins', () => {
  const v = available(view);
  assert.equal(Object.keys(v.env).sort(), ['DATABASE_URL', 'HOME', 'PATH', 'SECRET_KEY']);
  assert.is(v.env['DATABASE_URL']?.shape, 'postgresql://…@:20000/…');
  assert.is(v.env['SECRET_KEY']?.shape, `<${CANARY.length} chars>`);
  assert.ok(v.env['PATH']?.digest.startsWith('hmac-sha256:'));
  assert.not.ok(JSON.stringify(view).includes(CANARY), 'no raw env value in the view');
  assert.not.ok(JSON.stringify(view).includes('fake-token'), 'no file content in the view');
});

test("fake proc: listening = the process tree's sockets only (not the host's 2024, not established)", () => {
  assert.equal(available(view).listening, [
    { protocol: 'tcp', address: '0.0.0.0', port: 2999 },
    { protocol: 'tcp', address: '127.0.0.1', port: 29999 },
    { protocol: 'tcp6', address: '::', port: 8080 },
    { protocol: 'udp', address: '0.0.0.0', port: 5353 },
  ]);
});

test('fake proc: a single-file bind is hashed with its inode', () => {
  const file = available(view).boundFiles.find((f) => f.destination === '/etc/app/app.env');
  const path = join(root, 'etc', 'app', 'app.env');
  assert.equal(file, {
    destination: '/etc/app/app.env',
    source: '/srv/app/app.env',
    inode: statSync(path).ino,
    sha256: 'sha256:' + createHash('sha256').update(readFileSync(path)).digest('hex'),
  });
});

test('fake proc: a planted symlink component is refused, nothing outside is opened', () => {
  const files = available(view).boundFiles;
  for (const destination of ['/etc/evil/pipe.env', '/etc/evil/host.env', '/etc/last.env']) {
    const file = files.find((f) => f.destination === destination);
    assert.equal(
      file && { inode: file.inode, sha256: file.sha256, error: file.error },
      { inode: null, sha256: null, error: 'symlink in container path' },
      destination,
    );
  }
});

test('fake proc: a FIFO in the container is not opened; missing and non-file binds are reported', () => {
  const files = available(view).boundFiles;
  assert.is(files.find((f) => f.destination === '/run/pipe.env')?.error, 'not a regular file');
  assert.is(files.find((f) => f.destination === '/etc/missing.env')?.error, 'missing in the container');
  assert.equal(
    files.map((f) => f.destination),
    [
      '/etc/app/app.env',
      '/etc/evil/host.env',
      '/etc/evil/pipe.env',
      '/etc/last.env',
      '/etc/missing.env',
      '/run/pipe.env',
    ],
    'only bind mounts whose source is a known file, sorted by destination',
  );
});

test('hostKind: through the host root, links never followed there', async () => {
  assert.is(await hostKind(hostRoot, '/srv/app/app.env'), 'file');
  assert.is(await hostKind(hostRoot + '/', '/srv/data'), 'other');
  assert.is(await hostKind(hostRoot, '/srv/missing.env'), 'unknown');
  assert.is(await hostKind(hostRoot, '/srv/etc/passwd'), 'unknown', 'a symlink component under --root');
  assert.is(await hostKind(hostRoot, '/srv/../etc/passwd'), 'unknown');
  assert.is(await hostKind('/', tmp), 'other');
  assert.is(await hostKind(hostRoot, '/'), 'other', "the host's / itself (docker run -v /:/host:ro) is a folder");
  assert.is(await hostKind('/', '/'), 'other');
  assert.is(await hostKind('/', join(hostRoot, 'srv', 'app', 'app.env')), 'file');
});

test('a stopped container is not read', async () => {
  assert.equal(await readProcView(container({ running: false, pid: 0 }), FILE_SOURCES, opts()), {
    available: false,
    reason: 'container is not running',
  });
  assert.equal(await readProcView(container({ pid: 0 }), FILE_SOURCES, opts()), {
    available: false,
    reason: 'container is not running',
  });
});

test('a pid whose cgroup does not name the container is not read', async () => {
  assert.equal(await readProcView(container({ pid: 200 }), FILE_SOURCES, opts()), {
    available: false,
    reason: "pid 200 is not this container's process here (another pid namespace?)",
  });
  const gone = await readProcView(container({ pid: 4242 }), FILE_SOURCES, opts());
  assert.is(gone.available, false);
  assert.ok(!gone.available && gone.reason.startsWith('pid 4242 is not running here'));
});

test('unreadable environ or net: unavailable with the reason, never a throw', async () => {
  const dir = fakePid(400, { ppid: 1, cgroup: `0::/system.slice/docker-${ID}.scope\n` });
  rmSync(join(dir, 'environ'));
  mkdirSync(join(dir, 'environ')); // EISDIR
  const a = await readProcView(container({ pid: 400, mounts: [] }), new Set(), opts());
  assert.equal(a, { available: false, reason: `cannot read ${procRoot}/400/environ (EISDIR)` });

  const dir2 = fakePid(401, {
    ppid: 1,
    cgroup: `0::/system.slice/docker-${ID}.scope\n`,
    environ: `K=${CANARY}\0`,
    sockets: [777],
  });
  mkdirSync(join(dir2, 'net', 'tcp'), { recursive: true }); // EISDIR
  const b = await readProcView(container({ pid: 401, mounts: [] }), new Set(), opts());
  assert.equal(b, { available: false, reason: `cannot read ${procRoot}/401/net/tcp (EISDIR)` });
  assert.not.ok(JSON.stringify(b).includes(CANARY));

  const c = await readProcView(container({ id: ID.slice(0, 12), mounts: [] }), new Set(), opts());
  assert.is(c.available, false, 'a short id is never matched');
});

test('no socket open in the tree: the socket tables are not read (nothing can listen)', async () => {
  const dir = fakePid(410, { ppid: 1, cgroup: `0::/system.slice/docker-${ID}.scope\n` });
  mkdirSync(join(dir, 'net', 'tcp'), { recursive: true }); // would be EISDIR if it were read
  const view = await readProcView(container({ pid: 410, mounts: [] }), new Set(), opts());
  assert.ok(view.available, JSON.stringify(view));
  assert.equal(view.listening, []);
});

test('containers in one network namespace: its socket tables are read once per scan', async () => {
  const rows = `${TCP_HEADER}\n${tcpRow(0, '00000000:0BB8', '00000000:0000', '0A', 811)}\n${tcpRow(1, '00000000:0BB9', '00000000:0000', '0A', 812)}\n`;
  const cache = new Map<string, Promise<ProcNetRow[]>>();
  const views: ProcView[] = [];
  for (const [pid, inode] of [
    [420, 811],
    [421, 812],
  ] as const) {
    const dir = fakePid(pid, { ppid: 1, cgroup: `0::/system.slice/docker-${ID}.scope\n`, sockets: [inode] });
    mkdirSync(join(dir, 'net'), { recursive: true });
    mkdirSync(join(dir, 'ns'), { recursive: true });
    symlinkSync('net:[4026531840]', join(dir, 'ns', 'net'));
    // Only the first process's table holds the rows: the second must be answered from the first read.
    writeFileSync(join(dir, 'net', 'tcp'), pid === 420 ? rows : `${TCP_HEADER}\n`);
    // A kernel always has the IPv4 udp table (only the IPv6 ones may be missing): here, empty.
    writeFileSync(join(dir, 'net', 'udp'), `${TCP_HEADER}\n`);
    views.push(await readProcView(container({ pid, mounts: [] }), new Set(), { ...opts(), netTables: cache }));
  }
  assert.equal([...cache.keys()], ['net:[4026531840]']);
  assert.equal(
    views.map((v) => (v.available ? v.listening.map((l) => l.port) : v.reason)),
    [[3000], [3001]],
  );
});

test('cgroupHasContainer: v1/v2, docker and custom parents; whole path components only', () => {
  assert.ok(cgroupHasContainer(`12:memory:/docker/${ID}\n`, ID));
  assert.ok(cgroupHasContainer(`4:cpu:/mesh-audit-docker/${ID}\n`, ID));
  assert.ok(cgroupHasContainer(`0::/system.slice/docker-${ID}.scope\n`, ID));
  assert.ok(cgroupHasContainer(`0::/mesh/${ID}\n`, ID));
  assert.ok(cgroupHasContainer(`0::/system.slice/docker-${ID}.scope/init.scope\n`, ID));
  assert.not.ok(cgroupHasContainer(`0::/docker/${OTHER}\n`, ID));
  assert.not.ok(cgroupHasContainer(`0::/docker/${ID}x\n`, ID));
  assert.not.ok(cgroupHasContainer(`0::/docker/${ID.slice(0, 12)}\n`, ID.slice(0, 12)));
  assert.not.ok(cgroupHasContainer('0::/\n', ID));
});

test('parseStat: comm with spaces and parentheses', () => {
  assert.equal(parseStat(statLine(7, 'a) b (c', 3, 123)), { ppid: 3, startTime: '123', threads: 1 });
  assert.is(parseStat('garbage'), null);
});

test('procUnavailableReason: remote engine, foreign pid namespace, host namespace', async () => {
  const remote = await procUnavailableReason({ endpointIsLocalSocket: false, procRoot });
  assert.is(remote, 'the Docker engine is not local (its endpoint is not a unix socket)');
  mkdirSync(join(procRoot, 'self', 'ns'), { recursive: true });
  symlinkSync('pid:[4026532181]', join(procRoot, 'self', 'ns', 'pid'));
  const foreign = await procUnavailableReason({ endpointIsLocalSocket: true, procRoot });
  if (process.geteuid?.() === 0) {
    assert.is(
      foreign,
      "our pid namespace (pid:[4026532181]) is not the host's: the engine's pids do not name processes here",
    );
  } else {
    assert.is(foreign, 'not running as root');
  }
  const here = await procUnavailableReason({ endpointIsLocalSocket: true });
  const hostNs = (() => {
    try {
      return execFileSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).trim() === 'pid:[4026531836]';
    } catch {
      return false;
    }
  })();
  if (process.geteuid?.() === 0 && hostNs) assert.is(here, null);
  else assert.type(here, 'string');
});

test('real /proc: a child listening on loopback is found through its fds', async () => {
  const child = spawn(
    process.execPath,
    [
      '-e',
      "const s = require('net').createServer(); s.listen(0, '127.0.0.1', () => process.stdout.write(s.address().port + '\\n')); setTimeout(() => process.exit(0), 20000);",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const port = await within(
      5000,
      new Promise<number>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim())));
        child.once('error', reject);
      }),
    );
    assert.ok(port > 0, `port ${port}`);
    const tree = await processTree(process.pid);
    assert.ok(tree.includes(child.pid!), 'the child is in our process tree');
    const rows = parseProcNet(readFileSync(`/proc/${process.pid}/net/tcp`, 'utf8'), 'tcp', endianness());
    const found = listeningSockets(rows, await socketInodes(tree));
    assert.ok(
      found.some((s) => s.protocol === 'tcp' && s.address === '127.0.0.1' && s.port === port),
      `127.0.0.1:${port} in ${JSON.stringify(found)}`,
    );
    const ownOnly = listeningSockets(rows, await socketInodes([process.pid]));
    assert.not.ok(
      ownOnly.some((s) => s.port === port),
      'not among the sockets of this process alone',
    );
  } finally {
    child.kill();
  }
});

test.run();
