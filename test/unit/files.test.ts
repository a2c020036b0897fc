import { test } from 'uvu';
import { within } from '../support/within.js';
import { isRoot, requireRoot, rootTest } from '../support/root.js';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectFiles, locate, type FileCollectOptions, type ParentVerdicts } from '../../src/collect/files.js';
import { composeFacts } from '../../src/collect/compose-file.js';
import { COMPOSE_BATCH, COMPOSE_IN_WORKER_FILES, ComposePool } from '../../src/collect/compose-pool.js';
import { readRegularFile } from '../../src/collect/read-file.js';
import { HashPool, HASH_IN_WORKER_BYTES } from '../../src/collect/hash-pool.js';
import { createSafeValueMaker } from '../../src/secret/value.js';
import type { FileRecord } from '../../src/snapshot/types.js';

const safe = createSafeValueMaker(Buffer.alloc(32, 7));
const CANARY = 'CANARY-files-9f3b1c';
const sha = (content: string | Buffer): string => 'sha256:' + createHash('sha256').update(content).digest('hex');

/** Fails instead of hanging when something opens a FIFO it must not. */

const collect = (root: string, options: Partial<FileCollectOptions>) =>
  within(collectFiles({ root, paths: [], envPaths: [], managedRoots: [], safe, ...options }));

const byPath = (files: FileRecord[]): Map<string, FileRecord> => new Map(files.map((f) => [f.path, f]));
const get = (files: FileRecord[], path: string): FileRecord => {
  const found = files.find((f) => f.path === path);
  assert.ok(found, `no record for ${path}; have ${files.map((f) => f.path).join(', ')}`);
  return found;
};

// One host tree for most tests: ROOT plays the host's `/` (as with --root /host), OUTSIDE is beyond it.
const ROOT = mkdtempSync(join(tmpdir(), 'mesh-files-root-'));
const OUTSIDE = mkdtempSync(join(tmpdir(), 'mesh-files-outside-'));
const ENV_TEXT = `# app settings\r\nexport DB_URL="postgresql://app:${CANARY}@:20000/app"\r\nPLAIN='single quoted'\r\nTOKEN=${CANARY}\r\n\r\nNAME=web # trailing comment\r\n`;
const CONFIG_TEXT = 'listen: 3000\n';
let server: Server | undefined;

test.before(async () => {
  mkdirSync(join(ROOT, 'etc/mesh/sub/nested'), { recursive: true });
  mkdirSync(join(ROOT, 'srv/conf'), { recursive: true });
  mkdirSync(join(OUTSIDE, 'dir'), { recursive: true });
  execFileSync('mkfifo', [join(OUTSIDE, 'fifo')]);
  writeFileSync(join(OUTSIDE, 'dir/secret.txt'), `outside ${CANARY}\n`);
  writeFileSync(join(OUTSIDE, 'dir/app.env'), `SECRET=${CANARY}\n`);

  writeFileSync(join(ROOT, 'etc/mesh/app.env'), ENV_TEXT);
  writeFileSync(join(ROOT, 'etc/mesh/config.yml'), CONFIG_TEXT);
  chmodSync(join(ROOT, 'etc/mesh/config.yml'), 0o640);
  utimesSync(join(ROOT, 'etc/mesh/config.yml'), 1_700_000_000.25, 1_700_000_000.25);
  writeFileSync(join(ROOT, 'etc/mesh/setuid.bin'), 'x');
  chmodSync(join(ROOT, 'etc/mesh/setuid.bin'), 0o4755);
  writeFileSync(join(ROOT, 'etc/mesh/zero.conf'), 'zero\n');
  chmodSync(join(ROOT, 'etc/mesh/zero.conf'), 0o000);
  writeFileSync(join(ROOT, 'etc/mesh/sub/nested/file.txt'), 'nested\n');
  symlinkSync(join(OUTSIDE, 'fifo'), join(ROOT, 'etc/mesh/out-link.env'));
  symlinkSync(join(OUTSIDE, 'dir'), join(ROOT, 'etc/mesh/linkdir'));
  execFileSync('mkfifo', [join(ROOT, 'etc/mesh/pipe')]);
  // A symlinked parent folder: /etc/other -> OUTSIDE/dir
  symlinkSync(join(OUTSIDE, 'dir'), join(ROOT, 'etc/other'));
  writeFileSync(join(ROOT, 'srv/conf/vars'), `A=1\nB="two ${CANARY}"\n`);
  server = createServer();
  await new Promise<void>((resolve) => server!.listen(join(ROOT, 'etc/mesh/sock'), resolve));
});

