import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { elementOffsets, jsonSyntaxError, lineIndex, parseJsonInput } from '../../src/input/json.js';
import { MeshAuditError } from '../../src/errors.js';

/*
 * src/input/json.ts: strict JSON located for the user, never quoted. jsonc-parser (which accepts
 * comments and trailing commas when asked to) must agree with JSON.parse on what is JSON.
 */

const CANARY = 'CANARY-json-9f3b';
const RUNS = { numRuns: 400, seed: 0x150a } as const;

const errorOf = (text: string) => {
  const e = jsonSyntaxError(text);
  return e && { at: `${e.line}:${e.column}`, reason: e.reason };
};

test('each kind of mistake is located by line and column, with a reason that quotes nothing', () => {
  assert.equal(errorOf('{"a": 1'), { at: '1:8', reason: 'unexpected end of input' });
  assert.equal(errorOf('[1, 2,, 3]'), { at: '1:7', reason: 'expected a value' });
  assert.equal(errorOf('{"a" 1}'), { at: '1:6', reason: "expected ':'" });
  assert.equal(errorOf('[01]'), { at: '1:3', reason: "expected ',' or ']'" });
  assert.equal(errorOf('{"a": 1 "b": 2}'), { at: '1:9', reason: "expected ',' or '}'" });
  assert.equal(errorOf('"ab\\x"'), { at: '1:1', reason: 'bad escape in a string' });
  assert.equal(errorOf('[1] 2'), { at: '1:5', reason: 'unexpected content after the JSON value' });
  assert.equal(errorOf('[1] x'), { at: '1:5', reason: 'unexpected character' });
  assert.equal(errorOf(`{\n  "k": "${CANARY}`), { at: `2:${9 + CANARY.length}`, reason: 'unterminated string' });
  assert.equal(errorOf(''), { at: '1:1', reason: 'unexpected end of input' });
  assert.equal(errorOf('{"a": 1}'), null);
});

test('strict JSON stays strict: comments, trailing commas, single quotes, NaN are refused where they are', () => {
  assert.equal(errorOf('{"a": 1,}'), { at: '1:9', reason: 'expected a property name' });
  assert.equal(errorOf('[1,\n 2,\n]'), { at: '3:1', reason: 'expected a value' });
  assert.equal(errorOf('// note\n{}'), { at: '1:1', reason: 'comments are not JSON' });
  assert.equal(errorOf('{"a": /* x */ 1}'), { at: '1:7', reason: 'comments are not JSON' });
  assert.equal(errorOf("{'a': 1}"), { at: '1:2', reason: 'unexpected character' });
  assert.equal(errorOf('[NaN]'), { at: '1:2', reason: 'unexpected character' });
  assert.equal(errorOf('{"a": "x\ty"}'), { at: '1:7', reason: 'control character in a string' });
  assert.equal(errorOf('[1.]'), { at: '1:2', reason: 'bad number' });
});

/** JSON, JSON broken in one place, and soup made of JSON's own pieces. */
const texts = fc.oneof(
  fc.json(),
  fc
    .tuple(fc.json(), fc.nat(), fc.constantFrom('', ',', ']', '}', '"', '/', '//x\n', ' ', '\n', 'e', '-', '0', '\\'))
    .map(([t, at, insert]) => {
      const i = at % (t.length + 1);
      return t.slice(0, i) + insert + t.slice(i + 1);
    }),
  fc.string({
    unit: fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      '0',
      '1',
      '-',
      '.',
      'e',
      'true',
      'null',
      ' ',
      '\n',
      '\t',
      '/',
      '*',
      'u',
      'a',
      '\u0001',
    ),
  }),
);

test('jsonc-parser, run strict, finds an error exactly when JSON.parse refuses the text (property)', () => {
  fc.assert(
    fc.property(texts, (text) => {
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      const error = jsonSyntaxError(text);
      assert.is(
        error === null,
        parses,
        `${JSON.stringify(text)}: JSON.parse ${parses ? 'accepts' : 'refuses'} it, the locator ${error ? `says ${error.reason} at ${error.offset}` : 'found nothing'}`,
      );
      if (error) assert.ok(error.offset >= 0 && error.offset <= text.length);
    }),
    RUNS,
  );
});

test("nesting past the locator's depth is reported where it starts, not as a stack overflow", () => {
  assert.equal(errorOf('['.repeat(100_000)), { at: '1:1001', reason: 'nesting too deep' });
});

test('parseJsonInput: file:line:column, what the file was, why; never the text', () => {
  const text = `{\n  "schema": "mesh-audit/snapshot@1",\n  "token": "${CANARY}" 7\n}`;
  try {
    parseJsonInput(text, '/tmp/s.json', 'snapshot');
    assert.unreachable('a broken snapshot was parsed');
  } catch (error) {
    assert.instance(error, MeshAuditError);
    assert.is(
      (error as Error).message,
      `/tmp/s.json:3:${15 + CANARY.length}: snapshot is not valid JSON: expected ',' or '}'`,
    );
  }
  assert.equal(parseJsonInput('{"a": [1]}', 'x', 'report'), { a: [1] });
});

test('elementOffsets: where each entry starts, for a top-level array or the array under a key (the last one, as JSON.parse keeps)', () => {
  const lines = (text: string, key?: string) => elementOffsets(text, key).map(lineIndex(text));
  assert.equal(lines('[\n {"a": [1, 2]},\n [3, {"b": [4]}],\n "x" , 5\n]'), [2, 3, 4, 4]);
  assert.equal(lines('[]'), []);
  const doc = '{\n "node": "n1",\n "entries": [\n  {"id": "a", "entries": [9]},\n\n  {"id": "b"}\n ],\n "x": [7]\n}';
  assert.equal(lines(doc, 'entries'), [4, 6]);
  assert.equal(lines('{"entries": [1],\n "entries": [\n 2, 3]}', 'entries'), [3, 3]);
  assert.equal(lines('{"other": [1, 2]}', 'entries'), []);
  // Any depth inside an entry (a loop, not a recursion).
  const deep = `[\n${'['.repeat(200_000)}${']'.repeat(200_000)},\n1]`;
  assert.equal(lines(deep), [2, 3]);
});

test('elementOffsets agrees with JSON.parse on how many entries there are (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.jsonValue()), fc.array(fc.jsonValue()), fc.boolean(), (entries, other, pretty) => {
      const text = JSON.stringify({ a: other, entries, z: other }, null, pretty ? 2 : undefined);
      assert.is(elementOffsets(text, 'entries').length, entries.length);
      const top = JSON.stringify(entries, null, pretty ? 1 : undefined);
      const offsets = elementOffsets(top);
      assert.equal(
        offsets.map(
          (at, i) =>
            JSON.parse(
              top.slice(at, offsets[i + 1] === undefined ? top.lastIndexOf(']') : top.lastIndexOf(',', offsets[i + 1])),
            ) as unknown,
        ),
        entries,
      );
    }),
    RUNS,
  );
});

test.run();
