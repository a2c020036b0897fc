import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BudgetExceeded, MAX_STEPS, MAX_VALUE_ITEMS, withBudget } from '../../src/policy/budget.js';
import { applyLogic } from '../../src/policy/logic.js';
import { CUSTOM_OPERATORS } from '../../src/policy/operators.js';

const sv = (digest: string, shape = '<5 chars>') => ({ digest: `hmac-sha256:${digest}`, shape });

// ---------------------------------------------------------------- env_diff

const envDiff = suite('env_diff');

envDiff('lists keys with another digest and keys the container lacks, sorted; held-only keys ignored', () => {
  const data = {
    held: { PATH: sv('p'), ZED: sv('z'), DATABASE_URL: sv('old'), SAME: sv('s') },
    composed: { ZED: sv('z2'), SAME: sv('s'), DATABASE_URL: sv('new'), ADDED: sv('a') },
  };
  assert.equal(applyLogic({ env_diff: [{ var: 'held' }, { var: 'composed' }] }, data), [
    'ADDED',
    'DATABASE_URL',
    'ZED',
  ]);
});

envDiff('only the digest counts: a different shape with the same digest is no difference', () => {
  const data = { held: { A: sv('x', '<3 chars>') }, composed: { A: sv('x', '<9 chars>') } };
  assert.equal(applyLogic({ env_diff: [{ var: 'held' }, { var: 'composed' }] }, data), []);
});

envDiff('a held key reached only through the prototype counts as missing', () => {
  const data = { held: {}, composed: { constructor: sv('c') } };
  assert.equal(applyLogic({ env_diff: [{ var: 'held' }, { var: 'composed' }] }, data), ['constructor']);
});

envDiff('no held env: every composed key differs; no composed env: nothing', () => {
  const composed = { B: sv('b'), A: sv('a') };
  assert.equal(applyLogic({ env_diff: [{ var: 'held' }, { var: 'composed' }] }, { held: null, composed }), ['A', 'B']);
  assert.equal(
    applyLogic({ env_diff: [{ var: 'held' }, { var: 'composed' }] }, { held: composed, composed: null }),
    [],
  );
});

envDiff('several readings: a key is listed only when every reading names it and the held value matches none', () => {
  const held = { SAME: sv('s'), QUOTED: sv('literal'), GONE_EVERYWHERE: sv('g') };
  const docker = { SAME: sv('s'), QUOTED: sv('literal'), ONLY_DOCKER: sv('d'), BOTH: sv('b1') };
  const compose = { SAME: sv('s'), QUOTED: sv('unquoted'), BOTH: sv('b2'), ONLY_COMPOSE: sv('c') };
  const logic = { env_diff: [{ var: 'held' }, { var: 'docker' }, { var: 'podman' }, { var: 'compose' }] };
  // QUOTED matches the literal reading: no drift. ONLY_*: one reading does not name it. BOTH: differs in both.
  assert.equal(applyLogic(logic, { held, docker, podman: docker, compose }), ['BOTH']);
  // Docker's and Podman's readings are often one map: given twice, it counts as it does once.
  assert.equal(
    applyLogic(logic, { held, docker, podman: docker, compose }),
    applyLogic(logic, { held, docker, podman: structuredClone(docker), compose }),
  );
  // Null readings are skipped; one reading alone lists what it names.
  assert.equal(applyLogic(logic, { held, docker: null, podman: null, compose }), ['BOTH', 'ONLY_COMPOSE', 'QUOTED']);
});

envDiff.run();

// The evaluation budget (src/policy/budget.ts): env_diff and get charge what they visit, not the maps they are given.
const envDiffBudget = suite('env_diff and get within the evaluation budget');

const bigEnv = (keys: number) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`K${i}`, sv(String(i))]));

envDiffBudget('env_diff spends a step per key it compares: repeated over a big map, the rule stops', () => {
  const env = bigEnv(Math.ceil(MAX_STEPS / 3));
  const once = { env_diff: [{ var: 'held' }, { var: 'composed' }] };
  // Once is within the budget (nothing differs)…
  assert.equal(
    withBudget(() => applyLogic(once, { held: env, composed: env })),
    [],
  );
  // …four times is not: each call pays for its keys again.
  assert.throws(
    () => withBudget(() => applyLogic({ merge: [once, once, once, once] }, { held: env, composed: env })),
    (e: unknown) => e instanceof BudgetExceeded && /evaluation steps/.test(e.message),
  );
});

envDiffBudget('env_diff measures a digest that is not a plain value before comparing it deeply', () => {
  const huge = Array.from({ length: MAX_VALUE_ITEMS + 1 }, () => 0);
  const data = { held: { A: { digest: huge } }, composed: { A: { digest: [...huge] } } };
  assert.throws(
    () => withBudget(() => applyLogic({ env_diff: [{ var: 'held' }, { var: 'composed' }] }, data)),
    (e: unknown) => e instanceof BudgetExceeded && /an argument of env_diff/.test(e.message),
  );
});

