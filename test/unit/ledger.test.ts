import { test } from 'uvu';
import { within } from '../support/within.js';
import { requireRoot, rootTest } from '../support/root.js';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseLedgerText, readLedger } from '../../src/collect/ledger.js';
import { createSafeValueMaker } from '../../src/secret/value.js';

const safe = createSafeValueMaker(Buffer.alloc(32, 3));
const CANARY = 'CANARY-ledger-5e7d2a';
const LEDGER = '/var/lib/mesh-host/ledger.json';

const roots: string[] = [];
/** A fresh host root holding `text` at the ledger's default path. */
function hostWith(text: string | null, hostPath = LEDGER): string {
  const root = mkdtempSync(join(tmpdir(), 'mesh-ledger-'));
  roots.push(root);
  mkdirSync(join(root, dirname(hostPath)), { recursive: true });
  if (text !== null) writeFileSync(join(root, hostPath), text);
  return root;
}
const read = (root: string, hostPath = LEDGER) => within(readLedger(hostPath, { root, safe }));

test.after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const entry = (n: number) => ({
  id: `app${n}.server`,
  type: 'container',
  target: `app${n}`,
  module: `app${n}`,
  origin: 'declared',
});

test('a pretty-printed array: each entry carries the line where it starts', async () => {
  const text = JSON.stringify([entry(1), entry(2), entry(3)], null, 2) + '\n';
  const { ledger, problems } = await read(hostWith(text));
  assert.equal(problems, []);
  assert.is(ledger.path, LEDGER);
  assert.is(ledger.available, true);
  assert.equal(
    ledger.entries.map((r) => r.line),
    [2, 9, 16],
  );
  assert.equal(
    ledger.entries.map((r) => r.valid),
    [true, true, true],
  );
  assert.equal(ledger.entries[1]!.entry, entry(2));
  assert.is(ledger.node, undefined);
  assert.is(ledger.adopted, undefined);
});

test('a compact one-line array: every entry on line 1', async () => {
  const { ledger } = await read(hostWith(JSON.stringify([entry(1), entry(2)])));
  assert.equal(
    ledger.entries.map((r) => [r.line, r.entry.id]),
    [
      [1, 'app1.server'],
      [1, 'app2.server'],
    ],
  );
});

test('strings holding brackets, quotes and escapes do not confuse the line scanner', async () => {
  const text = [
    '[',
    '  {"id": "a", "type": "note", "target": "x", "note": "has ] and [ and \\" and {"},',
    '',
    '  {"id": "b", "type": "note", "target": "y\\\\", "nested": {"list": [1, [2, {"z": "}"}]]}},',
    '  "not an object",',
    '',
    '  {"id": "c",',
    '   "type": "container", "target": "c"}',
    ']',
  ].join('\r\n');
  const { ledger } = await read(hostWith(text));
  assert.equal(
    ledger.entries.map((r) => r.line),
    [2, 4, 5, 7],
  );
  assert.equal(
    ledger.entries.map((r) => r.valid),
    [true, true, false, true],
  );
  assert.match(ledger.entries[2]!.errors[0]!, /must be an object/);
});

test('the object form: node, adopted, and entries with their lines', async () => {
  const text = [
    '{',
    '  "node": "node-7",',
    '  "comment": "a string with \\"entries\\": [ inside",',
    '  "adopted": true,',
    '  "entries": [',
    '    {"id": "gitea.server", "type": "container", "target": "gitea"},',
    '    {"id": "gitea.env", "type": "file", "target": "/etc/mesh/gitea/gitea.env"}',
    '  ]',
    '}',
  ].join('\n');
  const { ledger, problems } = await read(hostWith(text));
  assert.equal(problems, []);
  assert.is(ledger.available, true);
  assert.is(ledger.node, 'node-7');
  assert.is(ledger.adopted, true);
  assert.equal(
    ledger.entries.map((r) => [r.line, r.entry.id, r.valid]),
    [
      [6, 'gitea.server', true],
      [7, 'gitea.env', true],
    ],
  );
});

