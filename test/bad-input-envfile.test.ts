import { test } from 'uvu';
import { within } from './support/within.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnvFile } from '../src/collect/envfile.js';
import { collectFiles, DEFAULT_MAX_ENV_BYTES } from '../src/collect/files.js';
import { createSafeValueMaker, type SafeValue } from '../src/secret/value.js';
import type { FileRecord, Snapshot } from '../src/snapshot/types.js';
import { HISTORY_INDEX_FILE } from '../src/snapshot/history-index.js';
import { runCli, tempDir } from './support/cli.js';

/*
 * Bad env files, through the file collector and through a whole scan: binary content, one over the
 * size bound, CRLF, no final newline, and one built to make a quoted value rescan the file. Each gives
 * entries or a recorded error — never a crash, a hang or a lost good entry.
 */

const safe = createSafeValueMaker(Buffer.alloc(32, 9));
const CANARY = 'CANARY-badenv-3d91aa';
const sha = (content: Buffer | string): string => 'sha256:' + createHash('sha256').update(content).digest('hex');

/** Deterministic pseudo-random bytes (a 32-bit LCG): every run tests the same "random" file. */
function noise(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

// The files, by name. Each holds good entries around the bad part, to show those are not lost.
const junk = noise(64 * 1024, 0x5eed);
assert.ok(junk.includes(0), 'the noise holds NUL bytes');
const BINARY = Buffer.concat([
  Buffer.from(`FIRST=${CANARY}\n`),
  junk,
  Buffer.from(`\nMIDDLE=ok\n`),
  noise(4096, 7),
  Buffer.from(`\nLAST=${CANARY}\n`),
]);
const linesBefore = (buf: Buffer, marker: string): number =>
  buf.subarray(0, buf.indexOf(marker)).filter((b) => b === 0x0a).length + 1;
const HUGE = 'KEY=' + 'x'.repeat(DEFAULT_MAX_ENV_BYTES) + '\n';
const CRLF = `# comment\r\nA=1\r\nexport B="two words"\r\nC='${CANARY}'\r\nMULTI="x\r\ny"\r\nD=4\r\n`;
const NO_FINAL_NEWLINE = `A=1\nB=${CANARY}`;
const NO_FINAL_NEWLINE_QUOTED = `A=1\nB="unterminated ${CANARY}`;
/** Just under the bound: an unterminated quote, then 900k empty lines, then a good entry. */
const RESCAN = 'OPEN="' + '\n'.repeat(900_000) + 'AFTER=1\n';

const FILES: Record<string, string | Buffer> = {
  'binary.env': BINARY,
  'huge.env': HUGE,
  'crlf.env': CRLF,
  'nofinal.env': NO_FINAL_NEWLINE,
  'nofinal-quoted.env': NO_FINAL_NEWLINE_QUOTED,
  'rescan.env': RESCAN,
};

const dir = realpathSync(tempDir('mesh-bad-env-'));
const host = join(dir, 'etc', 'mesh');
mkdirSync(host, { recursive: true });
for (const [name, content] of Object.entries(FILES)) writeFileSync(join(host, name), content);
const pathOf = (name: string): string => join(host, name);

const env = (record: FileRecord | undefined) => (record?.env ?? []).map((e) => [e.key, e.line]);

/** Checks the records; `view` is what of a value to compare, `want` the same for a raw string. */
function checkRecords(files: FileRecord[], view: (v: SafeValue) => unknown, want: (raw: string) => unknown): void {
  const values = (r: FileRecord) => (r.env ?? []).map((e) => (e.value ? view(e.value) : null));
  const get = (name: string): FileRecord => {
    const found = files.find((f) => f.path === pathOf(name));
    assert.ok(found, `no record for ${name}`);
    return found;
  };
  for (const [name, content] of Object.entries(FILES)) {
    const r = get(name);
    assert.is(r.kind, 'file', name);
    assert.is(r.sha256, sha(content), `${name} is digested`);
  }

  const binary = get('binary.env');
  assert.is(binary.error, undefined);
  const keys = env(binary);
  assert.equal(keys[0], ['FIRST', 1]);
  assert.ok(
    keys.some(([k, l]) => k === 'MIDDLE' && l === linesBefore(BINARY, 'MIDDLE=')),
    JSON.stringify(keys),
  );
  assert.equal(keys.at(-1), ['LAST', linesBefore(BINARY, 'LAST=')]);
  // Compose's reading takes a line of noise as a key (python-dotenv's keys are any text up to `=`, `#` or a blank): never one with those in it.
  for (const [key] of keys) assert.match(String(key), /^[^=#\s]+$/);
  assert.equal(values(binary)[0], want(CANARY));

  const huge = get('huge.env');
  assert.is(huge.env, undefined, 'not parsed');
  assert.is(huge.size, Buffer.byteLength(HUGE));
  assert.is(huge.error, `env file larger than ${DEFAULT_MAX_ENV_BYTES} bytes: digested, not parsed`);

  const crlf = get('crlf.env');
  assert.equal(env(crlf), [
    ['A', 2],
    ['B', 3],
    ['C', 4],
    ['MULTI', 5],
    ['D', 7],
  ]);
  assert.equal(values(crlf), ['1', 'two words', CANARY, 'x\ny', '4'].map(want));

  assert.equal(env(get('nofinal.env')), [
    ['A', 1],
    ['B', 2],
  ]);
  assert.equal(values(get('nofinal.env'))[1], want(CANARY));
  const quoted = get('nofinal-quoted.env');
  assert.equal(env(quoted), [['A', 1]], 'an unterminated quote: python-dotenv skips its line');

  assert.equal(env(get('rescan.env')), [['AFTER', 900_001]]);
}

test('the env parser alone: an unterminated quote before 900k lines takes linear time (was: quadratic, minutes)', () => {
  const started = Date.now();
  const entries = parseEnvFile(RESCAN);
  assert.equal(entries, [{ key: 'AFTER', value: '1', line: 900_001 }]);
  // One more shape of the same thing: a long value whose quote never closes, line after line.
  const longLines = 'A="' + 'x\n'.repeat(200_000);
  // python-dotenv skips the line of the open quote and takes each later `x` as a key without `=`.
  assert.is(parseEnvFile(longLines).length, 199_999);
  assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
});

test('collectFiles: binary, huge, CRLF, no final newline: entries or an error on each, good entries kept', async () => {
  const started = Date.now();
  const { files, problems } = await within(
    collectFiles({ root: '/', paths: [], envPaths: Object.keys(FILES).map(pathOf), managedRoots: [], safe }),
    10_000,
  );
  assert.equal(problems, []);
  checkRecords(files, (v) => v, safe);
  assert.not.ok(JSON.stringify(files).includes(CANARY), 'a raw env value left the collector');
  assert.ok(Date.now() - started < 10_000);
});

test('a scan naming the same files: no crash, each recorded in the kept snapshot, exit 3 only for the missing engine', async () => {
  const ledger = join(dir, 'ledger.json');
  writeFileSync(
    ledger,
    JSON.stringify(Object.keys(FILES).map((name) => ({ id: name, type: 'file', target: pathOf(name) }))),
  );
  const out = join(dir, 'out');
  const r = await within(
    runCli([
      'scan',
      '--ledger',
      ledger,
      '--docker-host',
      'unix:///nonexistent.sock',
      '--hostname',
      't',
      '--out',
      out,
      '--format',
      'json',
    ]),
    20_000,
  );
  assert.is(r.code, 3, r.stderr);
  assert.not.match(r.stderr, 'internal error');
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as {
    notifications: { source: string; subject?: string; message: string }[];
    findings: { ruleName: string }[];
  };
  // Besides the engine, only what could not be checked is said: the env file too large to parse.
  const [name] = readdirSync(join(out, 'history', 't')).filter((n) => n !== HISTORY_INDEX_FILE);
  const unread = (JSON.parse(readFileSync(join(out, 'history', 't', name!), 'utf8')) as Snapshot).files
    .filter((f) => f.error !== undefined)
    .map((f) => f.path)
    .sort();
  // The engine, and what depends on it or on this machine (the daemon, the host's listening sockets), speak for
  // themselves; of the files, only the env file too large to parse.
  const aboutFiles = report.notifications.filter((n) => n.source === 'files' || n.subject?.startsWith(dir) === true);
  // No network or volume read: their rules are not checked, and the run says so.
  assert.equal(
    report.notifications.filter((n) => n.subject === 'networks' || n.subject === 'volumes').map((n) => n.source),
    ['MA2005', 'MA2006', 'MA2007', 'MA2008'],
  );
  assert.equal(aboutFiles.map((n) => n.subject).sort(), unread, JSON.stringify(report.notifications));
  assert.ok(aboutFiles.every((n) => n.source === 'files' && n.message.includes('not checked')));
  assert.equal(
    report.findings.filter((f) => f.ruleName === 'ledger-well-formed' || f.ruleName === 'declared-resource-present'),
    [],
  );
  const snapshotText = readFileSync(join(out, 'history', 't', name!), 'utf8');
  assert.not.ok(snapshotText.includes(CANARY), 'a raw env value reached the snapshot');
  const snapshot = JSON.parse(snapshotText) as Snapshot;
  // The scan's HMAC key is its own: compare the shapes (the digests differ from this test's).
  checkRecords(
    snapshot.files,
    (v) => v.shape,
    (raw) => safe(raw).shape,
  );
});

test.run();
