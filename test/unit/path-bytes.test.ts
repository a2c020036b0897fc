import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bytesOfName, fsName, isByteName, nameFromBytes } from '../../src/fs/path-bytes.js';

const bytes = (...parts: Array<string | number[]>): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

test('valid UTF-8 names are their decoded text, exactly as Node decodes them', () => {
  for (const name of ['plain.env', 'é', 'x\ufffd.env', '日本語', '😀 emoji', 'back\\xff.env', '', '\ufeffbom']) {
    assert.is(nameFromBytes(Buffer.from(name, 'utf8')), name);
    assert.equal(bytesOfName(name), Buffer.from(name, 'utf8'));
    assert.is(fsName(name), name, 'a valid name goes to fs as the string it is');
  }
});

test('each byte outside a valid UTF-8 sequence is one U+DC80..U+DCFF, and comes back as that byte', () => {
  const cases: Array<[Buffer, string]> = [
    [bytes('x', [0xff], '.env'), 'x\udcff.env'],
    [bytes([0x80]), '\udc80'],
    // A truncated sequence, then valid text: each byte of it escaped, what follows decoded.
    [bytes('a', [0xe2, 0x82], 'é'), 'a\udce2\udc82é'],
    // Overlong '/' and an encoded surrogate (CESU-8): not UTF-8, so escaped byte by byte.
    [bytes([0xc0, 0xaf]), '\udcc0\udcaf'],
    [bytes([0xed, 0xa0, 0x80]), '\udced\udca0\udc80'],
    // Past U+10FFFF.
    [bytes([0xf4, 0x90, 0x80, 0x80]), '\udcf4\udc90\udc80\udc80'],
    // A four-byte character beside an invalid byte stays one character.
    [bytes('😀', [0xfe]), '😀\udcfe'],
  ];
  for (const [raw, name] of cases) {
    assert.is(nameFromBytes(raw), name, raw.toString('hex'));
    assert.equal(bytesOfName(name), raw, name);
    assert.equal(fsName(name), raw);
  }
});

test('every sequence of bytes comes back exactly (all one- and two-byte names, and random longer ones)', () => {
  for (let a = 0; a < 256; a++) {
    assert.equal(bytesOfName(nameFromBytes(Buffer.of(a))), Buffer.of(a));
    for (let b = 0; b < 256; b++) {
      const raw = Buffer.of(a, b);
      const back = bytesOfName(nameFromBytes(raw));
      if (back === null || !back.equals(raw)) assert.unreachable(`${raw.toString('hex')} did not come back`);
    }
  }
  let seed = 46;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
  for (let n = 0; n < 2000; n++) {
    const raw = Buffer.from(Array.from({ length: 1 + (n % 12) }, () => (n % 3 === 0 ? next() : next() | 0x80)));
    assert.equal(bytesOfName(nameFromBytes(raw)), raw, raw.toString('hex'));
  }
});

test('an escaped name never equals a valid one: the name U+FFFD and the byte 0xff are two names', () => {
  assert.is.not(nameFromBytes(bytes('x', [0xff])), nameFromBytes(bytes('x\ufffd')));
  assert.is.not(nameFromBytes(bytes('x', [0xff])), 'x\\xff');
});

test('a string that stands for no bytes is refused, never read under another name', () => {
  // A lone high surrogate, a low one outside the escapes, and escapes spelling valid UTF-8 ('é' is written decoded).
  for (const name of ['x\ud800.env', '\udc41', '\udcc3\udca9', 'a\udfff']) {
    assert.is(bytesOfName(name), null, JSON.stringify(name));
    assert.not.ok(isByteName(name));
    assert.throws(
      () => fsName(name),
      (e: NodeJS.ErrnoException) => e.code === 'EILSEQ',
    );
  }
  assert.ok(isByteName('x\udcff.env'));
  assert.ok(isByteName('😀'));
});

test.run();
