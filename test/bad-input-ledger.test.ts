import { test } from 'uvu';
import { within } from './support/within.js';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MAX_LEDGER_BYTES, parseLedgerText, readLedger } from '../src/collect/ledger.js';
import { createSafeValueMaker } from '../src/secret/value.js';
import type { Snapshot } from '../src/snapshot/types.js';
import { runCli, spawnCli, tempDir } from './support/cli.js';

/*
 * Bad ledgers, as the nightly job would meet them: through `readLedger` and through a whole
 * `mesh-audit scan` (no engine there, so every scan exits 3 and the JSON report says what it saw).
 * Each must end in a clear problem or a finding — never a crash, a hang, or a lost entry.
 */

const safe = createSafeValueMaker(Buffer.alloc(32, 5));
const CANARY = 'CANARY-badledger-71c0e4';

interface ReportFinding {
  ruleId: string;
  ruleName: string;
  subject: { kind: string; id: string };
  discriminator: string | null;
  fingerprint: string;
  message: string;
  locations: { physical: { path: string; line?: number }[] };
}
interface ReportNotification {
  level: string;
  kind: string;
  source: string;
  subject?: string;
  message: string;
}
interface Report {
  summary: { complete: boolean; byRule: Record<string, number> };
  findings: ReportFinding[];
  notifications: ReportNotification[];
}

/** A fresh folder (symlinks resolved: the ledger reader refuses symlinked parents) holding the ledger. */
function ledgerFile(content: string | Buffer): { dir: string; file: string } {
  const dir = realpathSync(tempDir('mesh-bad-ledger-'));
  const file = join(dir, 'ledger.json');
  writeFileSync(file, content);
  return { dir, file };
}

const scanArgs = (file: string, out: string): string[] => [
  'scan',
  '--ledger',
  file,
  '--docker-host',
  'unix:///nonexistent.sock',
  '--hostname',
  't',
  '--out',
  out,
  '--format',
  'json',
];

interface Scanned {
  code: number;
  stderr: string;
  file: string;
  report: Report;
  snapshot: Snapshot;
  everything: string;
}

function readResults(out: string): { report: Report; snapshot: Snapshot; everything: string } {
  const reportText = readFileSync(join(out, 'mesh-audit.json'), 'utf8');
  const historyDir = join(out, 'history', 't');
  const [name] = readdirSync(historyDir).filter((n) => n.endsWith('.json'));
  assert.ok(name, 'the scan kept its snapshot');
  const snapshotText = readFileSync(join(historyDir, name), 'utf8');
  return {
    report: JSON.parse(reportText) as Report,
    snapshot: JSON.parse(snapshotText) as Snapshot,
    everything: reportText + snapshotText,
  };
}

/** `mesh-audit scan` in this process. */
async function scan(content: string | Buffer): Promise<Scanned> {
  const { dir, file } = ledgerFile(content);
  const out = join(dir, 'out');
  const r = await runCli(scanArgs(file, out));
  return { code: r.code, stderr: r.stderr, file, ...readResults(out) };
}

/** `mesh-audit scan` as its own process (its own stack: what a stack overflow would really do). */
function spawnScan(content: string | Buffer): Scanned {
  const { dir, file } = ledgerFile(content);
  const out = join(dir, 'out');
  const r = spawnCli(scanArgs(file, out));
  assert.not.match(r.stderr, 'internal error', r.stderr);
  return { code: r.code, stderr: r.stderr, file, ...readResults(out) };
}

const ledgerNotes = (s: Scanned) => s.report.notifications.filter((n) => n.source === 'ledger');
const of = (s: Scanned, rule: string) => s.report.findings.filter((f) => f.ruleName === rule);

