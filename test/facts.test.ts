import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SUBJECT_FIELD_DOCS, SUBJECT_FIELDS, type FieldDoc } from '../src/policy/fields.js';
import { formerTargets, historyNotes, withMemory } from '../src/facts/history.js';
import { buildSubjects } from '../src/facts/subjects.js';
import { parseSnapshot } from '../src/snapshot/load.js';
import type { Snapshot } from '../src/snapshot/types.js';
import { HostModel } from './support/host-model.js';
import { example } from './support/cli.js';

const load = (...p: string[]): Snapshot => parseSnapshot(JSON.parse(readFileSync(example(...p), 'utf8')), p.join('/'));

test('every subject offers exactly the fields SUBJECT_FIELDS documents (templates are checked against it)', () => {
  const sets = buildSubjects(load('demo', 'snapshot.json'), [load('demo', 'history', '2026-09-23T06-00-00Z.json')]);
  for (const [set, subjects] of Object.entries(sets)) {
    assert.ok(subjects.length > 0, `the demo has ${set}`);
    for (const s of subjects)
      assert.equal(Object.keys(s.data).sort(), [...SUBJECT_FIELDS[set as keyof typeof SUBJECT_FIELDS]].sort(), set);
  }
});

test('an object of fixed shape has exactly the fields its documentation lists (rules reading past its head are checked against them)', () => {
  const sets = buildSubjects(load('demo', 'snapshot.json'), [load('demo', 'history', '2026-09-23T06-00-00Z.json')]);
  const compare = (value: unknown, docs: Readonly<Record<string, FieldDoc>>, at: string, seen: Set<string>) => {
    for (const [name, doc] of Object.entries(docs)) {
      const inner = (value as Record<string, unknown>)[name];
      if (typeof doc === 'string' || inner === null || inner === undefined) continue;
      seen.add(`${at}${name}`);
      assert.equal(Object.keys(inner).sort(), Object.keys(doc.fields).sort(), `${at}${name}`);
      compare(inner, doc.fields, `${at}${name}.`, seen);
    }
  };
  const seen = new Set<string>();
  for (const [set, subjects] of Object.entries(sets)) {
    for (const s of subjects)
      compare(s.data, SUBJECT_FIELD_DOCS[set as keyof typeof SUBJECT_FIELD_DOCS], `${set}:`, seen);
  }
  // The demo shows each of them at least once, so none goes unchecked.
  for (const path of [
    'containers:mesh',
    'containers:endpoints',
    'ledger:target_container',
    'ledger:target_file',
    'container_sources:container',
    'container_sources:container.mesh',
    'container_sources:source',
    'mounts:container',
    'mounts:host_file',
  ]) {
    assert.ok(seen.has(path), path);
  }
});

test('the example snapshots validate against the snapshot schema', () => {
  for (const p of [
    ['045', 'snapshot.json'],
    ['097', 'snapshot.json'],
    ['clean', 'snapshot.json'],
    ['demo', 'snapshot.json'],
  ])
    load(...p);
});

test('history: every former target of an id still on the host, when it was last claimed and when it moved', () => {
  const before = new HostModel('n1', '2026-09-20T00:00:00Z')
    .ledger([{ id: 'a.server', type: 'container', target: 'a-old' }])
    .build();
  const middle = new HostModel('n1', '2026-09-21T00:00:00Z')
    .ledger([{ id: 'a.server', type: 'container', target: 'a-mid' }])
    .build();
  const otherHost = new HostModel('n2', '2026-09-21T00:00:00Z')
    .ledger([{ id: 'a.server', type: 'container', target: 'elsewhere' }])
    .build();
  const now = new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({ name: 'a-old' })
    .container({ name: 'a-mid' })
    .container({ name: 'a-new' })
    .ledger([{ id: 'a.server', type: 'container', target: 'a-new' }])
    .build();
  assert.equal(formerTargets(now, [before, middle, otherHost]), [
    {
      id: 'a.server',
      type: 'container',
      target: 'a-mid',
      last_seen: '2026-09-21T00:00:00Z',
      changed_at: '2026-09-22T00:00:00Z',
      current_target: 'a-new',
    },
    {
      id: 'a.server',
      type: 'container',
      target: 'a-old',
      last_seen: '2026-09-20T00:00:00Z',
      changed_at: '2026-09-21T00:00:00Z',
      current_target: 'a-new',
    },
  ]);
});

