import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ledgerRecord } from '../../src/collect/ledger-entries.js';
import { createSafeValueMaker } from '../../src/secret/value.js';

const safe = createSafeValueMaker();
const DIGEST = 'sha256:' + 'ab'.repeat(32);

const validEntry = {
  id: 'gitea.server',
  type: 'container',
  target: 'gitea',
  origin: 'declared',
  module: 'gitea',
  holds: [2999, 2222],
  digest: DIGEST,
  sources: ['/etc/mesh/gitea/gitea.env'],
  applied_at: '2024-05-01T10:00:00Z',
};

test('a valid entry is kept whole with its line', () => {
  const r = ledgerRecord(validEntry, 7, safe);
  assert.is(r.valid, true);
  assert.equal(r.errors, []);
  assert.is(r.line, 7);
  assert.equal(r.entry, validEntry);
});

test('a valid file entry with an absolute target', () => {
  const r = ledgerRecord({ id: 'gitea.env', type: 'file', target: '/etc/mesh/gitea/gitea.env' }, 1, safe);
  assert.is(r.valid, true);
  assert.is(r.entry.target, '/etc/mesh/gitea/gitea.env');
});

test('a missing target makes the entry invalid, names target, and keeps the id', () => {
  const r = ledgerRecord({ id: 'gitea.server', type: 'container' }, 3, safe);
  assert.is(r.valid, false);
  assert.ok(
    r.errors.some((e) => e.includes('target')),
    JSON.stringify(r.errors),
  );
  assert.is(r.entry.id, 'gitea.server');
  assert.is(r.entry.type, 'container');
  assert.is(r.line, 3);
});

test('an unknown origin makes the entry invalid and is not kept', () => {
  const r = ledgerRecord({ ...validEntry, origin: 'adopted' }, 1, safe);
  assert.is(r.valid, false);
  assert.ok(
    r.errors.some((e) => e.includes('origin')),
    JSON.stringify(r.errors),
  );
  assert.is(r.entry.origin, undefined);
  assert.is(r.entry.id, 'gitea.server');
  assert.is(r.entry.target, 'gitea');
});

test('origin found is accepted', () => {
  assert.is(ledgerRecord({ ...validEntry, origin: 'found' }, 1, safe).valid, true);
});

test('a file target that is not absolute is invalid; a container target need not be a path', () => {
  const file = ledgerRecord({ id: 'gitea.env', type: 'file', target: 'etc/mesh/gitea.env' }, 1, safe);
  assert.is(file.valid, false);
  assert.ok(
    file.errors.some((e) => e.includes('target')),
    JSON.stringify(file.errors),
  );
  assert.is(file.entry.id, 'gitea.env');
  assert.is(ledgerRecord({ id: 'c', type: 'container', target: 'not-a-path' }, 1, safe).valid, true);
});

test('bad holds, digest, sources and applied_at are each invalid and dropped', () => {
  const cases: [string, unknown][] = [
    ['holds', [0]],
    ['holds', [70000]],
    ['holds', ['80']],
    ['digest', 'md5:abc'],
    ['sources', ['relative/file.env']],
    ['applied_at', 'yesterday'],
  ];
  for (const [field, value] of cases) {
    const r = ledgerRecord({ id: 'x', type: 'container', target: 'x', [field]: value }, 1, safe);
    assert.is(r.valid, false, `${field}=${JSON.stringify(value)}`);
    assert.ok(
      r.errors.some((e) => e.includes(field)),
      `${field}: ${JSON.stringify(r.errors)}`,
    );
    assert.not.ok(Object.hasOwn(r.entry, field), `${field} should not be kept`);
    assert.is(r.entry.id, 'x');
  }
});

test('an entry that is not an object is invalid with an empty entry', () => {
  for (const raw of [null, 'gitea.server', 42, ['id', 'x'], true]) {
    const r = ledgerRecord(raw, 9, safe);
    assert.is(r.valid, false, JSON.stringify(raw));
    assert.is(r.line, 9);
    assert.equal(r.entry, {});
    assert.is(r.errors.length, 1);
    assert.match(r.errors[0]!, /object/);
  }
});

test('unknown extra fields are kept, with strings made secret-safe, also nested', () => {
  const raw = {
    ...validEntry,
    password: 'hunter2-very-secret',
    settings: { DATABASE_URL: 'postgresql://gitea:pw-inner-secret@:20000/gitea', replicas: 2 },
    list: ['token-in-a-list', 3, null, true],
  };
  const r = ledgerRecord(raw, 1, safe);
  assert.is(r.valid, true, 'unknown fields do not make an entry invalid');
  const extra = r.entry.extra as Record<string, unknown>;
  assert.equal(Object.keys(extra).sort(), ['list', 'password', 'settings']);
  assert.equal(extra['password'], safe('hunter2-very-secret'));
  const env = extra['settings'] as Record<string, unknown>;
  assert.equal(env['DATABASE_URL'], safe('postgresql://gitea:pw-inner-secret@:20000/gitea'));
  assert.equal((env['DATABASE_URL'] as { shape: string }).shape, 'postgresql://…@:20000/…');
  assert.is(env['replicas'], 2);
  assert.equal(extra['list'], [safe('token-in-a-list'), 3, null, true]);
  const json = JSON.stringify(r);
  for (const secret of ['hunter2-very-secret', 'pw-inner-secret', 'token-in-a-list']) {
    assert.not.ok(json.includes(secret), secret);
  }
});

test('an invalid entry keeps its extra fields secret-safe too', () => {
  const r = ledgerRecord({ id: 'x', type: 'file', note: 'raw-note-value' }, 1, safe);
  assert.is(r.valid, false);
  assert.not.ok(JSON.stringify(r).includes('raw-note-value'));
  assert.ok(r.entry.extra && Object.hasOwn(r.entry.extra, 'note'));
});

test('an entry without extra fields has no extra', () => {
  assert.not.ok(Object.hasOwn(ledgerRecord(validEntry, 1, safe).entry, 'extra'));
});

test('`env` declares the keys a container is given inline: a list of names, or a map whose values are never kept', () => {
  const listed = ledgerRecord({ ...validEntry, env: ['GOMAXPROCS', 'UMASK'] }, 1, safe);
  assert.is(listed.valid, true);
  assert.equal(listed.entry.env, ['GOMAXPROCS', 'UMASK']);
  const mapped = ledgerRecord({ ...validEntry, env: { UMASK: '022', TOKEN: 'tok-env-map-secret' } }, 1, safe);
  assert.is(mapped.valid, true);
  assert.equal(mapped.entry.env, ['TOKEN', 'UMASK']);
  assert.not.match(JSON.stringify(mapped), 'tok-env-map-secret');
  // A value written into the list by mistake: the entry is invalid, and the text is not kept or shown.
  const wrong = ledgerRecord({ ...validEntry, env: ['GOMAXPROCS=4', 'TOKEN=tok-list-secret'] }, 1, safe);
  assert.is(wrong.valid, false);
  assert.is(wrong.entry.env, undefined);
  assert.not.match(JSON.stringify(wrong), 'tok-list-secret');
  assert.match(wrong.errors.join('; '), 'env');
});
test.run();
