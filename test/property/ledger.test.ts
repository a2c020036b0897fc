import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { parseLedgerText, type ParsedLedger } from '../../src/collect/ledger.js';
import { createSafeValueMaker } from '../../src/secret/value.js';

/*
 * Properties of the ledger parser, over arbitrary text and arbitrary JSON: it always answers (a
 * result or a structured error, never a throw), keeps one record per entry, locates each within the
 * text, and never lets a raw string of the ledger into a problem or an error message.
 * Fixed seeds and bounded runs: CI sees the same inputs every time.
 */

const safe = createSafeValueMaker(Buffer.alloc(32, 11));
const RUNS = { numRuns: 200, seed: 0x1ed6e7 } as const;

/** Marks every string the ledger holds, so that a leak is found by searching for the mark. */
const MARK = 'qz7';
const marked = fc.string({ maxLength: 12 }).map((s) => `${MARK}${s}`);
/** JSON with marked strings (values and keys) and the ledger's own field names as keys too. */
const FIELDS = [
  'id',
  'type',
  'target',
  'origin',
  'module',
  'holds',
  'digest',
  'sources',
  'applied_at',
  'entries',
  'node',
  'adopted',
  '__proto__',
  'constructor',
];
const markedJson = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -70000, max: 70000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    marked,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), marked), tie('value'), { maxKeys: 6 }),
  ),
})).value;
/** Ledger-shaped JSON: entries with the right fields, each of a random (often wrong) kind. */
const mostly = <T>(likely: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: likely, weight: 4 }, { arbitrary: markedJson, weight: 1 });
const entryLike = fc.record(
  {
    id: mostly(marked),
    type: mostly(fc.constantFrom('container', 'file', 'network')),
    target: mostly(
      fc.oneof(
        marked,
        marked.map((s) => `/${s}`),
      ),
    ),
    origin: mostly(fc.constantFrom('declared', 'found')),
    holds: mostly(fc.array(fc.integer({ min: -5, max: 70000 }), { maxLength: 3 })),
    secret: markedJson,
  },
  { requiredKeys: [] },
);
const ledgerLike = fc.oneof(
  fc.array(fc.oneof(entryLike, markedJson), { maxLength: 6 }),
  fc.record(
    {
      node: markedJson,
      adopted: markedJson,
      entries: fc.oneof(fc.array(fc.oneof(entryLike, markedJson), { maxLength: 6 }), markedJson),
    },
    { requiredKeys: [] },
  ),
  markedJson,
);
/** How the JSON is written out: compact, pretty, as JSON Lines, or cut short. */
/* eslint-disable @typescript-eslint/no-unnecessary-condition -- JSON.stringify(undefined) is undefined, whatever its type says */
const texts = fc.oneof(
  fc
    .tuple(ledgerLike, fc.constantFrom(undefined, 0, 1, 2, '\t'))
    .map(([v, indent]) => JSON.stringify(v, null, indent) ?? ''),
  fc
    .array(fc.oneof(entryLike, markedJson), { maxLength: 5 })
    .map((vs) => vs.map((v) => JSON.stringify(v) ?? '').join('\n')),
  fc.tuple(ledgerLike, fc.nat(), fc.constantFrom(0, 2)).map(([v, cut, indent]) => {
    const text = JSON.stringify(v, null, indent) ?? '';
    return text.slice(0, cut % (text.length + 1));
  }),
  fc
    .tuple(fc.array(fc.oneof(entryLike, markedJson), { maxLength: 4 }), fc.array(marked, { maxLength: 3 }))
    .map(([vs, junk]) => [...vs.map((v) => JSON.stringify(v) ?? ''), ...junk].join('\r\n')),
);
/* eslint-enable @typescript-eslint/no-unnecessary-condition */

/** The shape every answer must have, whatever the input. */
function wellFormedAnswer(text: string, parsed: ParsedLedger): void {
  const lineCount = text.split('\n').length;
  if (!parsed.ok) {
    assert.type(parsed.message, 'string');
    assert.ok(parsed.message.startsWith('ledger '), parsed.message);
    return;
  }
  assert.ok(Array.isArray(parsed.entries));
  let previous = 1;
  for (const record of parsed.entries) {
    assert.ok(
      Number.isInteger(record.line) && record.line >= 1 && record.line <= lineCount,
      `line ${record.line} of ${lineCount}`,
    );
    assert.ok(record.line >= previous, 'records are in file order');
    previous = record.line;
    assert.type(record.valid, 'boolean');
    assert.ok(record.errors.every((e) => typeof e === 'string'));
    assert.is(
      record.valid,
      record.errors.length === 0,
      `valid exactly when there is no error: ${JSON.stringify(record)}`,
    );
  }
  for (const p of parsed.problems) assert.type(p, 'string');
}

