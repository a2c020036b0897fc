import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { evaluate, evaluateChunks } from '../../src/evaluate/evaluate.js';
import { buildSubjects, subjectChunks, type Subject } from '../../src/facts/subjects.js';
import { auditSnapshot } from '../../src/pipeline.js';
import { DEFAULT_POLICY, loadPack } from '../../src/policy/load.js';
import { SUBJECT_SET_NAMES } from '../../src/policy/sets.js';
import type { LoadedRule } from '../../src/policy/types.js';
import { loadSnapshot } from '../../src/snapshot/load.js';
import type { Snapshot } from '../../src/snapshot/types.js';
import { example } from '../support/cli.js';
import { buildRealistic, realisticHost } from '../support/realistic-host.js';

/*
 * The evaluation `mesh-audit evaluate` and `scan` run (src/pipeline.ts) takes the subjects of files, the ledger,
 * mounts and container sources a chunk at a time (subjectChunks, evaluateChunks). It must say exactly what the
 * evaluation of the whole sets says: the same findings in the same order with the same occurrence numbers, the
 * same rules not checked, the same failures, the same checks. Checked on the example hosts and on realistic hosts
 * (with their history), in chunks of 1, 2 and 3 subjects so that every set is cut in many places, and with
 * sources not read.
 */

const shipped: LoadedRule[] = (await loadPack(DEFAULT_POLICY)).rules;

/** A rule over files that fails on every file it reaches (an operator that does not exist): a failure per subject. */
const throwing: LoadedRule = {
  ...shipped.find((r) => r.subject === 'files')!,
  id: 'ZZ9001',
  name: 'fails-on-every-file',
  where: undefined,
  each: undefined,
  let: undefined,
  escalate: undefined,
  assert: { '<': [{ var: 'size' }, { no_such_operator: [] }] },
};

interface Host {
  name: string;
  snapshot: Snapshot;
  history: Snapshot[];
}

const hosts: Host[] = [];
for (const name of ['045', '097', 'demo', 'adopted-node', 'clean']) {
  const historyDir = example(name, 'history');
  hosts.push({
    name,
    snapshot: await loadSnapshot(example(name, 'snapshot.json')),
    history: existsSync(historyDir)
      ? await Promise.all(readdirSync(historyDir).map((f) => loadSnapshot(join(historyDir, f))))
      : [],
  });
}
for (const seed of [1, 2, 3, 4]) {
  const host = realisticHost(seed);
  hosts.push({
    name: `realistic ${seed}`,
    snapshot: buildRealistic(host, '2026-10-02T03:00:00Z'),
    history: [buildRealistic(host, '2026-10-01T03:00:00Z', { before: true })],
  });
}

/** The snapshot with a source not read, as a scan records it. */
const VARIANTS: Record<string, (s: Snapshot) => Snapshot> = {
  'as taken': (s) => s,
  'ledger not read': (s) => ({ ...s, ledger: { ...s.ledger, available: false } }),
  'a container not inspected': (s) => ({
    ...s,
    problems: [...s.problems, { source: 'docker', subject: 'web', message: 'cannot inspect web' }],
  }),
  '/proc not read': (s) => ({
    ...s,
    containers: s.containers.map((c) =>
      c.state.running ? { ...c, proc: { available: false as const, reason: 'permission denied' } } : c,
    ),
  }),
};

const whole = (h: Host, snapshot: Snapshot, rules: readonly LoadedRule[]) =>
  evaluate(snapshot, buildSubjects(snapshot, h.history), rules, h.history, { recordChecks: true });

const streamed = (h: Host, snapshot: Snapshot, rules: readonly LoadedRule[], size: number) =>
  evaluateChunks(snapshot, subjectChunks(snapshot, h.history, size), rules, h.history, { recordChecks: true });

test('in chunks of 1, 2 and 3 subjects, every host and variant gives what the whole sets give', () => {
  let findings = 0;
  let notChecked = 0;
  let failures = 0;
  for (const h of hosts)
    for (const [variant, make] of Object.entries(VARIANTS)) {
      const snapshot = make(h.snapshot);
      const expected = whole(h, snapshot, [...shipped, throwing]);
      for (const size of [1, 2, 3])
        assert.equal(
          streamed(h, snapshot, [...shipped, throwing], size),
          expected,
          `${h.name}, ${variant}, chunks of ${size}`,
        );
      findings += expected.findings.length;
      notChecked += expected.notChecked?.length ?? 0;
      failures += expected.notifications.filter((n) => n.kind === 'evaluation' && n.source === throwing.id).length;
    }
  // The comparison met findings, rules not checked and failures (else it proved little).
  assert.ok(findings > 100, `findings: ${findings}`);
  assert.ok(notChecked > 10, `not checked: ${notChecked}`);
  assert.ok(failures > 10, `failures: ${failures}`);
});