envDiffBudget('get is one lookup whatever the map holds, and measures its key', () => {
  const env = bigEnv(MAX_STEPS * 2);
  assert.equal(
    withBudget(() => applyLogic({ get: [{ var: 'env' }, 'K7'] }, { env })),
    sv('7'),
  );
  const key = Array.from({ length: MAX_VALUE_ITEMS + 1 }, () => 'k');
  assert.throws(
    () => withBudget(() => applyLogic({ get: [{ var: 'env' }, { var: 'key' }] }, { env, key })),
    (e: unknown) => e instanceof BudgetExceeded && /an argument of get/.test(e.message),
  );
});

envDiffBudget.run();

// ---------------------------------------------------------------- all_equal_to vs all

const every = suite('all_equal_to');

every('all_equal_to over an empty list is true, while json-logic all over an empty list is false', () => {
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, true] }, { xs: [] }), true);
  assert.is(applyLogic({ all: [{ var: 'xs' }, { var: '' }] }, { xs: [] }), false);
});

every('all_equal_to compares each item with the value', () => {
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, '127.0.0.1'] }, { xs: ['127.0.0.1', '127.0.0.1'] }), true);
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, '127.0.0.1'] }, { xs: ['127.0.0.1', '0.0.0.0'] }), false);
  // deep equality, not loose equality
  assert.is(applyLogic({ all_equal_to: [{ var: 'xs' }, 1] }, { xs: ['1'] }), false);
});

every.run();

// ---------------------------------------------------------------- list operators

const lists = suite('difference / intersection');

lists('difference keeps the order of A and drops repeats', () => {
  assert.equal(applyLogic({ difference: [[3, 1, 3, 2, 1, 4], [2]] }, {}), [3, 1, 4]);
  assert.equal(applyLogic({ difference: [{ var: 'a' }, { var: 'b' }] }, { a: ['x', 'y'], b: ['x', 'y'] }), []);
});

lists('intersection keeps the order of A and drops repeats', () => {
  assert.equal(
    applyLogic(
      {
        intersection: [
          [3, 1, 3, 2, 1],
          [1, 3, 9],
        ],
      },
      {},
    ),
    [3, 1],
  );
  assert.equal(applyLogic({ intersection: [[1, 2], []] }, {}), []);
});

lists('items are compared deeply', () => {
  const data = { a: [{ port: 80 }, { port: 443 }], b: [{ port: 443 }] };
  assert.equal(applyLogic({ difference: [{ var: 'a' }, { var: 'b' }] }, data), [{ port: 80 }]);
  assert.equal(applyLogic({ intersection: [{ var: 'a' }, { var: 'b' }] }, data), [{ port: 443 }]);
});

lists('null stands for an empty list', () => {
  assert.equal(applyLogic({ difference: [{ var: 'a' }, { var: 'missing' }] }, { a: [1, 2] }), [1, 2]);
  assert.equal(applyLogic({ intersection: [{ var: 'missing' }, { var: 'a' }] }, { a: [1, 2] }), []);
});

lists.run();

// ---------------------------------------------------------------- get, pluck, keys, count, join, starts_with

const misc = suite('get / pluck / keys / count / join / starts_with');

misc('get takes a dotted key whole, with default', () => {
  const data = { labels: { 'mesh.module': 'gitea' } };
  assert.is(applyLogic({ get: [{ var: 'labels' }, 'mesh.module'] }, data), 'gitea');
  assert.is(applyLogic({ get: [{ var: 'labels' }, 'mesh.resource', '(none)'] }, data), '(none)');
  assert.is(applyLogic({ get: [{ var: 'labels' }, 'mesh.resource'] }, data), null);
});

misc('get reads own properties only', () => {
  assert.is(applyLogic({ get: [{ var: 'o' }, 'constructor', 'd'] }, { o: {} }), 'd');
  assert.is(applyLogic({ get: [{ var: 'o' }, 'toString'] }, { o: {} }), null);
});

misc('get with a key computed from data (as rule MA1001 does with item)', () => {
  const data = { env: { A: sv('a'), B: sv('b') }, item: 'B' };
  assert.equal(applyLogic({ get: [{ var: 'env' }, { var: 'item' }, '(unset)'] }, data), sv('b'));
  assert.is(applyLogic({ get: [{ var: 'env' }, 'C', '(unset)'] }, data), '(unset)');
});