test('the object form with wrong node-level types: ignored with a problem; entries not an array: unavailable', async () => {
  const bad = await read(hostWith('{"node": 5, "adopted": "yes", "entries": []}'));
  assert.is(bad.ledger.available, true);
  assert.is(bad.ledger.node, undefined);
  assert.is(bad.ledger.adopted, undefined);
  assert.equal(
    bad.problems.map((p) => p.message),
    [
      `ledger ${LEDGER} field "node" must be a string, not a number: ignored`,
      `ledger ${LEDGER} field "adopted" must be true or false, not a string: ignored`,
    ],
  );
  const worse = await read(hostWith('{"entries": {"id": "x"}}'));
  assert.is(worse.ledger.available, false);
  assert.equal(worse.ledger.entries, []);
  assert.match(worse.problems[0]!.message, /"entries" must be an array/);
});

test('JSON Lines: one entry per non-empty line; a bad line becomes an invalid record, the rest are used', async () => {
  const text = [
    JSON.stringify(entry(1)),
    '',
    `{"id": "broken", "password": "${CANARY}"`,
    JSON.stringify(entry(4)),
    '   ',
    JSON.stringify({ id: 'x', type: 'file', target: 'relative' }),
    '',
  ].join('\r\n');
  const { ledger, problems } = await read(hostWith(text));
  assert.equal(problems, []);
  assert.is(ledger.available, true);
  assert.equal(
    ledger.entries.map((r) => [r.line, r.valid]),
    [
      [1, true],
      [3, false],
      [4, true],
      [6, false],
    ],
  );
  const broken = ledger.entries[1]!;
  assert.equal(broken.entry, {});
  assert.is(broken.errors.length, 1);
  assert.match(broken.errors[0]!, /^not JSON: unexpected end of input at column \d+$/);
  assert.is(ledger.entries[2]!.entry.id, 'app4.server');
  assert.not.ok(JSON.stringify({ ledger, problems }).includes(CANARY), 'the canary leaked');
});

test('JSON Lines whose first line is bad are still JSON Lines', async () => {
  const text = [`oops ${CANARY}`, JSON.stringify(entry(2)), JSON.stringify(entry(3))].join('\n');
  const { ledger } = await read(hostWith(text));
  assert.is(ledger.available, true);
  assert.equal(
    ledger.entries.map((r) => [r.line, r.valid]),
    [
      [1, false],
      [2, true],
      [3, true],
    ],
  );
  assert.is(ledger.entries[0]!.errors[0], 'not JSON: unexpected character at column 1');
  assert.not.ok(JSON.stringify(ledger).includes(CANARY));
});

test('a single entry object on its own is one JSON Lines entry', async () => {
  const { ledger } = await read(hostWith('\n\n' + JSON.stringify(entry(1)) + '\n'));
  assert.equal(
    ledger.entries.map((r) => [r.line, r.entry.id]),
    [[3, 'app1.server']],
  );
});

test('a truncated array is unavailable with one problem giving the position, never the contents', async () => {
  const full = JSON.stringify([entry(1), { ...entry(2), token: CANARY }], null, 2);
  const text = full.slice(0, full.indexOf(CANARY) + CANARY.length);
  const { ledger, problems } = await read(hostWith(text));
  assert.equal(ledger, { path: LEDGER, available: false, entries: [] });
  assert.is(problems.length, 1);
  assert.is(problems[0]!.source, 'ledger');
  assert.is(problems[0]!.subject, LEDGER);
  assert.match(
    problems[0]!.message,
    /^ledger \/var\/lib\/mesh-host\/ledger\.json is neither JSON nor JSON Lines: unterminated string at line 15, column 35$/,
  );
  assert.not.ok(JSON.stringify(problems).includes(CANARY));
});

