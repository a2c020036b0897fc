import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KeptParts } from '../../src/facts/kept-parts.js';

// serve's reads keep a part of the joins (src/facts/joins.ts) while what it is made from is the same: a subject that
// asked a part kept is not asked again, so a part kept on inputs that changed would leave a stale subject behind.

test('fromSame: the part kept while each input is the very same object, made again when one is another', () => {
  const kept = new KeptParts();
  const a = { name: 'a' };
  const b = { name: 'b' };
  let made = 0;
  const make = () => ({ made: ++made });
  const first = kept.fromSame('p', [a, b], make);
  assert.is(kept.fromSame('p', [a, b], make), first);
  // The same value is not enough: a record's identity is what says it was not read again.
  const again = kept.fromSame('p', [a, { name: 'b' }], make);
  assert.is.not(again, first);
  assert.is(kept.fromSame('p', [a], make).made, 3);
});

test('fromValue: the part kept while its value is the same, made from the new value when it moved', () => {
  const kept = new KeptParts();
  const roots = (value: string[]) => ({ roots: value });
  const first = kept.fromValue('roots', ['/srv'], roots);
  assert.is(kept.fromValue('roots', ['/srv'], roots), first);
  const moved = kept.fromValue('roots', ['/srv', '/opt'], roots);
  assert.equal(moved.roots, ['/srv', '/opt']);
  // Each name is one part's: another name is made on its own.
  assert.is.not(kept.fromValue('other', ['/srv', '/opt'], roots), moved);
});

test.run();
