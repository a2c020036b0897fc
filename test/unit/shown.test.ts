import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import {
  SHOWN_BOUND,
  SHOWN_MESSAGE_BOUND,
  shown,
  shownCode,
  shownJson,
  shownLines,
  shownMarkdown,
  shownMessage,
} from '../../src/shown.js';

/*
 * src/shown.ts: how a host-controlled string reaches a person. What a terminal would act on is written as
 * a visible escape, two different strings never show the same, and a long one is cut to the bound with
 * its length and digest.
 */

const RUNS = { numRuns: 2000, seed: 0x5a0e } as const;

/** Every character the rule escapes, besides the backslash. */
const INVISIBLE = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
  0x061c,
  ...[0x200b, 0x200c, 0x200d, 0x200e, 0x200f],
  ...[0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e],
  ...[0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2065, 0x2066, 0x2067, 0x2068, 0x2069],
  0xfeff,
].map((c) => String.fromCharCode(c));

/** No character a terminal or a bidi renderer acts on, and no lone surrogate. */
// eslint-disable-next-line no-control-regex -- control characters are what is looked for
const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]/u;

/** The shown form read back: the inverse the rule promises exists (so no two strings show the same). */
function unshown(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') {
      out += text[i]!;
      continue;
    }
    const kind = text[++i];
    if (kind === '\\') out += '\\';
    else if (kind === 'n') out += '\n';
    else if (kind === 'r') out += '\r';
    else if (kind === 't') out += '\t';
    else if (kind === 'x') {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (kind === 'u') {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 5), 16));
      i += 4;
    } else throw new Error(`not an escape the rule writes: \\${kind}`);
  }
  return out;
}

/** Strings made of what is hardest to tell apart: backslashes, escape letters, hex digits, controls, bidi, pairs. */
const tricky = fc.string({
  unit: fc.constantFrom(
    '\\',
    'n',
    'x',
    'u',
    '1',
    'b',
    '2',
    'e',
    'a',
    ' ',
    '|',
    '`',
    '\n',
    '\r',
    '\t',
    '\u001b',
    '\u007f',
    '\u009b',
    '\u202e',
    '\u2066',
    '\u2028',
    '\ud83d',
    '\ude00',
    '😀',
    'é',
  ),
  maxLength: 40,
});

test('an ordinary name shows as itself', () => {
  for (const s of ['gitea-server', '/etc/mesh/gitea/db.env', 'web.server', 'café', '😀', 'a b|c`d<e>', ''])
    assert.is(shown(s), s);
});

test('every control, DEL, C1, bidi and invisible character is a visible escape; so is the backslash', () => {
  assert.is(shown('a\nb\rc\td'), 'a\\nb\\rc\\td');
  assert.is(shown('\u001b[2J\u001b]8;;https://x/\u0007'), '\\x1b[2J\\x1b]8;;https://x/\\x07');
  assert.is(shown('\u007f\u0085\u009b'), '\\x7f\\x85\\x9b');
  assert.is(shown('abc\u202eexe.txt'), 'abc\\u202eexe.txt');
  assert.is(
    shown('\u2066\u2069\u200e\u200f\u061c\u2028\u2029\ufeff'),
    '\\u2066\\u2069\\u200e\\u200f\\u061c\\u2028\\u2029\\ufeff',
  );
  assert.is(shown('C:\\n'), 'C:\\\\n');
  assert.is(shown('\ud800x\udc00'), '\\ud800x\\udc00', 'a lone surrogate is escaped, never sent as U+FFFD');
  for (const c of INVISIBLE) {
    const s = shown(`a${c}b`);
    assert.not.match(s, RAW, `U+${c.charCodeAt(0).toString(16)} shown raw`);
    assert.ok(s.length > 3, `U+${c.charCodeAt(0).toString(16)} not escaped`);
  }
});

test('two different strings never show the same: the shown form reads back to the string', () => {
  assert.is.not(shown('\n'), shown('\\n'));
  assert.is.not(shown('\u001b'), shown('\\x1b'));
  fc.assert(
    fc.property(tricky, (s) => {
      const out = shown(s, Number.MAX_SAFE_INTEGER);
      assert.not.match(out, RAW);
      assert.is(unshown(out), s);
    }),
    RUNS,
  );
  fc.assert(
    fc.property(tricky, tricky, (a, b) => a === b || shown(a) !== shown(b)),
    RUNS,
  );
});

