import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { evaluateRule } from '../../src/evaluate/evaluate.js';
import type { Subject } from '../../src/facts/subjects.js';
import { parsePolicyPack } from '../../src/policy/load.js';
import { applyLogic, checkLogic } from '../../src/policy/logic.js';

/*
 * The four places where mesh-audit's JSON Logic once gave a different answer from JSON Logic without
 * any error (issue 15). Each test here failed on the code before the fix.
 */

const subject = (data: Record<string, unknown>): Subject => ({
  set: 'containers',
  about: { kind: 'container', id: String(data['name'] ?? 'c') },
  resource: null,
  module: null,
  part: null,
  data: { host: 'h', ...data },
  locate: () => ({ physical: [], logical: [] }),
});

async function rule(fields: Record<string, unknown>) {
  const pack = await parsePolicyPack(
    'dialect.yaml',
    JSON.stringify({
      schema: 'mesh-audit/policy@1',
      pack: { id: 'dialect', name: 'dialect', version: '1' },
      rules: [
        {
          id: 'D1',
          name: 'dialect-rule',
          title: 't',
          severity: 'warning',
          subject: 'containers',
          message: 'm',
          help: 'h',
          remediation: 'r',
          tags: [],
          profiles: ['nightly'],
          ...fields,
        },
      ],
    }),
  );
  return pack.rules[0]!;
}

// ---------------------------------------------------------------- 1. var into strings

const strings = suite('var reads into strings, as json-logic-js does');

strings('a string has its length and its characters', () => {
  assert.is(applyLogic({ var: 's.length' }, { s: 'abcd' }), 4);
  assert.is(applyLogic({ var: 's.0' }, { s: 'abcd' }), 'a');
  assert.is(applyLogic({ var: ['s.9', 'none'] }, { s: 'abcd' }), 'none');
  // Through a computed path too (the general `var`, not the constant-path closures).
  assert.is(applyLogic({ var: { cat: ['s', '.length'] } }, { s: 'abcd' }), 4);
  // And never a string's inherited properties.
  assert.is(applyLogic({ var: 's.toUpperCase' }, { s: 'abcd' }), null);
});

strings('a length limit on a name fails for a long name (it used to pass always)', async () => {
  const r = await rule({ assert: { '<=': [{ var: 'name.length' }, 8] } });
  assert.is(evaluateRule(r, subject({ name: 'a-sixteen-chars!' })).length, 1);
  assert.is(evaluateRule(r, subject({ name: 'short' })).length, 0);
});

strings('count of a string is its length; of a number it is an error, not 0', () => {
  assert.is(applyLogic({ count: [{ var: 's' }] }, { s: 'abcd' }), 4);
  assert.is(applyLogic({ count: [{ var: 'missing' }] }, {}), 0);
  assert.throws(() => applyLogic({ count: [{ var: 'n' }] }, { n: 5 }), /count takes a list, an object or a string/);
});

strings("get reads a string's own properties too", () => {
  assert.is(applyLogic({ get: [{ var: 's' }, 'length'] }, { s: 'abc' }), 3);
});

strings.run();

// ---------------------------------------------------------------- 2. let and the whole scope

const lets = suite('let values are computed when the assertion reads the whole scope');

lets('{"get": [{"var": ""}, "big"]} sees the let value', async () => {
  const r = await rule({
    let: { big: { '>': [{ var: 'holds.length' }, 1] } },
    assert: { '===': [{ get: [{ var: '' }, 'big'] }, true] },
  });
  assert.is(evaluateRule(r, subject({ holds: [80, 443] })).length, 0, 'two ports held is big: no finding');
  assert.is(evaluateRule(r, subject({ holds: [] })).length, 1, 'none held is not big: a finding');
});

lets('also with a default, and inside each', async () => {
  const r = await rule({
    each: { var: 'holds' },
    let: { ok: { '>=': [{ var: 'item' }, 1] } },
    assert: { get: [{ var: ['', null] }, 'ok'] },
  });
  const found = evaluateRule(r, subject({ holds: [1, 0, 2] }));
  assert.equal(
    found.map((f) => f.discriminator),
    ['0'],
  );
});