misc('pluck takes a key from each object, skipping items without it', () => {
  const data = { list: [{ id: 'a', 'mesh.x': 1 }, { other: 1 }, 'not-an-object', { id: 'c' }, { id: null }] };
  assert.equal(applyLogic({ pluck: [{ var: 'list' }, 'id'] }, data), ['a', 'c', null]);
  assert.equal(applyLogic({ pluck: [{ var: 'list' }, 'mesh.x'] }, data), [1]);
});

misc('keys are own keys, sorted; anything but an object gives []', () => {
  assert.equal(applyLogic({ keys: [{ var: 'o' }] }, { o: { b: 1, a: 2, 'c.d': 3 } }), ['a', 'b', 'c.d']);
  assert.equal(applyLogic({ keys: [{ var: 'o' }] }, { o: ['x'] }), []);
  assert.equal(applyLogic({ keys: [{ var: 'o' }] }, { o: null }), []);
});

misc("count of a list, of an object's keys, of null", () => {
  assert.is(applyLogic({ count: [{ var: 'xs' }] }, { xs: [1, 2, 3] }), 3);
  assert.is(applyLogic({ count: [{ var: 'o' }] }, { o: { a: 1, b: 2 } }), 2);
  assert.is(applyLogic({ count: [{ var: 'missing' }] }, {}), 0);
});

misc('join uses ", " by default, the separator given otherwise, JSON for non-strings', () => {
  assert.is(applyLogic({ join: [{ var: 'xs' }] }, { xs: ['a', 'b', 'c'] }), 'a, b, c');
  assert.is(applyLogic({ join: [{ var: 'xs' }, ' | '] }, { xs: ['a', 'b'] }), 'a | b');
  assert.is(applyLogic({ join: [{ var: 'xs' }, ','] }, { xs: ['a', 1, { p: 2 }] }), 'a,1,{"p":2}');
  assert.is(applyLogic({ join: [{ var: 'missing' }, ','] }, {}), '');
});

misc('starts_with is true only for a string with that prefix', () => {
  assert.is(applyLogic({ starts_with: [{ var: 's' }, '/etc/mesh/'] }, { s: '/etc/mesh/gitea.env' }), true);
  assert.is(applyLogic({ starts_with: [{ var: 's' }, '/etc/mesh/'] }, { s: '/etc/meshy' }), false);
  assert.is(applyLogic({ starts_with: [{ var: 's' }, '1'] }, { s: 123 }), false);
  assert.is(applyLogic({ starts_with: [{ var: 's' }, 'x'] }, {}), false);
});

misc('=== is strict', () => {
  assert.is(applyLogic({ '===': [{ var: 'a' }, 1] }, { a: '1' }), false);
  assert.is(applyLogic({ '==': [{ var: 'a' }, 1] }, { a: '1' }), true);
});

misc('every custom operator is documented with its own name in its usage', () => {
  const names = CUSTOM_OPERATORS.map((o) => o.name);
  assert.equal(names.length, new Set(names).size, 'operator names are unique');
  for (const op of CUSTOM_OPERATORS) {
    assert.ok(op.usage.includes(`"${op.name}"`), `usage of ${op.name}: ${op.usage}`);
    assert.ok(op.doc.length > 0, `doc of ${op.name}`);
  }
});

misc.run();

// ---------------------------------------------------------------- mode_beyond, path_within

const modes = suite('mode_beyond');

modes('the bits a mode grants beyond the allowed ones; stricter or equal is null; not octal text is null', () => {
  const beyond = (mode: unknown, allowed: string) => applyLogic({ mode_beyond: [{ var: 'm' }, allowed] }, { m: mode });
  assert.is(beyond('0666', '0644'), '0022');
  assert.is(beyond('0660', '0660'), null);
  assert.is(beyond('0600', '0644'), null, 'stricter than asked is no finding (docker-bench-security #459)');
  assert.is(beyond('0466', '0644'), '0022', 'compared bit by bit, not as decimal numbers (466 <= 644)');
  assert.is(beyond('4755', '0755'), '4000', 'setuid counts');
  assert.is(beyond(null, '0644'), null);
  assert.is(beyond('rw-r--r--', '0644'), null);
});
modes.run();

const within = suite('path_within');

within('whole components only; "/" holds itself alone; paths normalised', () => {
  const folders = ['/', '/etc', '/proc'];
  const at = (path: unknown) => applyLogic({ path_within: [{ var: 'p' }, folders] }, { p: path });
  assert.is(at('/etc'), '/etc');
  assert.is(at('/etc/ssl/private'), '/etc');
  assert.is(at('/etc/'), '/etc');
  assert.is(at('/etcd/data'), null);
  assert.is(at('/'), '/');
  assert.is(at('//'), '/');
  assert.is(at('/srv/app/../../proc/1'), '/proc');
  assert.is(at('/srv/data'), null);
  assert.is(at('relative/etc'), null);
  assert.is(at(null), null);
});
within.run();
