import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { auditSnapshot, IncrementalAudit, reportOf, triage } from '../../src/pipeline.js';
import { SubjectMemo } from '../../src/facts/incremental-subjects.js';
import { buildSubjects } from '../../src/facts/subjects.js';
import type { Subject, SubjectSets } from '../../src/policy/subject.js';
import { DEFAULT_POLICY, loadPack } from '../../src/policy/load.js';
import type { LoadedRule } from '../../src/policy/types.js';
import { parseSelector, type Scope } from '../../src/scope.js';
import { loadSnapshot } from '../../src/snapshot/load.js';
import type { Container, Snapshot } from '../../src/snapshot/types.js';
import { rng, syntheticSnapshot } from '../bench/synthetic.js';
import { example } from '../support/cli.js';
import { buildRealistic, realisticHost } from '../support/realistic-host.js';

/*
 * serve evaluates each new snapshot of its host with IncrementalAudit (src/pipeline.ts), which makes again only the
 * subjects whose inputs changed and checks rules only on those. What it gives must be exactly what a full evaluation
 * (auditSnapshot, as scan and the nightly job run it) gives on the same snapshot: the same findings with the same
 * fingerprints and occurrence numbers, notifications, rules not checked, scope counts, in the same order. Each host
 * here goes through a long sequence of random changes of the kinds a host sees, each applied to the snapshot before
 * as serve's read cache gives it (unchanged containers, files and images the same objects, /proc read again), and
 * after each step the two evaluations are compared.
 */

const rules: LoadedRule[] = (await loadPack(DEFAULT_POLICY)).rules;

interface Host {
  name: string;
  snapshot: Snapshot;
  history: Snapshot[];
}

const hosts: Host[] = [];
for (const seed of [3, 11, 29]) {
  const { snapshot, history } = syntheticSnapshot(40, seed, `synthetic-${seed}`);
  hosts.push({ name: `synthetic seed ${seed}`, snapshot, history });
}
for (const seed of [1, 2]) {
  const host = realisticHost(seed);
  hosts.push({
    name: `realistic ${seed}`,
    snapshot: buildRealistic(host, '2026-10-02T03:00:00Z'),
    history: [buildRealistic(host, '2026-10-01T03:00:00Z', { before: true })],
  });
}
for (const name of ['045', '097', 'demo', 'adopted-node']) {
  const historyDir = example(name, 'history');
  hosts.push({
    name: `example ${name}`,
    snapshot: await loadSnapshot(example(name, 'snapshot.json')),
    history: existsSync(historyDir)
      ? await Promise.all(readdirSync(historyDir).map((f) => loadSnapshot(join(historyDir, f))))
      : [],
  });
}

type Random = () => number;
const pick = <T>(random: Random, list: readonly T[]): T | undefined =>
  list.length === 0 ? undefined : list[Math.floor(random() * list.length)];
const replaceAt = <T>(list: readonly T[], at: T, by: T | null): T[] =>
  list.flatMap((x) => (x === at ? (by === null ? [] : [by]) : [x]));

/** One container changed by `change`, the others as they were. */
function withContainer(s: Snapshot, random: Random, change: (c: Container) => Container | null): Snapshot {
  const c = pick(random, s.containers);
  return c === undefined ? s : { ...s, containers: replaceAt(s.containers, c, change(c)) };
}