test.after(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  rmSync(ROOT, { recursive: true, force: true });
  rmSync(OUTSIDE, { recursive: true, force: true });
});

test('a managed root is walked: every entry recorded once, sorted, by kind', async () => {
  const { files, problems } = await collect(ROOT, { managedRoots: ['/etc/mesh'], paths: ['/etc/mesh/config.yml'] });
  assert.equal(problems, []);
  assert.equal(
    files.map((f) => `${f.path} ${f.kind}`),
    [
      '/etc/mesh directory',
      '/etc/mesh/app.env file',
      '/etc/mesh/config.yml file',
      '/etc/mesh/linkdir symlink',
      '/etc/mesh/out-link.env symlink',
      '/etc/mesh/pipe fifo',
      '/etc/mesh/setuid.bin file',
      '/etc/mesh/sock socket',
      '/etc/mesh/sub directory',
      '/etc/mesh/sub/nested directory',
      '/etc/mesh/sub/nested/file.txt file',
      '/etc/mesh/zero.conf file',
    ],
  );
});

test('a regular file: size, mode, owner, mtime, inode and a streamed sha256', async () => {
  const { files } = await collect(ROOT, { paths: ['/etc/mesh/config.yml'] });
  const st = lstatSync(join(ROOT, 'etc/mesh/config.yml'));
  assert.equal(files, [
    {
      path: '/etc/mesh/config.yml',
      kind: 'file',
      size: CONFIG_TEXT.length,
      mode: '0640',
      uid: st.uid,
      gid: st.gid,
      mtime: '2023-11-14T22:13:20.250Z',
      inode: st.ino,
      sha256: sha(CONFIG_TEXT),
    },
  ]);
});

test('mode keeps setuid bits; a mode-000 file is recorded with its mode', async () => {
  const { files } = await collect(ROOT, { paths: ['/etc/mesh/setuid.bin', '/etc/mesh/zero.conf'] });
  assert.is(get(files, '/etc/mesh/setuid.bin').mode, '4755');
  const zero = get(files, '/etc/mesh/zero.conf');
  assert.is(zero.mode, '0000');
  // As root the file can still be read; otherwise it is permission denied.
  if (isRoot) assert.is(zero.sha256, sha('zero\n'));
  else assert.is(zero.error, 'permission denied');
});

test('an env file (CRLF, export, quotes, comments) becomes SafeValues with lines; no raw value leaves', async () => {
  const { files } = await collect(ROOT, { managedRoots: ['/etc/mesh'] });
  const env = get(files, '/etc/mesh/app.env');
  assert.is(env.sha256, sha(ENV_TEXT));
  assert.equal(env.env, [
    { key: 'DB_URL', value: safe(`postgresql://app:${CANARY}@:20000/app`), line: 2 },
    { key: 'PLAIN', value: safe('single quoted'), line: 3 },
    { key: 'TOKEN', value: safe(CANARY), line: 4 },
    { key: 'NAME', value: safe('web'), line: 6 },
  ]);
  assert.is(env.env![0]!.value!.shape, 'postgresql://…@:20000/…');
  assert.not.ok(JSON.stringify(files).includes(CANARY), 'the canary leaked');
});

test('envPaths are parsed whatever their name, and recorded', async () => {
  const { files } = await collect(ROOT, { envPaths: ['/srv/conf/vars'] });
  assert.equal(
    files.map((f) => f.path),
    ['/srv/conf/vars'],
  );
  assert.equal(
    files[0]!.env!.map((e) => [e.key, e.line]),
    [
      ['A', 1],
      ['B', 2],
    ],
  );
  assert.equal(files[0]!.env![1]!.value, safe(`two ${CANARY}`));
  assert.not.ok(JSON.stringify(files).includes(CANARY));
  // Without being named, a file not ending in .env is not parsed.
  const plain = await collect(ROOT, { paths: ['/srv/conf/vars'] });
  assert.is(plain.files[0]!.env, undefined);
  assert.ok(plain.files[0]!.sha256);
});

test('a symlink to a FIFO outside the root is recorded, never followed or opened', async () => {
  const { files } = await collect(ROOT, {
    paths: ['/etc/mesh/out-link.env'],
    envPaths: ['/etc/mesh/out-link.env'],
    managedRoots: ['/etc/mesh/out-link.env'],
  });
  assert.equal(files.length, 1);
  const link = files[0]!;
  assert.is(link.kind, 'symlink');
  assert.is(link.linkTarget, join(OUTSIDE, 'fifo'));
  assert.is(link.sha256, undefined);
  assert.is(link.env, undefined);
  assert.is(link.error, undefined);
});

