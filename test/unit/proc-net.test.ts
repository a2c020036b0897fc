import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readHostListeners, readHostListenersKept } from '../../src/collect/host-listeners.js';
import { formatIpv6, listeningSockets, parseProcNet, type ProcNetProtocol } from '../../src/collect/proc-net.js';
import { packageFile } from '../../src/paths.js';

const fixture = (name: ProcNetProtocol): string => readFileSync(packageFile('test', 'fixtures', 'proc', name), 'utf8');
const rows = (name: ProcNetProtocol) => parseProcNet(fixture(name), name);

test('tcp: header skipped, addresses little-endian per word, ports plain hex', () => {
  const tcp = rows('tcp');
  assert.is(tcp.length, 5);
  const byInode = new Map(tcp.map((r) => [r.inode, r]));
  assert.equal(byInode.get(75001), {
    protocol: 'tcp',
    address: '0.0.0.0',
    port: 2999,
    state: 0x0a,
    inode: 75001,
    remoteAddress: '0.0.0.0',
    remotePort: 0,
  });
  assert.equal(byInode.get(75002), {
    protocol: 'tcp',
    address: '127.0.0.1',
    port: 29999,
    state: 0x0a,
    inode: 75002,
    remoteAddress: '0.0.0.0',
    remotePort: 0,
  });
  assert.is(byInode.get(75006)?.state, 0x01);
  assert.is(byInode.get(75006)?.remotePort, 29999);
  assert.is(byInode.get(0)?.state, 0x06, 'TIME_WAIT row parsed with inode 0');
});

test('tcp: only LISTEN rows are listening; ESTABLISHED and TIME_WAIT excluded; sorted', () => {
  assert.equal(listeningSockets(rows('tcp')), [
    { protocol: 'tcp', address: '0.0.0.0', port: 2999 },
    { protocol: 'tcp', address: '127.0.0.1', port: 29999 },
  ]);
});

test('tcp6: ::, ::1 and IPv4-mapped addresses', () => {
  assert.equal(listeningSockets(rows('tcp6')), [
    { protocol: 'tcp6', address: '::', port: 2998 },
    { protocol: 'tcp6', address: '::1', port: 29998 },
    { protocol: 'tcp6', address: '::ffff:127.0.0.1', port: 29997 },
  ]);
});

test('udp: unconnected (07, remote zero) kept, connected one excluded; udp6 too', () => {
  const udp = rows('udp');
  assert.is(udp.length, 2);
  assert.equal(listeningSockets(udp), [{ protocol: 'udp', address: '0.0.0.0', port: 5353 }]);
  assert.equal(listeningSockets(rows('udp6')), [{ protocol: 'udp6', address: '::', port: 5354 }]);
});

test('a udp row in state 07 but with a remote address is not listening', () => {
  const text =
    '  sl  local_address rem_address   st\n 1: 0100007F:14E9 0100007F:0035 07 00000000:00000000 00:00000000 00000000 0 0 42 2 0 0\n';
  const parsed = parseProcNet(text, 'udp');
  assert.is(parsed.length, 1);
  assert.equal(listeningSockets(parsed), []);
});

test('inode filtering keeps only sockets the process holds', () => {
  const all = [...rows('tcp'), ...rows('tcp6'), ...rows('udp'), ...rows('udp6')];
  assert.equal(listeningSockets(all, new Set([75002, 75004, 75008, 75006])), [
    { protocol: 'tcp', address: '127.0.0.1', port: 29999 },
    { protocol: 'tcp6', address: '::1', port: 29998 },
    { protocol: 'udp', address: '0.0.0.0', port: 5353 },
  ]);
  assert.equal(listeningSockets(all, new Set()), []);
  assert.is(listeningSockets(all).length, 7);
});

test('duplicates (SO_REUSEPORT) are merged', () => {
  const line = (n: number, inode: number) =>
    `   ${n}: 00000000:0BB7 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0 100 0 0 10 0`;
  const parsed = parseProcNet(['  sl  local_address', line(0, 10), line(1, 11)].join('\n'), 'tcp');
  assert.is(parsed.length, 2);
  assert.equal(listeningSockets(parsed), [{ protocol: 'tcp', address: '0.0.0.0', port: 2999 }]);
});

test('IPv6 compression (RFC 5952) and a link-local row', () => {
  const bytes = (hex: string) => [...Buffer.from(hex, 'hex')];
  assert.is(formatIpv6(bytes('00000000000000000000000000000000')), '::');
  assert.is(formatIpv6(bytes('00000000000000000000000000000001')), '::1');
  assert.is(formatIpv6(bytes('fe800000000000000000000000000001')), 'fe80::1');
  assert.is(formatIpv6(bytes('20010db8000000010000000000000001')), '2001:db8:0:1::1');
  assert.is(formatIpv6(bytes('20010db8000000000001000000000000')), '2001:db8:0:0:1::');
  assert.is(formatIpv6(bytes('20010db8000000000001000000000001')), '2001:db8::1:0:0:1');
  assert.is(formatIpv6(bytes('20010db8000100020003000400050006')), '2001:db8:1:2:3:4:5:6');
  assert.is(formatIpv6(bytes('20010db800000001000100010001abcd')), '2001:db8:0:1:1:1:1:abcd');
  // fe80::1 as the kernel prints it on a little-endian host: each 32-bit word byte-reversed.
  const text =
    '  sl\n   0: 000080FE000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 0:0 0:0 0 0 0 7 1 0';
  assert.equal(listeningSockets(parseProcNet(text, 'tcp6')), [{ protocol: 'tcp6', address: 'fe80::1', port: 80 }]);
  // The same file from a big-endian host.
  const be =
    '  sl\n   0: FE800000000000000000000000000001:0050 00000000000000000000000000000000:0000 0A 0:0 0:0 0 0 0 7 1 0';
  assert.is(parseProcNet(be, 'tcp6', 'BE')[0]?.address, 'fe80::1');
});