/** The changes a host sees between two reads, each as the read cache gives the snapshot after it. */
const MUTATIONS: Record<string, (s: Snapshot, random: Random, step: number) => Snapshot> = {
  'env changed': (s, random) =>
    withContainer(s, random, (c) => {
      const keys = Object.keys(c.env);
      const other = pick(random, s.containers)!;
      const key = pick(random, keys);
      const value = pick(random, Object.values(other.env));
      if (key === undefined || value === undefined) return c;
      return { ...c, env: random() < 0.5 ? { ...c.env, [key]: value } : { ...c.env, [`ADDED_${keys.length}`]: value } };
    }),
  'env key dropped': (s, random) =>
    withContainer(s, random, (c) => {
      const key = pick(random, Object.keys(c.env));
      if (key === undefined) return c;
      return { ...c, env: Object.fromEntries(Object.entries(c.env).filter(([k]) => k !== key)) };
    }),
  'labels changed': (s, random) =>
    withContainer(s, random, (c) => {
      const key = pick(random, Object.keys(c.labels));
      if (key === undefined || random() < 0.3) return { ...c, labels: { ...c.labels, 'mesh.module': 'moved' } };
      return { ...c, labels: Object.fromEntries(Object.entries(c.labels).filter(([k]) => k !== key)) };
    }),
  'state changed': (s, random) =>
    withContainer(s, random, (c) => {
      const running = !c.state.running;
      return {
        ...c,
        state: { ...c.state, running, status: running ? 'running' : 'exited', restartCount: c.state.restartCount + 2 },
        proc: running
          ? { available: true, env: c.env, listening: [], boundFiles: [], processes: ['app'] }
          : { available: false, reason: 'gone' },
      };
    }),
  // Started again by its policy a moment ago: a restart loop until the time moves 10 s on (runtime.ts, restartLoopOf).
  'restarted by its policy just now': (s, random) =>
    withContainer(s, random, (c) =>
      c.runtime === undefined
        ? c
        : {
            ...c,
            state: { ...c.state, running: true, status: 'running', restartCount: 3, startedAt: s.takenAt },
          },
    ),
  'health changed': (s, random) =>
    withContainer(s, random, (c) =>
      c.runtime === undefined ? c : { ...c, runtime: { ...c.runtime, healthcheck: !c.runtime.healthcheck } },
    ),
  'container removed': (s, random) => withContainer(s, random, () => null),
  'container added': (s, random, step) => {
    const c = pick(random, s.containers);
    if (c === undefined) return s;
    // A copy under a new name and id (a container left behind by a moved target), or a second one of an old name.
    const name = random() < 0.8 ? `${c.name}-copy${step}` : c.name;
    return { ...s, containers: [...s.containers, { ...c, id: `${c.id.slice(0, 50)}${step}`, name }] };
  },
  '/proc not read': (s, random) =>
    withContainer(s, random, (c) =>
      c.state.running ? { ...c, proc: { available: false, reason: 'permission denied' } } : c,
    ),
  'file digest changed': (s, random) => {
    const f = pick(random, s.files);
    if (f === undefined) return s;
    return { ...s, files: replaceAt(s.files, f, { ...f, sha256: `sha256:${'0'.repeat(60)}${step4(random)}` }) };
  },
  'file not read': (s, random) => {
    const f = pick(random, s.files);
    if (f === undefined) return s;
    return { ...s, files: replaceAt(s.files, f, { path: f.path, kind: 'unknown', error: 'EACCES' }) };
  },
  'file gone': (s, random) => {
    const f = pick(random, s.files);
    return f === undefined ? s : { ...s, files: replaceAt(s.files, f, null) };
  },
  'ledger entry changed': (s, random) => {
    const r = pick(random, s.ledger.entries);
    const target = pick(random, s.containers)?.name;
    if (r === undefined || target === undefined) return s;
    const entry = r.entry.type === 'container' ? { ...r.entry, target } : { ...r.entry, module: 'other' };
    return { ...s, ledger: { ...s.ledger, entries: replaceAt(s.ledger.entries, r, { ...r, entry }) } };
  },
  'ledger entry removed': (s, random) => {
    const r = pick(random, s.ledger.entries);
    return r === undefined ? s : { ...s, ledger: { ...s.ledger, entries: replaceAt(s.ledger.entries, r, null) } };
  },
  'ledger not read, or read again': (s) => ({ ...s, ledger: { ...s.ledger, available: !s.ledger.available } }),
  'a container not inspected': (s, random) => {
    const c = pick(random, s.containers);
    if (c === undefined) return s;
    const problem = { source: 'docker' as const, subject: c.name, message: `cannot inspect ${c.name}` };
    return s.problems.length > 0 ? { ...s, problems: [] } : { ...s, problems: [problem] };
  },
  'network changed': (s, random) => {
    if (!Array.isArray(s.networks)) return s;
    const n = pick(random, s.networks);
    return n === undefined ? s : { ...s, networks: replaceAt(s.networks, n, random() < 0.5 ? null : { ...n, id: '' }) };
  },
  'volume changed': (s, random) => {
    if (!Array.isArray(s.volumes)) return s;
    const v = pick(random, s.volumes);
    if (v === undefined) return s;
    return { ...s, volumes: replaceAt(s.volumes, v, random() < 0.5 ? null : { ...v, containers: [] }) };
  },
  'image user changed': (s, random) => {
    if (!s.images.available) return s;
    const i = pick(random, s.images.images);
    if (i === undefined) return s;
    const user = i.user === 'root' ? 'app' : 'root';
    return { ...s, images: { ...s.images, images: replaceAt(s.images.images, i, { ...i, user }) } };
  },
  'tag moved': (s, random) => {
    if (!s.images.available) return s;
    const tag = pick(random, Object.keys(s.images.tags));
    const to = pick(random, s.images.images)?.id;
    if (tag === undefined || to === undefined) return s;
    const tags =
      random() < 0.3
        ? Object.fromEntries(Object.entries(s.images.tags).filter(([t]) => t !== tag))
        : {
            ...s.images.tags,
            [tag]: to,
          };
    return { ...s, images: { ...s.images, tags } };
  },
  'daemon settings changed': (s) => {
    const config = s.daemon.config;
    if (!config.available)
      return { ...s, daemon: { ...s.daemon, config: { available: true, exists: false, settings: {} } } };
    // no-new-privileges: what every container's daemon_security says; live-restore: what the daemon's subject says.
    const settings: Record<string, unknown> = {
      ...config.settings,
      'live-restore': config.settings['live-restore'] !== true,
    };
    if (settings['no-new-privileges'] === true) delete settings['no-new-privileges'];
    else settings['no-new-privileges'] = true;
    return { ...s, daemon: { ...s.daemon, config: { ...config, exists: true, settings } } };
  },
  'bind mount changed': (s, random) => {
    const file = pick(random, s.files);
    return withContainer(s, random, (c) => {
      const binds = c.mounts.filter((m) => m.type === 'bind');
      const gone = pick(random, binds);
      if (gone !== undefined && (file === undefined || random() < 0.5))
        return { ...c, mounts: c.mounts.filter((m) => m !== gone) };
      if (file === undefined) return c;
      const mount = { type: 'bind', source: file.path, destination: `/mnt/${c.mounts.length}`, rw: false };
      return { ...c, mounts: [...c.mounts, { ...mount, propagation: '', mode: 'ro' }] };
    });
  },
  'image changed': (s, random) => {
    if (!s.images.available) return s;
    const i = pick(random, s.images.images);
    if (i === undefined) return s;
    return { ...s, images: { ...s.images, images: replaceAt(s.images.images, i, { ...i, tags: [] }) } };
  },
  'listeners changed': (s, random) => {
    const view = s.hostListeners;
    if (view === undefined || !view.available) return s;
    const socket = pick(random, view.sockets);
    const sockets =
      socket === undefined || random() < 0.5
        ? [...view.sockets, { protocol: 'tcp', address: '0.0.0.0', port: 8000 + view.sockets.length, holder: null }]
        : replaceAt(view.sockets, socket, null);
    return { ...s, hostListeners: { ...view, sockets } } as Snapshot;
  },
  // Nothing read changed, but the time did: what is measured against it (a restart loop, a move's age) may not hold.
  'an hour later': (s) => ({ ...s, takenAt: new Date(Date.parse(s.takenAt) + 3_600_000).toISOString() }),
  'managed roots changed': (s) => {
    const roots = s.config.managedRoots;
    const managedRoots = roots.length > 1 ? roots.slice(1) : [...roots, '/srv'];
    return { ...s, config: { ...s.config, managedRoots } };
  },
  // The env keys the engine writes by itself are its kind's.
  'engine kind changed': (s) =>
    s.docker === null ? s : { ...s, docker: { ...s.docker, kind: s.docker.kind === 'podman' ? 'docker' : 'podman' } },
};