test('a symlinked folder in a managed root is recorded as a symlink and not descended', async () => {
  const { files } = await collect(ROOT, { managedRoots: ['/etc/mesh'] });
  const link = get(files, '/etc/mesh/linkdir');
  assert.is(link.kind, 'symlink');
  assert.is(link.linkTarget, join(OUTSIDE, 'dir'));
  assert.equal(
    files.filter((f) => f.path.startsWith('/etc/mesh/linkdir/')),
    [],
  );
  assert.not.ok(JSON.stringify(files).includes(CANARY));
});

test('a managed root that is itself a symlinked folder is not descended', async () => {
  const { files } = await collect(ROOT, { managedRoots: ['/etc/other'] });
  assert.equal(
    files.map((f) => [f.path, f.kind]),
    [['/etc/other', 'symlink']],
  );
});

test('a path under a symlinked parent folder is refused: kind unknown, error names the parent', async () => {
  const { files, problems } = await collect(ROOT, {
    paths: ['/etc/other/secret.txt', '/etc/other/app.env'],
    managedRoots: ['/etc/other/x'],
  });
  assert.equal(problems, []);
  for (const path of ['/etc/other/secret.txt', '/etc/other/app.env', '/etc/other/x']) {
    const r = get(files, path);
    assert.is(r.kind, 'unknown', path);
    assert.match(r.error ?? '', /parent folder is a symlink \(\/etc\/other\)/);
    assert.is(r.sha256, undefined);
    assert.is(r.env, undefined);
  }
  assert.not.ok(JSON.stringify(files).includes(CANARY));
});

test('a FIFO and a unix socket are recorded by kind, never opened', async () => {
  // A FIFO opened for reading would block for ever: within() turns that hang into a failure.
  const { files } = await within(
    collect(ROOT, { paths: ['/etc/mesh/pipe', '/etc/mesh/sock'], envPaths: ['/etc/mesh/pipe'] }),
    30_000,
  );
  const pipe = get(files, '/etc/mesh/pipe');
  const sock = get(files, '/etc/mesh/sock');
  assert.is(pipe.kind, 'fifo');
  assert.is(sock.kind, 'socket');
  for (const r of [pipe, sock]) {
    assert.is(r.sha256, undefined);
    assert.is(r.env, undefined);
    assert.type(r.inode, 'number');
    assert.match(r.mode ?? '', /^[0-7]{4}$/);
  }
});

test('a missing path, and one under a file, are kind missing', async () => {
  const { files, problems } = await collect(ROOT, { paths: ['/nope/missing.env', '/etc/mesh/config.yml/below'] });
  assert.equal(problems, []);
  assert.equal(files, [
    { path: '/etc/mesh/config.yml/below', kind: 'missing' },
    { path: '/nope/missing.env', kind: 'missing' },
  ]);
});

test('relative or non-normalized paths are problems, not crashes; the others are still recorded', async () => {
  const { files, problems } = await collect(ROOT, {
    paths: ['etc/mesh/config.yml', '/etc/../etc/mesh/config.yml', '/etc/mesh/', '/etc/mesh/config.yml'],
    managedRoots: ['./etc'],
    envPaths: ['/srv//conf/vars'],
  });
  assert.equal(
    files.map((f) => f.path),
    ['/etc/mesh/config.yml'],
  );
  assert.equal(
    problems.map((p) => [p.source, p.subject]),
    [
      ['files', 'etc/mesh/config.yml'],
      ['files', '/etc/../etc/mesh/config.yml'],
      ['files', '/etc/mesh/'],
      ['files', '/srv//conf/vars'],
      ['files', './etc'],
    ],
  );
  assert.match(problems[0]!.message, /not an absolute, normalized host path/);
});

test('the host root itself can be named: "/" is the root folder', async () => {
  const { files } = await collect(ROOT, { paths: ['/'] });
  assert.equal(
    files.map((f) => [f.path, f.kind]),
    [['/', 'directory']],
  );
});

test('a root that does not exist is one problem, no crash', async () => {
  const { files, problems } = await collect(join(ROOT, 'no-such-root'), { paths: ['/etc/mesh/config.yml'] });
  assert.equal(files, []);
  assert.is(problems.length, 1);
  assert.match(problems[0]!.message, /ENOENT/);
});