test('a damaged pretty-printed object is unavailable too', async () => {
  const { ledger, problems } = await read(
    hostWith('{\n  "entries": [\n    {"id": "a", "type": "x", "target": "b"}\n  ],,\n}\n'),
  );
  assert.is(ledger.available, false);
  assert.is(
    problems[0]!.message,
    `ledger ${LEDGER} is neither JSON nor JSON Lines: expected a property name at line 4, column 5`,
  );
});

test('a secret in an extra field never appears in the result', async () => {
  const text = JSON.stringify({
    entries: [{ ...entry(1), db_password: CANARY, nested: { url: `postgresql://u:${CANARY}@db:5432/x` } }],
  });
  const result = await read(hostWith(text));
  assert.is(result.ledger.entries[0]!.valid, true);
  const extra = result.ledger.entries[0]!.entry.extra as Record<string, unknown>;
  assert.equal(extra['db_password'], safe(CANARY));
  assert.not.ok(JSON.stringify(result).includes(CANARY));
});

test('an empty (or blank) file is an unavailable ledger, not one with no entries', async () => {
  for (const text of ['', '  \n\n']) {
    const { ledger, problems } = await read(hostWith(text));
    assert.equal(ledger, { path: LEDGER, available: false, entries: [] });
    assert.equal(problems, [
      {
        source: 'ledger',
        subject: LEDGER,
        message: `ledger ${LEDGER} is empty (0 bytes or only whitespace): not read (caught while being rewritten?)`,
      },
    ]);
  }
});

test('a UTF-8 BOM is ignored', async () => {
  const { ledger } = await read(hostWith('\uFEFF' + JSON.stringify([entry(1)])));
  assert.is(ledger.entries[0]!.valid, true);
});

test('a missing ledger: unavailable with ENOENT', async () => {
  const { ledger, problems } = await read(hostWith(null));
  assert.equal(ledger, { path: LEDGER, available: false, entries: [] });
  assert.equal(problems, [{ source: 'ledger', subject: LEDGER, message: `ledger ${LEDGER} not found (ENOENT)` }]);
});

test('a ledger that is a symlink is refused, even to a good ledger', async () => {
  const root = hostWith(null);
  writeFileSync(join(root, 'var/lib/mesh-host/real.json'), JSON.stringify([entry(1)]));
  symlinkSync('real.json', join(root, LEDGER));
  const { ledger, problems } = await read(root);
  assert.is(ledger.available, false);
  assert.equal(ledger.entries, []);
  assert.match(problems[0]!.message, /symlink: refused/);
});

test('a ledger under a symlinked parent is refused', async () => {
  const root = hostWith(null, '/elsewhere/ledger.json');
  writeFileSync(join(root, 'elsewhere/ledger.json'), JSON.stringify([entry(1)]));
  mkdirSync(join(root, 'var/lib'), { recursive: true });
  symlinkSync(join(root, 'elsewhere'), join(root, 'var/lib/mesh-host'));
  const { ledger, problems } = await read(root);
  assert.is(ledger.available, false);
  assert.match(problems[0]!.message, /parent folder is a symlink \(\/var\/lib\/mesh-host\)/);
});

test('a ledger that is a folder or a FIFO is not read (and a FIFO never opened)', async () => {
  const dir = hostWith(null);
  mkdirSync(join(dir, LEDGER));
  assert.match((await read(dir)).problems[0]!.message, /is a directory, not a regular file/);
  const fifo = hostWith(null);
  execFileSync('mkfifo', [join(fifo, LEDGER)]);
  const result = await read(fifo);
  assert.is(result.ledger.available, false);
  assert.match(result.problems[0]!.message, /is a fifo, not a regular file/);
});

test('a relative ledger path is a problem, not a crash', async () => {
  const { ledger, problems } = await read(hostWith('[]'), 'var/lib/mesh-host/ledger.json');
  assert.is(ledger.available, false);
  assert.match(problems[0]!.message, /not an absolute, normalized host path/);
});

