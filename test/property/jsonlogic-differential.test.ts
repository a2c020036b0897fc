import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { applyLogic, checkLogic } from '../../src/policy/logic.js';

/*
 * The compiled path (src/policy/logic.ts: closures made once, with its own copies of the common
 * operators) against json-logic-js's own `apply`, untouched: for generated expressions over the
 * standard operators and generated data, both give the same answer, or both throw. 10,000 cases per
 * run (fixed seed, as the other property tests; MA_FC_SEED explores others). Where mesh-audit's
 * dialect deliberately differs (own properties only, dotted keys, refused operators), the generated
 * data cannot reach the difference, and each one is a case of its own below.
 */

const RUNS = { numRuns: 10_000, seed: Number(process.env['MA_FC_SEED'] ?? 0x15d1ff) } as const;

// A second, untouched instance of json-logic-js: logic.ts changed the table of the one it imports.
const require = createRequire(import.meta.url);
const modulePath = require.resolve('json-logic-js');
const shared = require(modulePath) as { apply(logic: unknown, data?: unknown): unknown };
const sharedEntry = require.cache[modulePath];
delete require.cache[modulePath];
const reference = require(modulePath) as { apply(logic: unknown, data?: unknown): unknown };
require.cache[modulePath] = sharedEntry; // the other test files in this process keep the shared one
assert.ok(reference !== shared, 'a fresh json-logic-js instance');

/** Keys and text from a small alphabet: no dots in keys, and no name an object, array or string inherits. */
const KEYS = ['a', 'b', 's', 'xs', 'n', 'o', '0', '1'];
const text = fc.string({ unit: fc.constantFrom(...'abxs01. -'), maxLength: 4 });
const number = fc.oneof(fc.integer({ min: -3, max: 12 }), fc.constantFrom(0.5, -0, 1e21, 2 ** 53));
const scalar = fc.oneof(
  number,
  fc.constantFrom(true, false, null),
  text,
  fc.constantFrom('', '0', '1', '10', '9', 'a'),
);

const data = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', maxDepth: 3 }, scalar, tie('list'), tie('object')),
  list: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 5 }),
})).object;

const PATHS = [
  '',
  'a',
  'b',
  's',
  'n',
  'xs',
  'o',
  'a.b',
  'o.a',
  'o.s',
  'xs.0',
  'xs.1',
  'xs.length',
  's.length',
  's.0',
  'a.length',
  'o.xs.0',
  'missing',
  'o.missing.x',
  '0',
  '1',
];

const op = (name: string, args: fc.Arbitrary<unknown[]>): fc.Arbitrary<unknown> => args.map((a) => ({ [name]: a }));

const expr = fc.letrec((tie) => {
  const e = tie('expr');
  const args = (min: number, max: number) => fc.array(e, { minLength: min, maxLength: max });
  return {
    expr: fc.oneof(
      { depthSize: 'small', maxDepth: 4, withCrossShrink: true },
      scalar,
      tie('var'),
      tie('var'),
      tie('compare'),
      tie('logic'),
      tie('text'),
      tie('arith'),
      tie('lists'),
      args(0, 3),
    ),
    var: fc.oneof(
      fc.constantFrom(...PATHS).map((p) => ({ var: p })),
      fc.tuple(fc.constantFrom(...PATHS), e).map(([p, d]) => ({ var: [p, d] })),
      fc.constantFrom(0, 1).map((p) => ({ var: p })),
      e.map((p) => ({ var: p })),
    ),
    compare: fc.oneof(
      ...['==', '===', '!=', '!==', '>', '>='].map((name) => op(name, args(2, 2))),
      ...['<', '<='].map((name) => op(name, args(2, 3))),
      op('in', args(2, 2)),
    ),
    logic: fc.oneof(
      op('!', args(1, 1)),
      op('!!', args(1, 1)),
      e.map((x) => ({ '!': x })),
      op('and', args(1, 3)),
      op('or', args(1, 3)),
      op('if', args(0, 5)),
      op('?:', args(3, 3)),
    ),
    text: fc.oneof(op('cat', args(0, 3)), op('substr', args(2, 3))),
    arith: fc.oneof(...['+', '*', '-', '/', '%', 'min', 'max'].map((name) => op(name, args(1, 3)))),
    lists: fc.oneof(
      op('merge', args(0, 3)),
      op('missing', args(0, 3)),
      op(
        'missing_some',
        fc.tuple(e, e).map((t) => [...t]),
      ),
      ...['map', 'filter', 'all', 'some', 'none'].map((name) =>
        op(
          name,
          fc.tuple(e, e).map((t) => [...t]),
        ),
      ),
      op(
        'reduce',
        fc.tuple(e, e, e).map((t) => [...t]),
      ),
    ),
  };
}).expr;