/** What every scan here has in common: exit 3 only because the engine is missing, which it says. */
function engineMissingOnly(s: Scanned, ledgerProblems = 0): void {
  assert.is(s.code, 3, s.stderr);
  assert.is(s.report.summary.complete, false);
  assert.ok(
    s.report.notifications.some((n) => n.source === 'docker' && n.level === 'error'),
    'the engine is still reported missing',
  );
  assert.is(ledgerNotes(s).length, ledgerProblems, JSON.stringify(ledgerNotes(s)));
  assert.not.ok(s.everything.includes(CANARY), 'a raw value of the ledger reached a report or snapshot');
  assert.not.ok(s.stderr.includes(CANARY), 'a raw value of the ledger reached stderr');
}

/**
 * A well-formed entry whose target is known to be missing: a file (the engine is not read here, so
 * whether a container is on the host is unknown and is never reported as missing).
 */
const GONE = '/nonexistent-mesh-audit-test';
const good = (id: string, target: string) => ({ id, type: 'file', target: `${GONE}/${target}`, origin: 'declared' });

test('invalid JSON: the ledger is unavailable with one line saying where, never what; the scan still reports', async () => {
  const text = `{"entries": [ {"id": "a", "type": "container", "target": "x", "token": "${CANARY}" ]`;
  const s = await scan(text);
  engineMissingOnly(s, 1);
  const [note] = ledgerNotes(s);
  assert.is(note!.level, 'error');
  assert.is(
    note!.message,
    `ledger ${s.file} is neither JSON nor JSON Lines: expected ',' or '}' at line 1, column ${text.lastIndexOf(']') + 1}`,
  );
  assert.ok(s.stderr.split('\n').includes(`mesh-audit: ${note!.message}`), s.stderr);
  assert.is(s.snapshot.ledger.available, false);
  assert.equal(s.report.findings, []);
});

test('a truncated array through the scan: unavailable, one problem with the position, exit 3', async () => {
  const full = JSON.stringify([good('a', 'x'), { ...good('b', 'y'), token: CANARY }], null, 2);
  const s = await scan(full.slice(0, full.indexOf(CANARY) + 4));
  engineMissingOnly(s, 1);
  assert.match(
    ledgerNotes(s)[0]!.message,
    /is neither JSON nor JSON Lines: unterminated string at line 13, column 19$/,
  );
  assert.is(s.snapshot.ledger.available, false);
});

test('wrong types per field: one ledger-well-formed error each, naming the field; the good entries still report', async () => {
  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['id', { id: 5, type: 'container', target: 'c1' }, /id must be string/],
    ['type', { id: 'bad-type', type: ['container'], target: 'c2' }, /type must be string/],
    ['target', { id: 'bad-target', type: 'container', target: null }, /target must be string/],
    [
      'origin',
      { id: 'bad-origin', type: 'container', target: 'c3', origin: 'maybe' },
      /origin must be equal to one of the allowed values/,
    ],
    ['module', { id: 'bad-module', type: 'container', target: 'c4', module: 7 }, /module must be string/],
    [
      'holds',
      { id: 'bad-holds', type: 'container', target: 'c5', holds: ['80', 0, 70000] },
      /holds\/0 must be integer/,
    ],
    ['digest', { id: 'bad-digest', type: 'file', target: '/f1', digest: `md5:${CANARY}` }, /digest must match pattern/],
    [
      'sources',
      { id: 'bad-sources', type: 'container', target: 'c6', sources: ['relative/path'] },
      /sources\/0 must match pattern/,
    ],
    [
      'applied_at',
      { id: 'bad-applied', type: 'container', target: 'c7', applied_at: 'yesterday' },
      /applied_at must match format "date-time"/,
    ],
    ['file target', { id: 'bad-file', type: 'file', target: 'relative' }, /target must match pattern/],
    ['not an object', 'just a string' as unknown as Record<string, unknown>, /an entry must be an object, not string/],
    ['missing fields', { extra: CANARY }, /must have required property 'id'/],
  ];
  const entries = [good('first-good', 'gone-1'), ...bad.map(([, e]) => e), good('last-good', 'gone-2')];
  const s = await scan(JSON.stringify(entries, null, 2));
  engineMissingOnly(s);
  assert.is(s.snapshot.ledger.entries.length, entries.length, 'every entry is kept');
  const wellFormed = of(s, 'ledger-well-formed');
  assert.is(wellFormed.length, bad.length, wellFormed.map((f) => f.message).join('\n'));
  bad.forEach(([field, , says], i) => {
    const record = s.snapshot.ledger.entries[i + 1]!;
    assert.is(record.valid, false, field);
    const finding = wellFormed.find((f) => f.locations.physical.some((p) => p.line === record.line));
    assert.ok(finding, `no ledger-well-formed finding for the entry with a bad ${field}`);
    assert.match(finding.message, says, field);
  });
  // The entry with an id of the wrong type is named by its line, the others by their ids.
  assert.ok(wellFormed.some((f) => f.subject.id === `line ${s.snapshot.ledger.entries[1]!.line}`));
  assert.ok(wellFormed.some((f) => f.subject.id === 'bad-origin'));
  // The good entries are used: no container is there, so each is reported missing.
  assert.equal(
    of(s, 'declared-resource-present').map((f) => f.subject.id),
    ['first-good', 'last-good'],
  );
});