test('history: a former target gone from the host ends its memory; one not known to be gone (engine not read) does not', () => {
  const before = new HostModel('n1', '2026-09-20T00:00:00Z')
    .ledger([{ id: 'a.server', type: 'container', target: 'a-old' }])
    .build();
  const gone = new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({ name: 'a-new' })
    .ledger([{ id: 'a.server', type: 'container', target: 'a-new' }])
    .build();
  assert.equal(formerTargets(gone, [before]), []);
  const engineDown = {
    ...gone,
    docker: null,
    containers: [],
    problems: [{ source: 'docker' as const, message: 'cannot reach the Docker engine' }],
  };
  assert.equal(
    formerTargets(engineDown, [before]).map((f) => f.target),
    ['a-old'],
  );
});

test('history: the memory carried in a snapshot outlives the pruned history it came from (keep 1)', () => {
  const night1 = new HostModel('n1', '2026-09-20T00:00:00Z')
    .container({ name: 'a-old' })
    .ledger([{ id: 'a.server', type: 'container', target: 'a-old' }])
    .build();
  const night2 = withMemory(
    new HostModel('n1', '2026-09-21T00:00:00Z')
      .container({ name: 'a-old' })
      .container({ name: 'a-new' })
      .ledger([{ id: 'a.server', type: 'container', target: 'a-new' }])
      .build(),
    [night1],
  );
  // Night 3 sees only night 2 (night 1 is pruned), and night 4 only night 3: the move is still known.
  const night3 = withMemory(
    new HostModel('n1', '2026-09-22T00:00:00Z')
      .container({ name: 'a-old' })
      .container({ name: 'a-new' })
      .ledger([{ id: 'a.server', type: 'container', target: 'a-new' }])
      .build(),
    [night2],
  );
  const night4 = new HostModel('n1', '2026-09-23T00:00:00Z')
    .container({ name: 'a-old' })
    .container({ name: 'a-new' })
    .ledger([{ id: 'a.server', type: 'container', target: 'a-new' }])
    .build();
  assert.equal(formerTargets(night4, [night3]), [
    {
      id: 'a.server',
      type: 'container',
      target: 'a-old',
      last_seen: '2026-09-20T00:00:00Z',
      changed_at: '2026-09-21T00:00:00Z',
      current_target: 'a-new',
    },
  ]);
  assert.is(night3.memory?.formerTargets[0]?.lastSeenPresent, '2026-09-22T00:00:00Z');
  // A night with the ledger not read carries the memory forward unchanged.
  const ledgerDown = withMemory(
    new HostModel('n1', '2026-09-24T00:00:00Z')
      .container({ name: 'a-old' })
      .ledgerUnavailable('ledger: EACCES')
      .build(),
    [night3],
  );
  assert.equal(
    ledgerDown.memory?.formerTargets.map((r) => [r.id, r.target]),
    [['a.server', 'a-old']],
  );
});

test('history: snapshots from the future (a clock that went back) are used in the order given, with a note', () => {
  const before = new HostModel('n1', '2026-09-25T00:00:00Z')
    .container({ name: 'a-old' })
    .ledger([{ id: 'a.server', type: 'container', target: 'a-old' }])
    .build();
  const now = new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({ name: 'a-old' })
    .container({ name: 'a-new' })
    .ledger([{ id: 'a.server', type: 'container', target: 'a-new' }])
    .build();
  assert.equal(
    formerTargets(now, [before]).map((f) => f.target),
    ['a-old'],
  );
  assert.match(historyNotes(now, [before])[0] ?? '', /taken after this one/);
  assert.equal(historyNotes(now, []), []);
});

test('a container is claimed by name or id, never by a file entry; mesh labels and exposure are read', () => {
  const snap = new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({
      name: 'web',
      network: 'bridge',
      publish: ['0.0.0.0:8080:80/tcp', '127.0.0.1:8443:443/tcp'],
      labels: { 'mesh.resource': 'web.server' },
    })
    .container({
      name: 'db',
      network: 'host',
      proc: { listening: [{ protocol: 'tcp', address: '127.0.0.1', port: 5432 }] },
    })
    .ledger([
      { id: 'x.file', type: 'file', target: '/etc/mesh/web' },
      { id: 'db.server', type: 'container', target: 'db' },
    ])
    .build();
  const byName = Object.fromEntries(buildSubjects(snap).containers.map((s) => [s.about.id, s.data]));
  assert.is(byName['web']!['claimed'], false);
  assert.is(byName['web']!['mesh_labelled'], true);
  assert.is(byName['web']!['exposed'], true);
  assert.equal(byName['web']!['exposed_endpoints'], ['0.0.0.0:8080/tcp']);
  assert.equal(byName['web']!['open_ports'], [8080, 8443]);
  assert.is(byName['db']!['claimed'], true);
  // On the host network but listening on loopback only: on the host network, not on all interfaces.
  assert.equal(byName['db']!['exposed_endpoints'], []);
  assert.equal(byName['db']!['open_ports'], [5432]);
});