test('maxFiles bounds the walk with one problem', async () => {
  const root = mkdtempSync(join(tmpdir(), 'mesh-files-max-'));
  try {
    mkdirSync(join(root, 'm'));
    for (let i = 0; i < 10; i++) writeFileSync(join(root, 'm', `f${i}`), String(i));
    const { files, problems } = await collect(root, { managedRoots: ['/m'], maxFiles: 5 });
    assert.equal(
      files.map((f) => f.path),
      ['/m', '/m/f0', '/m/f1', '/m/f2', '/m/f3'],
    );
    assert.is(problems.length, 1);
    assert.is(problems[0]!.source, 'files');
    assert.match(problems[0]!.message, /more than 5 files/);
    const all = await collect(root, { managedRoots: ['/m'] });
    assert.is(all.files.length, 11);
    assert.equal(all.problems, []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('an env file larger than maxEnvBytes is digested, not parsed, with an error', async () => {
  const root = mkdtempSync(join(tmpdir(), 'mesh-files-big-'));
  try {
    const text = `TOKEN=${CANARY}\n`.repeat(20);
    writeFileSync(join(root, 'big.env'), text);
    const { files } = await collect(root, { paths: ['/big.env'], maxEnvBytes: 100 });
    assert.is(files[0]!.sha256, sha(text));
    assert.is(files[0]!.env, undefined);
    assert.match(files[0]!.error ?? '', /larger than 100 bytes/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

rootTest('permission denied (as nobody): file keeps its lstat data; a folder in the walk gets an error', async () => {
  requireRoot();
  if (typeof process.seteuid !== 'function' || typeof process.setegid !== 'function')
    throw new Error('no seteuid/setegid here: cannot drop to nobody');
  const root = mkdtempSync(join(tmpdir(), 'mesh-files-perm-'));
  try {
    chmodSync(root, 0o755);
    mkdirSync(join(root, 'data/locked'), { recursive: true, mode: 0o755 });
    chmodSync(join(root, 'data'), 0o755);
    writeFileSync(join(root, 'data/secret.env'), `TOKEN=${CANARY}\n`);
    chmodSync(join(root, 'data/secret.env'), 0o000);
    writeFileSync(join(root, 'data/locked/inside.txt'), 'inside');
    chmodSync(join(root, 'data/locked'), 0o000);
    writeFileSync(join(root, 'data/open.txt'), 'open');
    chmodSync(join(root, 'data/open.txt'), 0o644);
    let result: Awaited<ReturnType<typeof collectFiles>>;
    process.setegid(65534);
    process.seteuid(65534);
    try {
      result = await collect(root, { managedRoots: ['/data'], paths: ['/data/locked/inside.txt'] });
    } finally {
      process.seteuid(0);
      process.setegid(0);
    }
    const files = byPath(result.files);
    const secret = files.get('/data/secret.env')!;
    assert.is(secret.kind, 'file');
    assert.is(secret.mode, '0000');
    assert.is(secret.size, `TOKEN=${CANARY}\n`.length);
    assert.is(secret.error, 'permission denied');
    assert.is(secret.sha256, undefined);
    assert.is(secret.env, undefined);
    const locked = files.get('/data/locked')!;
    assert.is(locked.kind, 'directory');
    assert.is(locked.error, 'permission denied');
    assert.equal(files.get('/data/locked/inside.txt'), {
      path: '/data/locked/inside.txt',
      kind: 'unknown',
      error: 'permission denied on parent folder /data/locked',
    });
    assert.is(files.get('/data/open.txt')!.sha256, sha('open'));
    assert.not.ok(JSON.stringify(result.files).includes(CANARY));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('locate walks components without following: symlinked parent blocked, symlink itself found', () => {
  const real = ROOT; // tmpdir has no symlink on Linux; resolveRoot would give the same
  const blocked = locate(real, '/etc/other/secret.txt');
  assert.is(blocked.state, 'blocked');
  const link = locate(real, '/etc/other');
  assert.is(link.state, 'found');
  assert.ok(link.state === 'found' && link.stat.isSymbolicLink());
  assert.equal(locate(real, '/etc/mesh/none'), { state: 'missing' });
  // Parent folders remembered across calls (as one collection does) give the same answers, twice over.
  const parents: ParentVerdicts = new Map();
  for (let i = 0; i < 2; i++) {
    const again = locate(real, '/etc/other/secret.txt', parents);
    assert.equal(again, blocked);
    assert.equal(locate(real, '/etc/other/deeper/x', parents), blocked);
    assert.equal(locate(real, '/etc/mesh/none', parents), { state: 'missing' });
    assert.equal(locate(real, '/etc/mesh/config.yml/under', parents), { state: 'missing' });
    const found = locate(real, '/etc/mesh/config.yml', parents);
    assert.ok(found.state === 'found' && found.stat.isFile());
  }
});

test('many Compose files are read by a worker thread: the same facts as on the main thread, extends followed', async () => {
  const root = mkdtempSync(join(tmpdir(), 'mesh-files-compose-'));
  try {
    mkdirSync(join(root, 'c'));
    const texts = new Map<string, string>();
    // Whole batches of files sent to the worker at once, and a last one smaller.
    for (let i = 0; i < Math.max(COMPOSE_IN_WORKER_FILES, 2 * COMPOSE_BATCH) + 5; i++)
      texts.set(
        `/c/app-${i}.yml`,
        i === 3
          ? 'services: [not, a, mapping]\n'
          : i === 5
            ? 'services:\n  web: {environment: [A=1\n'
            : `version: "2.4"\nservices:\n  app${i}:\n    extends: {service: base, file: common.yml}\n` +
              `    environment:\n      KEY_${i}: "v"\n      SHARED: x\n`,
      );
    texts.set('/c/common.yml', 'services:\n  base:\n    environment: [FROM_BASE=1, OTHER]\n');
    for (const [path, text] of texts) writeFileSync(join(root, path), text);
    const composePaths = [...texts.keys()].filter((p) => p !== '/c/common.yml');
    // The extended file is also named as a plain path (a ledger target): it is still read as a Compose file.
    const { files, problems } = await collect(root, { composePaths, paths: ['/c/common.yml'] });
    assert.equal(problems, []);
    for (const [path, text] of texts)
      assert.equal(get(files, path).compose, composeFacts(Buffer.from(text)), `${path} read as on the main thread`);
    assert.equal(get(files, '/c/common.yml').compose, { services: { base: { environment: ['FROM_BASE', 'OTHER'] } } });
    assert.ok('error' in get(files, '/c/app-3.yml').compose!);
    assert.ok('error' in get(files, '/c/app-5.yml').compose!);
    // A reader the caller started before it had any file (a scan, from the container list): the same records.
    const early = new ComposePool(composePaths.length);
    early.prestart();
    try {
      const again = await collect(root, { composePaths, paths: ['/c/common.yml'], compose: early });
      assert.equal(again, { files, problems });
    } finally {
      await early.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('readRegularFile refuses a descriptor that is not what lstat saw (race safety)', () => {
  // Another inode than expected: replaced between lstat and open.
  const other = lstatSync(join(ROOT, 'etc/mesh/setuid.bin'), { bigint: true });
  const swapped = readRegularFile(join(ROOT, 'etc/mesh/config.yml'), other);
  assert.equal(swapped, { ok: false, error: 'changed while being read: not read' });
  // Reached through a parent that became a symlink after the walk: same inode, but another path.
  const through = join(ROOT, 'etc/other/secret.txt');
  const seen = lstatSync(through, { bigint: true });
  const result = readRegularFile(through, seen);
  if (existsSync('/proc/self/fd')) {
    assert.equal(result, { ok: false, error: 'its path changed while being read (a parent replaced?): not read' });
  }
  // A symlink in the last component is refused by O_NOFOLLOW even if lstat had seen a file.
  const fileStat = lstatSync(join(ROOT, 'etc/mesh/config.yml'), { bigint: true });
  const viaLink = readRegularFile(join(ROOT, 'etc/mesh/out-link.env'), fileStat);
  assert.is(viaLink.ok, false);
  // The normal case.
  const ok = readRegularFile(join(ROOT, 'etc/mesh/config.yml'), fileStat, 1000);
  assert.equal(ok, { ok: true, sha256: sha(CONFIG_TEXT), size: CONFIG_TEXT.length, content: Buffer.from(CONFIG_TEXT) });
});

test('large files are hashed by worker threads: same digests as sha256sum, same checks as on the main thread', async () => {
  const root = mkdtempSync(join(tmpdir(), 'mesh-files-large-'));
  try {
    mkdirSync(join(root, 'm'));
    const blobs = [0, 1, 2].map((i) => {
      const content = Buffer.alloc(HASH_IN_WORKER_BYTES + 1024 * i, i + 1);
      content.write(`blob ${i}`);
      writeFileSync(join(root, 'm', `blob-${i}.bin`), content);
      return content;
    });
    writeFileSync(join(root, 'm', 'small.txt'), 'small\n');
    const { files, problems } = await collect(root, { managedRoots: ['/m'] });
    assert.equal(problems, []);
    blobs.forEach((content, i) => assert.is(get(files, `/m/blob-${i}.bin`).sha256, sha(content), `blob-${i}`));
    assert.is(get(files, '/m/small.txt').sha256, sha('small\n'));
    const expected = execFileSync('sha256sum', [join(root, 'm', 'blob-1.bin')], { encoding: 'utf8' }).split(' ')[0];
    assert.is(get(files, '/m/blob-1.bin').sha256, `sha256:${expected}`);

    // In a worker too, a file swapped after lstat is refused, never read.
    const pool = new HashPool(1);
    try {
      const seen = lstatSync(join(root, 'm', 'blob-0.bin'), { bigint: true });
      const other = lstatSync(join(root, 'm', 'blob-2.bin'), { bigint: true });
      assert.equal(await within(pool.read(join(root, 'm', 'blob-2.bin'), seen)), {
        ok: false,
        error: 'changed while being read: not read',
      });
      assert.equal(await within(pool.read(join(root, 'm', 'blob-2.bin'), other)), {
        ok: true,
        sha256: sha(blobs[2]!),
        size: blobs[2]!.length,
      });
    } finally {
      await pool.close();
    }

    // A worker stopped with a file in hand: the file is read on the main thread, its digest not lost.
    const stopped = new HashPool(1);
    const pending = stopped.read(
      join(root, 'm', 'blob-1.bin'),
      lstatSync(join(root, 'm', 'blob-1.bin'), { bigint: true }),
    );
    await stopped.close();
    assert.equal(await within(pending), { ok: true, sha256: sha(blobs[1]!), size: blobs[1]!.length });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('names that are not UTF-8 are read by their bytes: walked, hashed (in a worker too), linked, named again; a name of no bytes is not checked, never missing', async () => {
  const root = mkdtempSync(join(tmpdir(), 'mesh-files-names-'));
  const raw = (...parts: Array<string | number[]>): Buffer =>
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
  try {
    // A managed root whose own name is not UTF-8, holding a small file, a large one and a symlink, all ill-named.
    mkdirSync(raw(root, '/m', [0xfe]));
    writeFileSync(raw(root, '/m', [0xfe], '/x', [0xff], '.env'), `KEY=${CANARY}\n`);
    const large = Buffer.alloc(HASH_IN_WORKER_BYTES, 3);
    writeFileSync(raw(root, '/m', [0xfe], '/big', [0xc0, 0xaf]), large);
    symlinkSync(raw('/t', [0x80]), raw(root, '/m', [0xfe], '/link', [0xe2, 0x82]));
    const { files, problems } = await collect(root, {
      managedRoots: ['/m\udcfe'],
      // As a ledger or a history would name them: one file that exists under its escaped name, one that does not,
      // and names no file name's bytes spell (a lone high surrogate; escapes that spell 'é', written decoded).
      paths: ['/m\udcfe/x\udcff.env', '/m\udcfe/gone\udcff', '/m\udcfe/x\ud800.env', '/m\udcfe/\udcc3\udca9'],
    });
    assert.equal(
      files.map((f) => `${f.path} ${f.kind}`),
      [
        '/m\udcfe directory',
        '/m\udcfe/big\udcc0\udcaf file',
        '/m\udcfe/gone\udcff missing',
        '/m\udcfe/link\udce2\udc82 symlink',
        '/m\udcfe/x\ud800.env unknown',
        '/m\udcfe/x\udcff.env file',
        '/m\udcfe/\udcc3\udca9 unknown',
      ],
    );
    assert.equal(problems, []);
    assert.is(get(files, '/m\udcfe/x\udcff.env').env?.[0]?.key, 'KEY');
    assert.is(get(files, '/m\udcfe/big\udcc0\udcaf').sha256, sha(large));
    assert.is(get(files, '/m\udcfe/link\udce2\udc82').linkTarget, '/t\udc80');
    for (const path of ['/m\udcfe/x\ud800.env', '/m\udcfe/\udcc3\udca9'])
      assert.is(get(files, path).error, 'its name holds a character that stands for no file name bytes');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