test('duplicate ids: both entries kept; the second is a ledger-well-formed error naming the first; no finding is merged away', async () => {
  const text = JSON.stringify(
    [
      good('web', 'web-old'),
      good('db', 'db-1'),
      { id: 'web', type: 'file', target: '/srv/web.conf' },
      { id: 'broken', type: 'container', target: 'b1', origin: 'maybe' },
      { id: 'broken', type: 'container', target: 'b2', origin: 'maybe' },
    ],
    null,
    2,
  );
  const s = await scan(text);
  engineMissingOnly(s);
  const records = s.snapshot.ledger.entries;
  assert.equal(
    records.map((r) => [r.entry.id, r.valid]),
    [
      ['web', true],
      ['db', true],
      ['web', false],
      ['broken', false],
      ['broken', false],
    ],
  );
  assert.equal(records[2]!.errors, [`id is also the id of the entry at line ${records[0]!.line} (ids must be unique)`]);
  assert.equal(records[3]!.errors, ['origin must be equal to one of the allowed values']);
  assert.equal(records[4]!.errors, [
    'origin must be equal to one of the allowed values',
    `id is also the id of the entry at line ${records[3]!.line} (ids must be unique)`,
  ]);
  // The second `web` is reported at its own line; the first `web` still claims (and misses) its container.
  const wellFormed = of(s, 'ledger-well-formed');
  assert.equal(
    wellFormed.map((f) => [f.subject.id, f.locations.physical[0]!.line, f.discriminator]),
    [
      ['broken', records[3]!.line, null],
      ['broken', records[4]!.line, '#2'],
      ['web', records[2]!.line, null],
    ],
  );
  assert.match(
    wellFormed[2]!.message,
    `ledger entry web (line ${records[2]!.line}) is not well formed: id is also the id of the entry at line ${records[0]!.line}`,
  );
  assert.equal(
    of(s, 'declared-resource-present').map((f) => f.message),
    [
      `db declares file ${GONE}/db-1, which is not on the host`,
      `web declares file ${GONE}/web-old, which is not on the host`,
    ],
  );
  // Two findings of one rule about two entries with one id are two findings, told apart.
  const fingerprints = s.report.findings.map((f) => f.fingerprint);
  assert.is(new Set(fingerprints).size, fingerprints.length, 'fingerprints are unique');
});

test('entries without ids on one line (a compact ledger): each is its own finding, none merged away', async () => {
  const s = await scan(
    JSON.stringify([{ type: 'container' }, { target: 'x' }, { id: 'ok', type: 'file', target: `${GONE}/c` }]),
  );
  engineMissingOnly(s);
  const wellFormed = of(s, 'ledger-well-formed');
  assert.is(wellFormed.length, 2, JSON.stringify(wellFormed));
  assert.equal(
    wellFormed.map((f) => f.subject.id),
    ['line 1', 'line 1'],
  );
  assert.match(wellFormed[0]!.message, "required property 'target'");
  assert.match(wellFormed[1]!.message, "required property 'id'");
  assert.is(new Set(wellFormed.map((f) => f.fingerprint)).size, 2);
  assert.is(of(s, 'declared-resource-present').length, 1);
});