test('exposure: what a listening socket really reaches (all interfaces, one address, loopback only, not read)', () => {
  const snap = new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({
      name: 'wild',
      network: 'host',
      proc: {
        listening: [
          { protocol: 'tcp', address: '0.0.0.0', port: 80 },
          { protocol: 'tcp', address: '127.0.0.1', port: 81 },
        ],
      },
    })
    .container({
      name: 'one',
      network: 'host',
      proc: { listening: [{ protocol: 'tcp6', address: '2001:db8::5', port: 80 }] },
    })
    .container({
      name: 'lo',
      network: 'host',
      proc: {
        listening: [
          { protocol: 'tcp', address: '127.0.0.1', port: 5432 },
          { protocol: 'tcp6', address: '::1', port: 5432 },
        ],
      },
    })
    .container({ name: 'quiet', network: 'host', proc: { listening: [] } })
    .container({ name: 'unread', network: 'host', proc: 'not root' })
    .container({ name: 'lo-published', network: 'bridge', publish: ['127.0.0.1:8443:443/tcp'] })
    .build();
  const byName = Object.fromEntries(buildSubjects(snap).containers.map((s) => [s.about.id, s.data]));
  const facts = (n: string) => [byName[n]!['exposure'], byName[n]!['exposed']];
  assert.equal(facts('wild'), ['all-interfaces', true]);
  assert.equal(byName['wild']!['endpoints'], {
    all_interfaces: ['0.0.0.0:80/tcp'],
    address: [],
    loopback: ['127.0.0.1:81/tcp'],
  });
  assert.equal(facts('one'), ['address', true]);
  assert.equal(byName['one']!['exposed_endpoints'], ['[2001:db8::5]:80/tcp6']);
  assert.equal(facts('lo'), ['loopback', false]);
  assert.equal(byName['lo']!['endpoints'], {
    all_interfaces: [],
    address: [],
    loopback: ['127.0.0.1:5432/tcp', '[::1]:5432/tcp6'],
  });
  assert.equal(facts('quiet'), ['none', false]);
  assert.equal(facts('lo-published'), ['loopback', false]);
  // Unknown is never absent: sockets not read on the host network may be exposed, as before.
  assert.equal(facts('unread'), ['unknown', true]);
});

test('a restart loop as each engine shows it: between restarts, and running again for a moment; a stop by hand is none', () => {
  const always = { RestartPolicy: { Name: 'always', MaximumRetryCount: 0 } };
  const onFailure3 = { RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 } };
  // Podman 4 between two restarts: `stopped` (exited, not yet cleaned up), never `restarting`.
  const podmanBetween = { Status: 'stopped', Running: false, ExitCode: 1, Pid: 0 };
  const snap = new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({ name: 'docker-between', status: 'restarting', hostConfig: always, state: { ExitCode: 1 } })
    .container({ name: 'podman-between', status: 'exited', restartCount: 37, hostConfig: always, state: podmanBetween })
    .container({ name: 'first-exit', status: 'exited', restartCount: 0, hostConfig: always, state: podmanBetween })
    .container({ name: 'no-policy', status: 'exited', restartCount: 4, state: podmanBetween })
    .container({
      name: 'retries-spent',
      status: 'exited',
      restartCount: 3,
      hostConfig: onFailure3,
      state: podmanBetween,
    })
    .container({
      name: 'stopped-by-hand',
      status: 'exited',
      restartCount: 12,
      hostConfig: always,
      state: { ExitCode: 137 },
    })
    .container({ name: 'up-again', restartCount: 9, hostConfig: always, state: { StartedAt: '2026-09-21T23:59:58Z' } })
    .container({
      name: 'up-in-scan',
      restartCount: 9,
      hostConfig: always,
      state: { StartedAt: '2026-09-22T00:00:03Z' },
    })
    .container({ name: 'up-long', restartCount: 9, hostConfig: always, state: { StartedAt: '2026-09-21T20:00:00Z' } })
    .container({ name: 'once', restartCount: 1, hostConfig: always, state: { StartedAt: '2026-09-21T23:59:58Z' } })
    .container({ name: 'no-start', restartCount: 5, hostConfig: always, state: { StartedAt: '0001-01-01T00:00:00Z' } })
    .build();
  const subjects = buildSubjects(snap).containers;
  const restarting = Object.fromEntries(
    subjects.map((s) => [
      s.about.id,
      (s.unknown ?? []).some((u) => u.field === 'restarting') ? 'unknown' : s.data.restarting,
    ]),
  );
  assert.equal(restarting, {
    'docker-between': true,
    'podman-between': true,
    'first-exit': false,
    'no-policy': false,
    'retries-spent': false,
    'stopped-by-hand': false,
    'up-again': true,
    'up-in-scan': true,
    'up-long': false,
    once: false,
    'no-start': 'unknown',
  });
});

test.run();