function step4(random: Random): string {
  return Math.floor(random() * 0x10000)
    .toString(16)
    .padStart(4, '0');
}

/**
 * The snapshot of the next read, a later time: every third read with /proc read again and the ledger parsed again
 * (serve's whole reads, and a watch that fired), the others with each as the read before had it (the same objects, as
 * serve's cache gives them while no event or watch says they changed).
 */
function nextRead(s: Snapshot, step: number): Snapshot {
  const takenAt = new Date(Date.parse(s.takenAt) + (step + 1) * 1000).toISOString();
  if (step % 3 !== 0) return { ...s, takenAt };
  return {
    ...s,
    takenAt,
    containers: s.containers.map((c) => (c.state.running ? { ...c, proc: structuredClone(c.proc) } : c)),
    ledger: structuredClone(s.ledger),
  };
}

const SCOPE: Scope = { include: [], exclude: [parseSelector('name:*-1*', 'test')], ignore: [] };
const NOW = new Date('2026-10-02T04:00:00Z');

const STEPS = 40;

for (const scoped of [false, true])
  test(`after each of ${STEPS} random changes, the incremental evaluation is the full one${scoped ? ' (scoped)' : ''}`, () => {
    const names = Object.keys(MUTATIONS);
    let findings = 0;
    let reused = 0;
    for (const [h, host] of hosts.entries()) {
      const random = rng(1000 + h);
      const options = scoped ? { scoped: { scope: SCOPE, now: NOW } } : {};
      const incremental = new IncrementalAudit();
      let snapshot = host.snapshot;
      for (let step = 0; step < STEPS; step++) {
        const name = names[Math.floor(random() * names.length)]!;
        snapshot = nextRead(MUTATIONS[name]!(snapshot, random, step), step);
        const got = incremental.audit(snapshot, host.history, rules, options);
        const expected = auditSnapshot(snapshot, host.history, rules, options);
        assert.equal(got, expected, `${host.name}, step ${step}: ${name}`);
        // Nothing after the evaluation changes what it keeps (triage's findings are copies).
        const report = reportOf([got], rules, { now: NOW });
        triage(report, { now: NOW });
        findings += expected.findings.length;
        reused += incremental.lastWork().reused;
      }
    }
    // The comparison met findings, and subjects taken again (else it proved little).
    assert.ok(findings > 1000, `findings: ${findings}`);
    assert.ok(reused > 1000, `reused: ${reused}`);
  });

