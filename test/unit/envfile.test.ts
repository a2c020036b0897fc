import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseEnvBytes, parseEnvFile, readLiteral } from '../../src/collect/envfile.js';
import { createSafeValueMaker } from '../../src/secret/value.js';

const asMap = (text: string): Record<string, string | null> =>
  Object.fromEntries(parseEnvFile(text).map((e) => [e.key, e.value]));

test('CRLF line endings give the same entries as LF, without a trailing \\r', () => {
  const lf = parseEnvFile('A=1\nB=two\nC="three"\n');
  const crlf = parseEnvFile('A=1\r\nB=two\r\nC="three"\r\n');
  assert.equal(crlf, lf);
  assert.equal(
    crlf.map((e) => e.value),
    ['1', 'two', 'three'],
  );
});

test('an export prefix is dropped', () => {
  assert.equal(parseEnvFile('export DATABASE_URL=postgres://db\nexport\tB=2'), [
    { key: 'DATABASE_URL', value: 'postgres://db', line: 1 },
    { key: 'B', value: '2', line: 2 },
  ]);
});

test('a key that merely starts with "export" is kept whole', () => {
  assert.equal(asMap('EXPORTED=1\nexporter=2'), { EXPORTED: '1', exporter: '2' });
});

test('whole-line comments, indented or not, are skipped', () => {
  assert.equal(parseEnvFile('# A=1\n   # B=2\nC=3'), [{ key: 'C', value: '3', line: 3 }]);
});

test('" #" starts a comment in an unquoted value; "#" inside a word does not', () => {
  assert.equal(asMap('A=value # a comment\nB=value\t# tab comment\nC=abc#def\nD=x #'), {
    A: 'value',
    B: 'value',
    C: 'abc#def',
    D: 'x',
  });
});

test('single quotes are literal: no escapes, # kept', () => {
  assert.equal(asMap("A='p@ss #not-a-comment \\n $HOME'"), { A: 'p@ss #not-a-comment \\n $HOME' });
});

test('double quotes keep # and spaces and process escapes', () => {
  const env = asMap('A="line1\\nline2"\nB="tab\\there"\nC="quote \\" inside # kept"\nD="  padded  "');
  assert.is(env['A'], 'line1\nline2');
  assert.is(env['B'], 'tab\there');
  assert.is(env['C'], 'quote " inside # kept');
  assert.is(env['D'], '  padded  ');
});

test('a comment after a closing quote is cut; other text after it makes the line unreadable, and it is skipped (python-dotenv)', () => {
  assert.equal(asMap('A="quoted" # comment\nB=\'x\' trailing\nC=3'), { A: 'quoted', C: '3' });
});

test('a double-quoted value may span lines; its line is where it starts; lines after it are counted right', () => {
  const text = ['FIRST=1', 'CERT="-----BEGIN-----', 'abc', '-----END-----"', 'AFTER=2'].join('\n');
  assert.equal(parseEnvFile(text), [
    { key: 'FIRST', value: '1', line: 1 },
    { key: 'CERT', value: '-----BEGIN-----\nabc\n-----END-----', line: 2 },
    { key: 'AFTER', value: '2', line: 5 },
  ]);
});

test('a multi-line value in a CRLF file uses \\n inside and keeps later line numbers', () => {
  const entries = parseEnvFile('A="x\r\ny"\r\nB=1\r\n');
  assert.equal(entries, [
    { key: 'A', value: 'x\ny', line: 1 },
    { key: 'B', value: '1', line: 3 },
  ]);
});

test('line numbers are 1-based and count blank, comment and skipped lines', () => {
  const entries = parseEnvFile('\n# comment\nnot an assignment\nA=1\n\nB=2');
  assert.equal(
    entries.map((e) => [e.key, e.line]),
    [
      ['A', 4],
      ['B', 6],
    ],
  );
});

test('a BOM at the start does not become part of the first key', () => {
  assert.equal(parseEnvFile('\uFEFFA=1\nB=2'), [
    { key: 'A', value: '1', line: 1 },
    { key: 'B', value: '2', line: 2 },
  ]);
});

test('a key without = has no value (the reading tool passes its own through); a line of words is skipped', () => {
  assert.equal(parseEnvFile('JUSTAWORD\nA=1\n  some text\nB=2'), [
    { key: 'JUSTAWORD', value: null, line: 1 },
    { key: 'A', value: '1', line: 2 },
    { key: 'B', value: '2', line: 4 },
  ]);
});

test('an empty value is kept as the empty string', () => {
  assert.equal(parseEnvFile('EMPTY=\nQUOTED=""\nSINGLE=\'\''), [
    { key: 'EMPTY', value: '', line: 1 },
    { key: 'QUOTED', value: '', line: 2 },
    { key: 'SINGLE', value: '', line: 3 },
  ]);
});