rootTest('an unreadable ledger (as nobody): unavailable, permission denied with its code', async () => {
  requireRoot();
  if (typeof process.seteuid !== 'function' || typeof process.setegid !== 'function')
    throw new Error('no seteuid/setegid here: cannot drop to nobody');
  const root = hostWith(JSON.stringify([{ ...entry(1), secret: CANARY }]));
  for (const dir of ['', 'var', 'var/lib', 'var/lib/mesh-host']) chmodSync(join(root, dir), 0o755);
  chmodSync(join(root, LEDGER), 0o600);
  let result: Awaited<ReturnType<typeof readLedger>>;
  process.setegid(65534);
  process.seteuid(65534);
  try {
    result = await read(root);
  } finally {
    process.seteuid(0);
    process.setegid(0);
  }
  assert.is(result.ledger.available, false);
  assert.equal(result.problems, [
    { source: 'ledger', subject: LEDGER, message: `ledger ${LEDGER} not read: permission denied (EACCES)` },
  ]);
});

test('"entries" twice in the object form: unavailable, naming both lines (JSON.parse would silently keep the second list)', async () => {
  const text = `{\n  "node": "n1",\n  "entries": [${JSON.stringify(entry(1))}],\n  "entries": [${JSON.stringify(entry(2))}]\n}\n`;
  const { ledger, problems } = await read(hostWith(text));
  assert.is(ledger.available, false);
  assert.equal(ledger.entries, []);
  assert.equal(
    problems.map((p) => p.message),
    [`ledger ${LEDGER} names "entries" twice (lines 3 and 4): ambiguous, not read`],
  );
  // The same key written with an escape is the same key to JSON.parse.
  const escaped = `{"entries": [], "\\u0065ntries": [${JSON.stringify(entry(2))}]}`;
  const r = parseLedgerText(escaped, safe);
  assert.equal(r.ok ? 'read' : r.message, 'ledger names "entries" twice (lines 1 and 1): ambiguous, not read');
});

test('a key twice inside one entry (array, object form, JSON Lines): that entry invalid with both lines, the others used', () => {
  const twice = '{"id": "b.server", "type": "container", "target": "b-old",\n "target": "b-new"}';
  const extraTwice = '{"id": "c.server", "type": "container", "target": "c", "extra": {"a": 1,\n "a": 2}}';
  const forms = [
    `[\n${JSON.stringify(entry(1))},\n${twice},\n${extraTwice},\n${JSON.stringify(entry(4))}\n]\n`,
    `{"entries": [\n${JSON.stringify(entry(1))},\n${twice},\n${extraTwice},\n${JSON.stringify(entry(4))}\n], "meta": {"x": 1, "x": 2}}\n`,
  ];
  for (const text of forms) {
    const r = parseLedgerText(text, safe);
    assert.ok(r.ok);
    assert.equal(
      r.entries.map((e) => [e.entry.id, e.valid]),
      [
        ['app1.server', true],
        ['b.server', false],
        ['c.server', false],
        ['app4.server', true],
      ],
      text,
    );
    assert.equal(r.entries[1]!.errors, ['"target" is given twice (lines 3 and 4): ambiguous']);
    assert.equal(r.entries[2]!.errors, ['"a" is given twice (lines 5 and 6): ambiguous']);
  }
  const lines = [
    JSON.stringify(entry(1)),
    '{"id": "d.server", "type": "container", "target": "d", "id": "e.server"}',
    JSON.stringify(entry(3)),
  ].join('\n');
  const r = parseLedgerText(lines, safe);
  assert.ok(r.ok);
  assert.equal(
    r.entries.map((e) => [e.line, e.valid, e.errors]),
    [
      [1, true, []],
      [2, false, ['"id" is given twice (lines 2 and 2): ambiguous']],
      [3, true, []],
    ],
  );
});

test('a top-level scalar is not a ledger', () => {
  const parsed = parseLedgerText('42', safe);
  assert.equal(parsed, {
    ok: false,
    message: 'ledger is JSON but a number, not an array of entries, an object with "entries", or JSON Lines',
  });
});

test.run();