test(`a value longer than SHOWN_BOUND (${SHOWN_BOUND}) is cut to a prefix, its length and its digest`, () => {
  const id = 'x'.repeat(100_000);
  const sha = createHash('sha256').update(id).digest('hex').slice(0, 12);
  const out = shown(id);
  assert.ok(out.length <= SHOWN_BOUND, `${out.length}`);
  assert.ok(out.startsWith('xxxxxxxx'));
  assert.ok(out.endsWith(`… (100000 characters, sha256:${sha})`), out);
  assert.is(shown('y'.repeat(SHOWN_BOUND)), 'y'.repeat(SHOWN_BOUND), 'at the bound: whole');
  assert.ok(shown('y'.repeat(SHOWN_BOUND + 1)).includes(`… (${SHOWN_BOUND + 1} characters, sha256:`));
  // Two long values differing only at their end still show differently.
  assert.is.not(shown(`${id}a`), shown(`${id}b`));
  assert.ok(shownMessage(id).length <= SHOWN_MESSAGE_BOUND);
});

test('a cut never splits a surrogate pair or an escape; characters are counted as code points', () => {
  const faces = shown('😀'.repeat(1000));
  const [prefix, suffix] = faces.split('…') as [string, string];
  assert.not.match(prefix, RAW);
  assert.is(prefix.length % 2, 0);
  assert.match(suffix, / \(1000 characters, sha256:[0-9a-f]{12}\)$/);
  const escapes = shown('\u001b'.repeat(1000)).split('…')[0]!;
  assert.match(escapes, /^(\\x1b)+$/);
  fc.assert(
    fc.property(tricky, fc.integer({ min: 0, max: 120 }), (s, n) => {
      const long = s.repeat(8) + 'z'.repeat(n);
      const out = shown(long, 100);
      assert.ok(out.length <= 100);
      assert.not.match(out, RAW);
      if (out !== shown(long, Number.MAX_SAFE_INTEGER)) {
        const kept = out.slice(0, out.lastIndexOf('… ('));
        assert.ok(shown(long, Number.MAX_SAFE_INTEGER).startsWith(kept), 'the prefix is the start of the shown form');
        assert.is(shown(unshown(kept), Number.MAX_SAFE_INTEGER), kept, `cut inside an escape: ${kept}`);
      }
    }),
    RUNS,
  );
});

test("shownLines keeps the tool's own line breaks and escapes everything else", () => {
  assert.is(shownLines('bad entries:\n  a\u001b[2J\n  b\r'), 'bad entries:\n  a\\x1b[2J\n  b\\r');
});

/** A GFM table row's cells: split at each `|` no backslash escapes. */
const cells = (row: string): number => row.split(/(?<!\\)\|/).length - 2;

test('Markdown text: what Markdown reads as markup is escaped, the table row keeps its columns', () => {
  const evil = '\n[FAKE] |x| `<script>alert(1)</script>](javascript:alert(1)) *b* _i_ ~s~ &amp; \\';
  const md = shownMarkdown(evil);
  assert.not.match(md, RAW);
  assert.not.match(md, /(?<!\\)[|`<>[\]*_~&]/, md);
  assert.is(cells(`| ${md} | ${md} |`), 2);
  assert.is(shownMarkdown('# heading'), '\\# heading');
  assert.is(shownMarkdown('gitea.server, /etc/mesh/a.env'), 'gitea.server, /etc/mesh/a.env');
});

test('Markdown code: no backtick run inside ends the span, no pipe ends the cell', () => {
  assert.is(shownCode('gitea-server'), '`gitea-server`');
  assert.is(shownCode('a`b'), '``a`b``');
  assert.is(shownCode('``x'), '``` ``x ```');
  assert.is(shownCode('a|b', { cell: true }), '`a\\|b`');
  assert.is(shownCode('a|b'), '`a|b`');
  fc.assert(
    fc.property(tricky, (s) => {
      const span = shownCode(s, { cell: true });
      const fence = /^`+/.exec(span)![0];
      const inner = span.slice(fence.length, span.length - fence.length);
      assert.ok(span.endsWith(fence));
      assert.not.ok(inner.includes(fence), 'a run as long as the fence inside');
      assert.not.match(inner, /^`|`$/);
      assert.not.match(span, RAW);
      assert.is(cells(`| ${span} |`), 1);
    }),
    RUNS,
  );
});

test('JSON for a person: the same value, with DEL, C1 and bidi characters escaped too', () => {
  const value = { id: 'a\u009b\u202e\u007f\n"\\😀', n: 1 };
  const json = shownJson(value);
  assert.not.match(json, RAW);
  assert.equal(JSON.parse(json), value);
});

test.run();