type Outcome = { value: unknown } | { threw: string };
const outcome = (run: () => unknown): Outcome => {
  try {
    return { value: run() };
  } catch (err) {
    return { threw: err instanceof Error ? err.message : String(err) };
  }
};

test('the compiled path and json-logic-js apply agree on 10,000 generated expressions and data', () => {
  let evaluated = 0;
  fc.assert(
    fc.property(expr, data, (logic, input) => {
      // What a pack may hold: the loader refuses anything checkLogic flags (none is generated).
      assert.equal(checkLogic(logic), []);
      evaluated++;
      const mine = outcome(() => applyLogic(logic, input));
      const theirs = outcome(() => reference.apply(logic, input));
      if (!isDeepStrictEqual(mine, theirs)) {
        throw new Error(`compiled ${JSON.stringify(mine)} but json-logic-js ${JSON.stringify(theirs)}`);
      }
    }),
    RUNS,
  );
  assert.ok(evaluated >= 10_000, `${evaluated} cases`);
});

// ---------------------------------------------------------------- documented hardening, case by case

const differs = (logic: unknown, input: unknown, ours: Outcome, theirs: Outcome) => {
  assert.equal(
    outcome(() => applyLogic(logic, input)),
    ours,
    `mesh-audit on ${JSON.stringify(logic)}`,
  );
  assert.equal(
    outcome(() => reference.apply(logic, input)),
    theirs,
    `json-logic-js on ${JSON.stringify(logic)}`,
  );
};

test('hardening: var reads own properties only (json-logic-js reaches inherited ones)', () => {
  assert.is(applyLogic({ var: 'constructor' }, {}), null);
  assert.is(reference.apply({ var: 'constructor' }, {}), Object);
  assert.is(applyLogic({ var: 'n.toFixed' }, { n: 1 }), null);
  assert.type(reference.apply({ var: 'n.toFixed' }, { n: 1 }), 'function');
  assert.is(applyLogic({ var: 's.toUpperCase' }, { s: 'x' }), null);
  assert.type(reference.apply({ var: 's.toUpperCase' }, { s: 'x' }), 'function');
  // A string's own properties are read as json-logic-js reads them.
  differs({ var: 's.length' }, { s: 'abcd' }, { value: 4 }, { value: 4 });
});

test('hardening: var reaches a key holding dots; the longest own key wins', () => {
  const labels = { labels: { 'mesh.module': 'gitea' } };
  differs({ var: 'labels.mesh.module' }, labels, { value: 'gitea' }, { value: null });
  differs({ var: 'a.b' }, { 'a.b': 1, a: { b: 2 } }, { value: 1 }, { value: 2 });
  // Where no key holds a dot, both read the same.
  differs({ var: 'a.b' }, { a: { b: 2 } }, { value: 2 }, { value: 2 });
});

test('hardening: log is refused (it prints to stdout); every is refused at load', () => {
  assert.match(checkLogic({ log: 'x' })[0]!.message, /unknown operator 'log'/);
  assert.throws(() => applyLogic({ log: 'x' }, {}), /Unrecognized operation log/);
  assert.match(checkLogic({ every: [[1], 1] })[0]!.message, /operator 'every'/);
});

test.run();