/** No raw string of the ledger in what is said about it (record errors may name a field, never a value). */
function nothingLeaks(parsed: ParsedLedger): void {
  const said = parsed.ok ? parsed.problems.join('\n') : parsed.message;
  assert.not.ok(said.includes(MARK), `a raw string of the ledger is in a message: ${said}`);
  if (!parsed.ok) return;
  for (const record of parsed.entries) {
    for (const error of record.errors) {
      // An extra field too deeply nested is named by its key; values are never quoted.
      const withoutKey = error.replace(/^extra field ".*" is nested/, 'extra field is nested');
      assert.not.ok(withoutKey.includes(MARK), `a raw value of the ledger is in a record error: ${error}`);
    }
    // Fields beyond the known ones keep no raw string either: every string in them is a SafeValue's.
    assert.equal(
      rawStrings(record.entry.extra ?? {}),
      [],
      `a raw string in extra: ${JSON.stringify(record.entry.extra)}`,
    );
  }
}

/** Strings in a value that are not the digest or shape of a SafeValue ({digest, shape}). */
function rawStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(rawStrings);
  if (value === null || typeof value !== 'object') return [];
  const keys = Object.keys(value);
  const v = value as Record<string, unknown>;
  if (keys.length === 2 && typeof v['digest'] === 'string' && typeof v['shape'] === 'string') return [];
  return Object.values(v).flatMap(rawStrings);
}

test('arbitrary text: a result or a structured error, never a throw', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.string({
          unit: fc.constantFrom('[', ']', '{', '}', '"', ':', ',', '\\', '\n', '\r', ' ', 'a', '1', 'null'),
          maxLength: 60,
        }),
      ),
      (text) => {
        wellFormedAnswer(text, parseLedgerText(text, safe));
      },
    ),
    RUNS,
  );
});

test('arbitrary JSON written any way (compact, pretty, JSON Lines, cut short, with junk lines): answers, in order, within the text', () => {
  fc.assert(
    fc.property(texts, (text) => {
      wellFormedAnswer(text, parseLedgerText(text, safe));
    }),
    RUNS,
  );
});

test('an array of anything: one record per element, none lost; an object with entries: one per entry', () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(entryLike, markedJson), { maxLength: 8 }),
      fc.constantFrom(undefined, 2),
      fc.boolean(),
      (values, indent, wrap) => {
        const text = JSON.stringify(wrap ? { node: 'n', entries: values } : values, null, indent);
        const parsed = parseLedgerText(text, safe);
        assert.ok(parsed.ok, JSON.stringify(parsed));
        assert.is(parsed.entries.length, values.length);
        parsed.entries.forEach((record, i) => {
          const v = values[i];
          const isObject = v !== null && typeof v === 'object' && !Array.isArray(v);
          if (!isObject) assert.is(record.valid, false);
        });
      },
    ),
    RUNS,
  );
});

test('no raw string of the ledger ever reaches a problem, an error message or an extra field', () => {
  fc.assert(
    fc.property(texts, (text) => {
      nothingLeaks(parseLedgerText(text, safe));
    }),
    RUNS,
  );
});

test('ids are unique among valid records (a repeated id is an error on the later entry)', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          id: fc.constantFrom('a', 'b', 'c'),
          type: fc.constant('container'),
          target: fc.constantFrom('x', 'y'),
        }),
        { maxLength: 8 },
      ),
      (entries) => {
        const parsed = parseLedgerText(JSON.stringify(entries, null, 1), safe);
        assert.ok(parsed.ok);
        const validIds = parsed.entries.filter((r) => r.valid).map((r) => r.entry.id);
        assert.equal(validIds, [...new Set(entries.map((e) => e.id))]);
        assert.is(parsed.entries.length, entries.length, 'every entry is kept');
      },
    ),
    RUNS,
  );
});

test.run();