test('__proto__ and constructor keys: no prototype pollution, and the entries are still handled', async () => {
  const text = [
    '{',
    '  "__proto__": {"polluted": "top"},',
    '  "constructor": {"prototype": {"polluted": "top"}},',
    '  "node": "n1",',
    '  "entries": [',
    `    {"id": "p1", "type": "file", "target": "${GONE}/c1", "__proto__": {"polluted": "${CANARY}"}},`,
    `    {"id": "p2", "type": "file", "target": "${GONE}/c2", "constructor": {"prototype": {"polluted": "yes"}}},`,
    `    {"id": "__proto__", "type": "file", "target": "${GONE}/constructor"},`,
    '    {"id": "constructor", "type": "file", "target": "/__proto__/x", "__proto__": []}',
    '  ]',
    '}',
  ].join('\n');
  const direct = parseLedgerText(text, safe);
  assert.ok(direct.ok);
  const s = await scan(text);
  for (const where of [{}, Object.prototype, Object.create(null) as object, [] as unknown as object]) {
    assert.is((where as { polluted?: unknown }).polluted, undefined, 'Object.prototype polluted');
  }
  assert.is(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  engineMissingOnly(s);
  assert.is(s.snapshot.ledger.node, 'n1');
  const records = s.snapshot.ledger.entries;
  assert.equal(
    records.map((r) => [r.line, r.entry.id, r.valid]),
    [
      [6, 'p1', true],
      [7, 'p2', true],
      [8, '__proto__', true],
      [9, 'constructor', true],
    ],
  );
  // The odd keys are kept as the entry's own extra fields, values made secret-safe.
  assert.ok(Object.hasOwn(records[0]!.entry.extra as object, '__proto__'));
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the assertion states its own premise
  assert.ok(direct.ok && Object.hasOwn(direct.entries[0]!.entry.extra as object, '__proto__'));
  assert.equal((direct.entries[0]!.entry.extra as Record<string, unknown>)['__proto__'], { polluted: safe(CANARY) });
  assert.ok(Object.hasOwn(records[1]!.entry.extra as object, 'constructor'));
  assert.equal(
    of(s, 'declared-resource-present')
      .map((f) => f.subject.id)
      .sort(),
    ['__proto__', 'constructor', 'p1', 'p2'].sort(),
  );
});

test(`a 50 MB ledger is not read (default maxBytes ${DEFAULT_MAX_LEDGER_BYTES}): a clear problem, quickly`, async () => {
  const one = JSON.stringify(good('e', 'c')) + ',\n';
  const count = Math.ceil((50 * 1024 * 1024) / one.length);
  const text = '[' + one.repeat(count) + JSON.stringify(good('last', 'c')) + ']';
  assert.ok(text.length > 50 * 1024 * 1024);
  const { file } = ledgerFile(text);
  const direct = await within(readLedger(file, { root: '/', safe }), 15_000);
  assert.equal(direct.ledger, { path: file, available: false, entries: [] });
  assert.equal(
    direct.problems.map((p) => p.message),
    [`ledger ${file} is larger than ${DEFAULT_MAX_LEDGER_BYTES} bytes: not read`],
  );
  const out = join(realpathSync(tempDir('mesh-bad-ledger-out-')), 'out');
  const r = await within(runCli(scanArgs(file, out)), 20_000);
  assert.is(r.code, 3);
  assert.ok(
    r.stderr.includes(`mesh-audit: ledger ${file} is larger than ${DEFAULT_MAX_LEDGER_BYTES} bytes: not read\n`),
    r.stderr,
  );
  const { report } = readResults(out);
  assert.equal(
    report.notifications.filter((n) => n.source === 'ledger').map((n) => n.level),
    ['error'],
  );
});

const deepArrays = (n: number): string => '['.repeat(n) + ']'.repeat(n);

test('100k nested arrays as the whole ledger: no stack overflow; one entry that is not an object', async () => {
  const direct = await within(readLedger(ledgerFile(deepArrays(100_000)).file, { root: '/', safe }), 10_000);
  assert.is(direct.ledger.available, true);
  assert.equal(direct.ledger.entries, [
    { line: 1, valid: false, errors: ['an entry must be an object, not an array'], entry: {} },
  ]);
  const s = spawnScan(deepArrays(100_000));
  engineMissingOnly(s);
  assert.equal(
    of(s, 'ledger-well-formed').map((f) => f.message),
    ['ledger entry line 1 (line 1) is not well formed: an entry must be an object, not an array'],
  );
});

test('100k nested arrays left open: the ledger is unavailable, nesting too deep, located', async () => {
  const { file } = ledgerFile('['.repeat(100_000));
  const direct = await within(readLedger(file, { root: '/', safe }), 10_000);
  assert.is(direct.ledger.available, false);
  assert.equal(
    direct.problems.map((p) => p.message),
    [`ledger ${file} is neither JSON nor JSON Lines: nesting too deep at line 1, column 1001`],
  );
});

test('100k nested arrays inside one entry: that entry is a finding, the others still report (was: stack overflow, no report)', () => {
  const text = [
    '[',
    `  ${JSON.stringify(good('before', 'c1'))},`,
    `  {"id": "deep", "type": "container", "target": "c2", "payload": ${deepArrays(100_000)}, "token": "${CANARY}"},`,
    `  {"id": "deep-object", "type": "container", "target": "c3", "payload": ${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}},`,
    `  ${JSON.stringify(good('after', 'c4'))}`,
    ']',
  ].join('\n');
  const direct = parseLedgerText(text, safe);
  assert.ok(direct.ok);
  assert.equal(
    direct.entries.map((r) => [r.line, r.entry.id, r.valid]),
    [
      [2, 'before', true],
      [3, 'deep', false],
      [4, 'deep-object', false],
      [5, 'after', true],
    ],
  );
  assert.equal(direct.entries[1]!.errors, ['extra field "payload" is nested more than 32 levels deep: not kept']);
  assert.equal(Object.keys(direct.entries[1]!.entry.extra as object), ['token']);
  const s = spawnScan(text);
  engineMissingOnly(s);
  assert.equal(
    of(s, 'ledger-well-formed').map((f) => f.subject.id),
    ['deep', 'deep-object'],
  );
  assert.equal(
    of(s, 'declared-resource-present').map((f) => f.subject.id),
    ['after', 'before'],
  );
});

test('a ledger that is not UTF-8: one clear problem, never a crash', async () => {
  const bytes = Buffer.concat([
    Buffer.from(`[${JSON.stringify(good('a', 'c'))}, {"id": "b", "type": "container", "target": "`),
    Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80]),
    Buffer.from(`", "k": "${CANARY}"}]`),
  ]);
  const s = await scan(bytes);
  engineMissingOnly(s, 1);
  assert.is(ledgerNotes(s)[0]!.message, `ledger ${s.file} is not valid UTF-8: not read`);
  assert.is(s.snapshot.ledger.available, false);
  // JSON Lines with one bad line is refused whole as well (what was not read is not half-read).
  const lines = await scan(
    Buffer.concat([Buffer.from(JSON.stringify(good('a', 'c')) + '\n'), Buffer.from([0x7b, 0xc0, 0xaf, 0x7d, 0x0a])]),
  );
  engineMissingOnly(lines, 1);
});

test('binary garbage with NUL bytes as a ledger: unavailable, located, not quoted', async () => {
  const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 128));
  const s = await scan(Buffer.concat([noise, Buffer.from([0]), Buffer.from(CANARY)]));
  engineMissingOnly(s, 1);
  assert.match(ledgerNotes(s)[0]!.message, /^ledger .* is neither JSON nor JSON Lines: .* at line \d+, column \d+$/);
});

test.run();