test('malformed lines are skipped, not thrown', () => {
  const text = ['garbage', '   0: ZZZ:0BB7 00000000:0000 0A 0 0 0 0 0 1', '   1: 00000000:0BB7', ''].join('\n');
  assert.equal(parseProcNet(text, 'tcp'), []);
  assert.equal(parseProcNet('', 'udp6'), []);
});

test("the host's sockets: init's namespace link closed to the scan (a container without CAP_SYS_PTRACE), its tables read", () => {
  const root = mkdtempSync(join(tmpdir(), 'ma-hostproc-'));
  try {
    // pid 1 with its socket tables and no ns/ link (unreadable there); pid 40 holds the socket.
    mkdirSync(join(root, '1', 'net'), { recursive: true });
    for (const table of ['tcp', 'udp'] as const) writeFileSync(join(root, '1', 'net', table), fixture(table));
    mkdirSync(join(root, '40', 'fd'), { recursive: true });
    writeFileSync(join(root, '40', 'comm'), 'httpd\n');
    symlinkSync('socket:[75001]', join(root, '40', 'fd', '3'));
    const view = readHostListeners({ procRoot: root });
    assert.ok(view.available, JSON.stringify(view));
    assert.is(view.netns, 'unknown');
    const wide = view.sockets.find((s) => s.address === '0.0.0.0' && s.port === 2999);
    assert.is(wide?.holder?.pid, 40);
    assert.is(wide?.holder?.name, 'httpd');
    // Neither the link nor the tables: not read, and the reason names what was closed.
    rmSync(join(root, '1', 'net'), { recursive: true });
    const none = readHostListeners({ procRoot: root });
    assert.not.ok(none.available);
    if (!none.available) assert.match(none.reason, `${root}/1/ns/net`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("serve's listeners: taken again while the listening rows and their holders are the same, walked again when not", () => {
  const root = mkdtempSync(join(tmpdir(), 'mesh-proc-kept-'));
  try {
    mkdirSync(join(root, '1', 'net'), { recursive: true });
    const tcp = fixture('tcp');
    writeFileSync(join(root, '1', 'net', 'tcp'), tcp);
    writeFileSync(join(root, '1', 'net', 'udp'), fixture('udp').split('\n')[0]! + '\n');
    const proc = (pid: number, name: string, startTime: string, inodes: number[]) => {
      rmSync(join(root, String(pid)), { recursive: true, force: true });
      mkdirSync(join(root, String(pid), 'fd'), { recursive: true });
      writeFileSync(join(root, String(pid), 'comm'), `${name}\n`);
      writeFileSync(join(root, String(pid), 'stat'), `${pid} (${name}) S 1 ${'0 '.repeat(17)}${startTime} 0\n`);
      inodes.forEach((inode, fd) => symlinkSync(`socket:[${inode}]`, join(root, String(pid), 'fd', String(fd + 3))));
    };
    proc(40, 'httpd', '5000', [75001, 75002]);
    const first = readHostListenersKept({ procRoot: root });
    assert.not.ok(first.reused);
    assert.ok(first.kept, 'every socket has a holder: kept');
    const again = readHostListenersKept({ procRoot: root, kept: first.kept });
    assert.ok(again.reused, 'nothing changed: taken again');
    assert.is(again.view, first.view);
    // The holder restarted (same pid, another start time): walked again.
    proc(40, 'httpd', '6000', [75001, 75002]);
    const restarted = readHostListenersKept({ procRoot: root, kept: again.kept });
    assert.not.ok(restarted.reused, 'another process under the same pid');
    // The socket handed to another process, the rows the same: the new holder found.
    proc(40, 'httpd', '6000', [75002]);
    proc(41, 'nginx', '7000', [75001]);
    const handed = readHostListenersKept({ procRoot: root, kept: restarted.kept });
    assert.not.ok(handed.reused, 'a holder no longer holds its socket');
    const wide = (v: typeof handed.view) => (v.available ? v.sockets.find((s) => s.port === 2999) : undefined);
    assert.is(wide(handed.view)?.holder?.name, 'nginx');
    // A program exec'd under the same process: what it is, read again.
    writeFileSync(join(root, '41', 'comm'), 'caddy\n');
    const execd = readHostListenersKept({ procRoot: root, kept: handed.kept });
    assert.not.ok(execd.reused);
    assert.is(wide(execd.view)?.holder?.name, 'caddy');
    // A listening row more (the poll's tables changed): walked again, and a socket with no holder is not kept.
    const line = tcp.split('\n').find((l) => l.includes(':0BB7'))!;
    writeFileSync(
      join(root, '1', 'net', 'tcp'),
      `${tcp.trimEnd()}\n${line.replace(':0BB7', ':0BB8').replace('75001', '75099')}\n`,
    );
    const more = readHostListenersKept({ procRoot: root, kept: execd.kept });
    assert.not.ok(more.reused, 'the listening rows changed');
    assert.ok(more.view.available && more.view.sockets.some((s) => s.port === 3000 && s.holder === null));
    assert.is(more.kept, undefined, 'a socket with no known holder: nothing kept');
    const outside = readHostListenersKept({ procRoot: root, kept: more.kept, outOfScope: (s) => s.port === 3000 });
    assert.ok(outside.kept, 'its holder is of no rule (out of scope): kept');
    assert.ok(readHostListenersKept({ procRoot: root, kept: outside.kept }).reused);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