test('spaces around = and around an unquoted value are trimmed; = inside the value is kept', () => {
  assert.equal(asMap('  A = spaced value  \nURL=postgres://u:p@h/db?sslmode=require'), {
    A: 'spaced value',
    URL: 'postgres://u:p@h/db?sslmode=require',
  });
});

test('an unterminated quote: its line is skipped, the rest of the file read (python-dotenv)', () => {
  const entries = parseEnvFile('A="unterminated\nB=2\nC=3');
  assert.equal(
    entries.map((e) => e.key),
    ['B', 'C'],
  );
  assert.equal(
    entries.map((e) => e.line),
    [2, 3],
  );
});

test("with no closing quote, an escaped quote further on closes the value, as python-dotenv's expression backtracks to it", () => {
  assert.equal(parseEnvFile('A="x\nB=\\"\nC=3'), [
    { key: 'A', value: 'x\nB=\\', line: 1 },
    { key: 'C', value: '3', line: 3 },
  ]);
});

test("${VAR} and ${VAR:-default} take an earlier key of the file; otherwise the tool's environment, so the value is marked caller", () => {
  assert.equal(parseEnvFile("A=1\nB=${A}-x\nC='${A}'\nD=${NOPE:-dflt}\nE=$A\nF\nG=${F}"), [
    { key: 'A', value: '1', line: 1 },
    { key: 'B', value: '1-x', line: 2 },
    { key: 'C', value: '1', line: 3 },
    { key: 'D', value: 'dflt', line: 4, caller: true },
    { key: 'E', value: '$A', line: 5 },
    { key: 'F', value: null, line: 6 },
    { key: 'G', value: '', line: 7 },
  ]);
});

test('the literal reading (docker/podman --env-file): values as written, leading blanks and the line end dropped', () => {
  const r = readLiteral(Buffer.from('\uFEFFA="q" # c\r\n  B=trail  \r\nC\n# x\nD=a=b\n', 'utf8'));
  assert.equal(r.entries, [
    { key: '\uFEFFA', value: '"q" # c', line: 1 },
    { key: 'B', value: 'trail  ', line: 2 },
    { key: 'C', value: null, line: 3 },
    { key: 'D', value: 'a=b', line: 5 },
  ]);
  assert.ok(r.bom);
  assert.is(r.dockerRefuses, undefined);
});

test("the literal reading: Docker's CLI refuses a key with blanks (export) or no key; Podman's takes the key as written", () => {
  const r = readLiteral(Buffer.from('export A=1\nB=2\n', 'utf8'));
  assert.equal(
    r.entries.map((e) => e.key),
    ['export A', 'B'],
  );
  assert.match(r.dockerRefuses ?? '', /line 1: variable 'export A' contains blanks/);
  assert.match(readLiteral(Buffer.from('=x\n')).dockerRefuses ?? '', /no variable name/);
  assert.match(readLiteral(Buffer.from([0x41, 0x3d, 0xe9, 0x0a])).dockerRefuses ?? '', /not valid UTF-8/);
});

test('bytes that are not UTF-8: such a value is kept as its bytes (0xA0 and a BOM included), the others as text', () => {
  const bytes = Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from('A=caf'),
    Buffer.from([0xe9]),
    Buffer.from('\nB=x'),
    Buffer.from([0xa0]),
    Buffer.from('\nC=caf\u00e9 # note\n', 'utf8'),
  ]);
  const entries = parseEnvBytes(bytes);
  assert.equal(
    entries.map((e) => e.key),
    ['A', 'B', 'C'],
  );
  assert.equal(entries[0]!.value, Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  assert.equal(entries[1]!.value, Buffer.from([0x78, 0xa0]), 'a trailing 0xA0 is a byte, not whitespace');
  assert.is(entries[2]!.value, 'caf\u00e9');
  assert.equal(
    parseEnvBytes(Buffer.from('A=caf\u00e9\n', 'utf8')),
    parseEnvFile('A=caf\u00e9\n'),
    'valid UTF-8 is parsed as text',
  );
  const safe = createSafeValueMaker(Buffer.alloc(32, 1));
  assert.is.not(safe(entries[0]!.value!).digest, safe('caf\uFFFD').digest, 'never equal to the U+FFFD Docker keeps');
  assert.is(
    safe(Buffer.from('caf\u00e9', 'utf8')).digest,
    safe('caf\u00e9').digest,
    'bytes of valid UTF-8 digest as the text',
  );
});

test('a line of 60 kB of white space is read to its end: inline comment and trailing space go, inner space stays', () => {
  const run = ' \t'.repeat(30_000);
  assert.equal(asMap(`A=x${run}y\nB=x${run}#c\nC=x${run}\nD=x${run}y${run}#c\nE=x${run}y${run}`), {
    A: `x${run}y`,
    B: 'x',
    C: 'x',
    D: `x${run}y`,
    E: `x${run}y`,
  });
});

test.run();
