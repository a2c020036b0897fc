import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { parseEnvFile } from '../../src/collect/envfile.js';

/*
 * Properties of the env file parser: it never throws on any text; every entry has a valid key and a
 * 1-based line inside the file (as an editor counts lines), in file order; and a file written from known assignments (LF or CRLF,
 * `export` or not, quoted or not, final newline or not) reads back exactly, each at its line.
 */

const RUNS = { numRuns: 200, seed: 0x0e4f11e } as const;
/** python-dotenv's keys: any text up to `=`, `#` or a blank (Python's whitespace, which U+FEFF is not). */
// eslint-disable-next-line no-control-regex -- Python's whitespace includes these control characters
const KEY = /^[^=#\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/u;

/** Lines as an editor counts them: split at LF (a CR before it belongs to the break), BOM dropped. */
const lineCount = (text: string): number => text.replace(/^\uFEFF/, '').split(/\r?\n/).length;

/** Env-ish text: the characters and words the parser treats specially, in any order. */
const envSoup = fc.string({
  unit: fc.constantFrom(
    'A',
    'b_1',
    '=',
    ' ',
    '\t',
    '#',
    '"',
    "'",
    '`',
    '\\',
    '\n',
    '\r\n',
    '\r',
    'export ',
    '.',
    '-',
    '$',
    '\uFEFF',
    '\0',
    'é',
  ),
  maxLength: 80,
});

test('any text: never throws; valid keys; lines 1-based, increasing, within the file', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), envSoup), (text) => {
      const entries = parseEnvFile(text);
      const count = lineCount(text);
      let previous = 0;
      for (const e of entries) {
        assert.match(e.key, KEY);
        assert.ok(e.value === null || typeof e.value === 'string');
        assert.ok(Number.isInteger(e.line) && e.line >= 1 && e.line <= count, `line ${e.line} of ${count}`);
        // A lone CR ends a line for Compose (Python's universal newlines), not for an editor: two entries may share one.
        assert.ok(e.line >= previous, 'in file order');
        previous = e.line;
      }
    }),
    RUNS,
  );
});

const key = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/);
/** A value and how it is written: bare (no quote, space, # or = surprises), single-quoted, or double-quoted with escapes. */
const assignment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_./:@+,-]{0,12}$/).map((v) => ({ value: v, written: v, spans: 1 })),
  // Single quotes: python-dotenv decodes \' and \\ in them, and interpolates ${…} in any value.
  fc
    .string({ maxLength: 12 })
    .filter((v) => !/['\\\r\n]|\$\{/.test(v))
    .map((v) => ({ value: v, written: `'${v}'`, spans: 1 })),
  fc
    .string({ unit: 'binary', maxLength: 12 })
    .filter((v) => !v.includes('${'))
    .map((v) => ({
      value: v,
      written: `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`,
      spans: 1,
    })),
  // A double-quoted value over several lines (LF inside, whatever the file's line ends).
  fc
    .array(fc.stringMatching(/^[A-Za-z0-9 ]{0,6}$/), { minLength: 2, maxLength: 3 })
    .map((parts) => ({ value: parts.join('\n'), written: `"${parts.join('\n')}"`, spans: parts.length })),
);
const filler = fc.constantFrom('', '# a comment', '   ', 'not an assignment', '  # indented = comment');

test('assignments written out read back exactly, each at the line it starts on', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ key, assignment, exported: fc.boolean(), before: fc.array(filler, { maxLength: 2 }) }), {
        maxLength: 8,
      }),
      fc.constantFrom('\n', '\r\n'),
      fc.boolean(),
      (rows, eol, finalNewline) => {
        const lines: string[] = [];
        const expected: { key: string; value: string; line: number }[] = [];
        let physical = 0; // lines of the file so far (a multi-line value is several)
        for (const row of rows) {
          lines.push(...row.before);
          physical += row.before.length;
          expected.push({ key: row.key, value: row.assignment.value, line: physical + 1 });
          lines.push(`${row.exported ? 'export ' : ''}${row.key}=${row.assignment.written}`.replace(/\n/g, eol));
          physical += row.assignment.spans;
        }
        const text = lines.join(eol) + (finalNewline ? eol : '');
        const actual = parseEnvFile(text);
        assert.equal(actual, expected, JSON.stringify(text));
        assert.ok(physical <= lineCount(text));
      },
    ),
    RUNS,
  );
});

test.run();
