import { test, suite } from 'uvu';
import * as assert from 'uvu/assert';
import { applyLogic, checkLogic } from '../../src/policy/logic.js';

// ---------------------------------------------------------------- checkLogic

const check = suite('checkLogic');

check('a single-key object literal is rejected as an unknown operator, with its JSON pointer', () => {
  const problems = checkLogic({ and: [{ var: 'a' }, { '==': [{ var: 'b' }, { shape: 'x' }] }] });
  assert.is(problems.length, 1);
  assert.is(problems[0]!.path, '/and/1/==/1');
  assert.match(problems[0]!.message, /unknown operator 'shape'/);
});

check('a single-key object literal at the top is reported at the empty pointer', () => {
  const problems = checkLogic({ shape: 'x' });
  assert.equal(
    problems.map((p) => p.path),
    [''],
  );
  assert.match(problems[0]!.message, /shape/);
});

check('a multi-key object literal is rejected, naming its keys', () => {
  const problems = checkLogic({ '===': [{ var: 'env.A' }, { digest: 'hmac-sha256:00', shape: '<3 chars>' }] });
  assert.is(problems.length, 1);
  assert.is(problems[0]!.path, '/===/1');
  assert.match(problems[0]!.message, /digest/);
  assert.match(problems[0]!.message, /shape/);
});

check('an unknown operator is rejected, even deep inside control operators', () => {
  const problems = checkLogic({ if: [{ var: 'x' }, { map: [{ var: 'xs' }, { frobnicate: [1] }] }, null] });
  assert.equal(
    problems.map((p) => p.path),
    ['/if/1/map/1'],
  );
  assert.match(problems[0]!.message, /unknown operator 'frobnicate'/);
});

check('every problem is reported, not only the first', () => {
  const problems = checkLogic({ or: [{ nope: 1 }, { var: 'ok' }, { a: 1, b: 2 }] });
  assert.equal(
    problems.map((p) => p.path),
    ['/or/0', '/or/2'],
  );
});

check('the path is prefixed by the `at` argument', () => {
  const problems = checkLogic({ '!': { bogus: [] } }, '/rules/3/assert');
  assert.equal(
    problems.map((p) => p.path),
    ['/rules/3/assert/!'],
  );
});

check('an operator name containing "/" is escaped as ~1 in the pointer', () => {
  const problems = checkLogic({ '/': [{ var: 'a' }, { x: 1 }] });
  assert.equal(
    problems.map((p) => p.path),
    ['/~1/1'],
  );
});

check('nested valid expressions with built-in, control and custom operators pass', () => {
  const expr = {
    and: [
      { '>': [{ count: [{ env_diff: [{ var: 'container.env' }, { var: 'source.env' }] }] }, 0] },
      { all_equal_to: [{ pluck: [{ var: 'ports' }, 'hostIp'] }, '127.0.0.1'] },
      { if: [{ starts_with: [{ var: 'name' }, 'mesh-'] }, { get: [{ var: 'labels' }, 'mesh.module', '-'] }, false] },
      { some: [{ var: 'xs' }, { in: [{ var: '' }, { keys: [{ var: 'labels' }] }] }] },
      { '!!': [{ join: [{ difference: [[1, 2], { intersection: [[1], [1]] }] }, ','] }] },
      { '===': [{ cat: ['a', { var: 'b' }] }, 'ab'] },
    ],
  };
  assert.equal(checkLogic(expr), []);
});

check('scalars and arrays of scalars are fine', () => {
  assert.equal(checkLogic(true), []);
  assert.equal(checkLogic(null), []);
  assert.equal(checkLogic('text'), []);
  assert.equal(checkLogic([1, 'a', [false]]), []);
});

check('`log` is not an operator any more', () => {
  const problems = checkLogic({ and: [true, { log: 'hello' }] });
  assert.equal(
    problems.map((p) => p.path),
    ['/and/1'],
  );
  assert.match(problems[0]!.message, /unknown operator 'log'/);
});

check.run();

