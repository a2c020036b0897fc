import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseEnvBytes, parseEnvFile } from '../../src/collect/envfile.js';
import { createSafeValueMaker } from '../../src/secret/value.js';

const asMap = (text: string): Record<string, string> => Object.fromEntries(parseEnvFile(text).map((e) => [e.key, e.value]));

test('CRLF line endings give the same entries as LF, without a trailing \\r', () => {
  const lf = parseEnvFile('A=1\nB=two\nC="three"\n');
  const crlf = parseEnvFile('A=1\r\nB=two\r\nC="three"\r\n');
  assert.equal(crlf, lf);
  assert.equal(crlf.map((e) => e.value), ['1', 'two', 'three']);
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
  assert.equal(asMap('A=value # a comment\nB=value\t# tab comment\nC=abc#def\nD=x #'), { A: 'value', B: 'value', C: 'abc#def', D: 'x' });
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

test('text after a closing quote is ignored', () => {
  assert.equal(asMap('A="quoted" # comment\nB=\'x\' trailing'), { A: 'quoted', B: 'x' });
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
  assert.equal(entries.map((e) => [e.key, e.line]), [['A', 4], ['B', 6]]);
});

test('a BOM at the start does not become part of the first key', () => {
  assert.equal(parseEnvFile('\uFEFFA=1\nB=2'), [
    { key: 'A', value: '1', line: 1 },
    { key: 'B', value: '2', line: 2 },
  ]);
});

test('lines without = are skipped', () => {
  assert.equal(asMap('JUSTAWORD\nA=1\n  some text\nB=2'), { A: '1', B: '2' });
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

test('an unterminated quote does not swallow the rest of the file', () => {
  const entries = parseEnvFile('A="unterminated\nB=2\nC=3');
  assert.equal(entries.map((e) => e.key), ['A', 'B', 'C']);
  assert.equal(entries.map((e) => e.line), [1, 2, 3]);
});

test('bytes that are not UTF-8: such a value is kept as its bytes (0xA0 and a BOM included), the others as text', () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('A=caf'), Buffer.from([0xe9]), Buffer.from('\nB=x'), Buffer.from([0xa0]), Buffer.from('\nC=caf\u00e9 # note\n', 'utf8')]);
  const entries = parseEnvBytes(bytes);
  assert.equal(entries.map((e) => e.key), ['A', 'B', 'C']);
  assert.equal(entries[0]!.value, Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  assert.equal(entries[1]!.value, Buffer.from([0x78, 0xa0]), 'a trailing 0xA0 is a byte, not whitespace');
  assert.is(entries[2]!.value, 'caf\u00e9');
  assert.equal(parseEnvBytes(Buffer.from('A=caf\u00e9\n', 'utf8')), parseEnvFile('A=caf\u00e9\n'), 'valid UTF-8 is parsed as text');
  const safe = createSafeValueMaker(Buffer.alloc(32, 1));
  assert.is.not(safe(entries[0]!.value).digest, safe('caf\uFFFD').digest, 'never equal to the U+FFFD Docker keeps');
  assert.is(safe(Buffer.from('caf\u00e9', 'utf8')).digest, safe('caf\u00e9').digest, 'bytes of valid UTF-8 digest as the text');
});

test.run();