/** A subject set as a rule sees it: each subject's data, unknown facts, resource and what it is about. */
const seen = (sets: SubjectSets) =>
  Object.fromEntries(
    Object.entries(sets).map(([set, subjects]) => [
      set,
      (subjects as Subject[]).map(({ about, part, data, unknown, resource }) => ({
        about,
        part,
        data,
        unknown,
        resource,
      })),
    ]),
  );

test(`after each of ${STEPS} random changes, every subject taken again is the one a whole build makes`, () => {
  // The evaluation can hide a stale subject (no rule reads the fact that moved): the subjects are compared themselves.
  const names = Object.keys(MUTATIONS);
  for (const [h, host] of hosts.entries()) {
    const random = rng(2000 + h);
    const memo = new SubjectMemo();
    let snapshot = host.snapshot;
    for (let step = 0; step < STEPS; step++) {
      const name = names[Math.floor(random() * names.length)]!;
      snapshot = nextRead(MUTATIONS[name]!(snapshot, random, step), step);
      assert.equal(
        seen(memo.build(snapshot, host.history)),
        seen(buildSubjects(snapshot, host.history)),
        `${host.name}, step ${step}: ${name}`,
      );
    }
  }
});

test('one container changed: rules are checked again on its subjects only', () => {
  const { snapshot, history } = syntheticSnapshot(300, 7);
  const incremental = new IncrementalAudit();
  incremental.audit(snapshot, history, rules);
  const first = incremental.lastWork();
  // The same host read again, nothing changed but the time and /proc: no subject made again, no rule checked again
  // but on the sets made of the whole host (host, images, daemon, listeners).
  const again = nextRead(snapshot, 0);
  incremental.audit(again, history, rules);
  const idle = incremental.lastWork();
  assert.is(idle.made, 0);
  // One container's env changed (the drift of incident 045).
  const target = again.containers.find((c) => c.state.running && Object.keys(c.env).length > 0)!;
  const key = Object.keys(target.env).at(-1)!;
  const drifted = { ...target.env, [key]: { digest: 'hmac-sha256:drifted', shape: '<7 chars>' } };
  const changed = nextRead(
    { ...again, containers: again.containers.map((c) => (c === target ? { ...c, env: drifted } : c)) },
    1,
  );
  const evaluation = incremental.audit(changed, history, rules);
  const work = incremental.lastWork();
  assert.equal(evaluation, auditSnapshot(changed, history, rules));
  // The container, and what reads it whole: the ledger entries that target it, the volumes it uses.
  const naming =
    changed.ledger.entries.filter((r) => r.entry.target === target.name || r.entry.target === target.id).length +
    (changed.volumes ?? []).filter((v) => v.containers.includes(target.name)).length;
  assert.ok(work.made >= 1 && work.made <= 1 + naming, `made again: ${work.made} (1 + ${naming} naming it)`);
  // Its own subjects (the container, its sources and mounts: a few rules each) and the whole-host sets'.
  const sets = ['containers', 'container_sources', 'mounts'];
  const ownSubjects = 1 + Object.keys(target.mounts).length + 4;
  const perSubject = Math.max(...sets.map((set) => rules.filter((r) => r.subject === set).length));
  assert.ok(
    work.ruleChecks <= idle.ruleChecks + ownSubjects * perSubject,
    `checks: ${work.ruleChecks} (idle ${idle.ruleChecks})`,
  );
  assert.ok(work.ruleChecks > idle.ruleChecks, `checks: ${work.ruleChecks} (idle ${idle.ruleChecks})`);
  assert.ok(idle.ruleChecks * 50 < first.ruleChecks, `idle ${idle.ruleChecks} of ${first.ruleChecks}`);
});

test.run();