lets.run();

// ---------------------------------------------------------------- 3. deep equality

const equality = suite('deep equality of the custom operators');

equality('objects are equal whatever the order of their keys', () => {
  assert.equal(
    applyLogic({ difference: [{ var: 'a' }, { var: 'b' }] }, { a: [{ a: 1, b: 2 }], b: [{ b: 2, a: 1 }] }),
    [],
  );
  assert.equal(
    applyLogic(
      { intersection: [{ var: 'a' }, { var: 'b' }] },
      { a: [{ a: 1, b: { c: 1, d: 2 } }], b: [{ b: { d: 2, c: 1 }, a: 1 }] },
    ),
    [{ a: 1, b: { c: 1, d: 2 } }],
  );
  assert.is(
    applyLogic({ all_equal_to: [{ var: 'xs' }, { var: 'v' }] }, { xs: [{ p: 1, q: 2 }], v: { q: 2, p: 1 } }),
    true,
  );
});

equality('NaN and Infinity are not null', () => {
  // {"/": [1, 0]} is Infinity and {"+": ["x"]} is NaN in JSON Logic.
  assert.equal(applyLogic({ difference: [[{ '/': [1, 0] }, { '+': ['x'] }], [null]] }, {}), [Infinity, NaN]);
  assert.equal(applyLogic({ intersection: [[null], [{ '/': [1, 0] }, { '+': ['x'] }]] }, {}), []);
  assert.is(applyLogic({ all_equal_to: [[null], { '/': [-1, 0] }] }, {}), false);
});

equality('NaN is one value: lists keep it once, and find it in the other list', () => {
  assert.equal(applyLogic({ intersection: [[{ '+': ['x'] }, { '+': ['y'] }], [{ '+': ['z'] }]] }, {}), [NaN]);
});

equality('the items compared are still distinct by type', () => {
  const data = { a: [1, '1', true, null, [1], { a: 1 }, {}], b: [[1], []] };
  assert.equal(applyLogic({ difference: [{ var: 'a' }, { var: 'b' }] }, data), [1, '1', true, null, { a: 1 }, {}]);
});

equality.run();

// ---------------------------------------------------------------- 4. every

const every = suite('every is refused at load, with what to write instead');

every('`every` is refused, naming none/! and all_equal_to', async () => {
  const problems = checkLogic({ every: [{ var: 'xs' }, { '>=': [{ var: '' }, 1] }] });
  assert.equal(
    problems.map((p) => p.path),
    [''],
  );
  assert.match(problems[0]!.message, '{"none": [LIST, {"!": TEST}]}');
  assert.match(problems[0]!.message, 'all_equal_to');
  try {
    await rule({ assert: { every: [{ var: 'holds' }, { '>=': [{ var: '' }, 1] }] } });
    assert.unreachable('the pack loaded');
  } catch (err) {
    assert.match((err as Error).message, /dialect\.yaml:1: rule D1: assert: operator 'every'/);
  }
});

every('the written alternative runs a test per item and holds on an empty list', async () => {
  const r = await rule({ assert: { none: [{ var: 'holds' }, { '!': { '>=': [{ var: '' }, 1] } }] } });
  assert.is(evaluateRule(r, subject({ holds: [1, 2] })).length, 0);
  assert.is(evaluateRule(r, subject({ holds: [] })).length, 0);
  assert.is(evaluateRule(r, subject({ holds: [1, 0] })).length, 1);
});

every('all_equal_to compares each item with a value; true for an empty list', () => {
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, '127.0.0.1'] }, { xs: ['127.0.0.1', '127.0.0.1'] }), true);
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, '127.0.0.1'] }, { xs: ['127.0.0.1', '0.0.0.0'] }), false);
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, 1] }, { xs: [] }), true);
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, 1] }, { xs: ['1'] }), false);
});

every.run();