/** The snapshot with every ledger entry written a second time below the others: each has a twin of one identity. */
function withLedgerTwice(s: Snapshot): Snapshot {
  const entries = s.ledger.entries;
  const last = Math.max(...entries.map((r) => r.line));
  return {
    ...s,
    ledger: { ...s.ledger, entries: [...entries, ...entries.map((r) => ({ ...r, line: r.line + last }))] },
  };
}

test('two subjects with one identity are numbered as in the whole set, across chunks', () => {
  // Every entry has a twin in another chunk of 1.
  const h = hosts.find((x) => x.name === '097')!;
  const snapshot = withLedgerTwice(h.snapshot);
  const expected = whole(h, snapshot, shipped);
  assert.ok(
    expected.findings.some((f) => f.discriminator?.endsWith('#2')),
    'a finding told apart by its occurrence',
  );
  assert.equal(streamed(h, snapshot, shipped, 1), expected);
});

test('rules sharing an id (which a pack refuses) number their findings in rule order, as with whole sets', () => {
  // Ledger entries sharing an id (097's, written twice) and two rules with one id over the ledger: each finding of the
  // second rule is numbered after every finding of the first, wherever the chunks are cut.
  const h = hosts.find((x) => x.name === '097')!;
  const snapshot = withLedgerTwice(h.snapshot);
  const overLedger = shipped.filter((r) => r.subject === 'ledger');
  const rules = [...shipped, ...overLedger.map((r) => ({ ...r, name: `${r.name}-again` }))];
  const expected = whole(h, snapshot, rules);
  assert.ok(
    expected.findings.some((f) => f.discriminator?.endsWith('#3')),
    'findings told apart across the two rules',
  );
  for (const size of [1, 2, 3]) assert.equal(streamed(h, snapshot, rules, size), expected, `chunks of ${size}`);
});

test('a streamed set comes in chunks of the size asked, in its order; other sets whole', () => {
  // Files and ledger entries recorded out of order: the set's order is made, not inherited.
  const h = hosts.find((x) => x.name === 'realistic 2')!;
  const snapshot: Snapshot = {
    ...h.snapshot,
    files: [...h.snapshot.files].reverse(),
    ledger: { ...h.snapshot.ledger, entries: [...h.snapshot.ledger.entries].reverse() },
  };
  const sets = buildSubjects(snapshot, h.history);
  const chunksOf = subjectChunks(snapshot, h.history, 2);
  const ids = (subjects: readonly Subject[]) => subjects.map((s) => (s.data as { id: string }).id);
  const inOrder = (list: readonly (string | number)[]) =>
    list.every((x, i) => i === 0 || (typeof x === 'number' ? (list[i - 1] as number) <= x : list[i - 1]! <= x));
  for (const set of SUBJECT_SET_NAMES) {
    const chunks = [...chunksOf(set)];
    assert.equal(ids(chunks.flat()), ids(sets[set]), `${set}: buildSubjects gives the set as its chunks do`);
    if (['files', 'ledger', 'mounts', 'container_sources'].includes(set)) {
      assert.ok(chunks.length > 1, `${set} is cut`);
      assert.ok(
        chunks.every((c) => c.length >= 1 && c.length <= 2),
        `${set}: chunks of 2`,
      );
      const order = set === 'ledger' ? chunks.flat().map((s) => (s.data as { line: number }).line) : ids(chunks.flat());
      assert.ok(inOrder(order), `${set}: in the order of ${set === 'ledger' ? 'lines' : 'ids'}`);
    } else assert.is(chunks.length, 1, `${set} whole`);
  }
  assert.equal(ids([...chunksOf('files')].flat()), h.snapshot.files.map((f) => f.path).sort(), 'every file, by path');
  assert.throws(() => subjectChunks(snapshot, h.history, 0), /at least one subject/);
});

test('the pipeline streams by default and gives the evaluation of the whole sets', () => {
  for (const h of hosts.slice(0, 4)) {
    const expected = evaluate(h.snapshot, buildSubjects(h.snapshot, h.history), shipped, h.history);
    assert.equal(auditSnapshot(h.snapshot, h.history, shipped), expected, h.name);
  }
});

test.run();