// ---------------------------------------------------------------- applyLogic / var

const vars = suite('applyLogic var');

vars('var does not read inherited properties', () => {
  assert.is(applyLogic({ var: 'constructor' }, {}), null);
  assert.is(applyLogic({ var: '__proto__' }, {}), null);
  assert.is(applyLogic({ var: 'hasOwnProperty' }, {}), null);
  assert.is(applyLogic({ var: 'a.toString' }, { a: 'x' }), null);
  assert.is(applyLogic({ var: 'a.toString' }, { a: {} }), null);
  assert.is(applyLogic({ var: 'a.constructor.name' }, { a: {} }), null);
});

vars('var still reads an own property that happens to be called constructor', () => {
  assert.is(applyLogic({ var: 'constructor' }, { constructor: 'own' }), 'own');
});

vars('an inherited property falls back to the default', () => {
  assert.is(applyLogic({ var: ['constructor', 'dflt'] }, {}), 'dflt');
});

vars('dotted keys are reachable', () => {
  const data = { labels: { 'mesh.module': 'gitea', 'mesh.resource': 'gitea.server' } };
  assert.is(applyLogic({ var: 'labels.mesh.module' }, data), 'gitea');
  assert.is(applyLogic({ var: 'labels.mesh.resource' }, data), 'gitea.server');
  assert.is(applyLogic({ var: 'labels.mesh.other' }, data), null);
});

vars('a dotted key at the top and a dotted key further down both resolve', () => {
  assert.is(applyLogic({ var: 'a.b.c' }, { 'a.b': { c: 3 } }), 3);
  assert.is(applyLogic({ var: 'a.b.c' }, { a: { 'b.c': 4 } }), 4);
});

vars('when the longest key leads nowhere, a shorter split is tried', () => {
  assert.is(applyLogic({ var: 'a.b.c' }, { 'a.b': {}, a: { b: { c: 5 } } }), 5);
});

vars('plain nested paths and array indexes', () => {
  assert.is(applyLogic({ var: 'container.state.running' }, { container: { state: { running: true } } }), true);
  assert.is(applyLogic({ var: 'xs.1' }, { xs: ['a', 'b'] }), 'b');
  assert.is(applyLogic({ var: 'a.b.c.d' }, { a: { b: 1 } }), null);
});

vars('default values for missing paths, not for present ones', () => {
  assert.is(applyLogic({ var: ['missing.path', 'fallback'] }, { other: 1 }), 'fallback');
  assert.is(applyLogic({ var: ['present', 'fallback'] }, { present: 0 }), 0);
  assert.is(applyLogic({ var: ['present', 'fallback'] }, { present: false }), false);
  assert.is(applyLogic({ var: 'missing' }, {}), null);
});

vars('empty var is the whole data, also inside map', () => {
  assert.equal(applyLogic({ var: '' }, { a: 1 }), { a: 1 });
  assert.equal(applyLogic({ map: [{ var: 'xs' }, { '*': [{ var: '' }, 2] }] }, { xs: [1, 2, 3] }), [2, 4, 6]);
  assert.equal(applyLogic({ map: [{ var: 'items' }, { var: 'n' }] }, { items: [{ n: 1 }, { n: 2 }] }), [1, 2]);
});

vars.run();

// ---------------------------------------------------------------- log is gone

test('applyLogic throws on `log` and prints nothing to stdout', () => {
  const writes: string[] = [];
  const originalWrite = process.stdout.write.bind(process.stdout);
  const originalLog = console.log;
  process.stdout.write = (chunk: unknown) => {
    writes.push(String(chunk));
    return true;
  };
  console.log = (...args: unknown[]) => {
    writes.push(args.map(String).join(' '));
  };
  let threw = false;
  try {
    applyLogic({ log: 'secret-in-log' }, {});
  } catch {
    threw = true;
  } finally {
    process.stdout.write = originalWrite;
    console.log = originalLog;
  }
  assert.ok(threw, 'applyLogic({log: ...}) should throw');
  assert.equal(writes, []);
});

test.run();
