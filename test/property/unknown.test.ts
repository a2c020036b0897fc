import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { auditSnapshot } from '../../src/pipeline.js';
import { loadPolicies } from '../../src/policy/load.js';
import type { Evaluation } from '../../src/evaluate/finding.js';
import type { Snapshot } from '../../src/snapshot/types.js';
import { HostModel } from '../support/host-model.js';

/*
 * Unknown is never absent, and never a finding: for random hosts (containers, env files, bind
 * mounts, ledgers with moved ids and a history), hiding any one source — the engine, the ledger,
 * /proc, one file — never adds a finding. A finding it takes away is not silently gone: its rule
 * is listed as not checked on that subject, or (the engine not read) the run says so.
 */

const RUNS = { numRuns: 150, seed: 0x11, } as const;
const rules = (await loadPolicies()).flatMap((p) => p.rules);
const NAMES = ['a', 'b', 'c'] as const;
const FILES = ['/etc/mesh/x.env', '/etc/mesh/y.ini', '/etc/mesh/z.conf'] as const;

const containerArb = fc.record({
  name: fc.constantFrom(...NAMES),
  host: fc.boolean(),
  running: fc.boolean(),
  value: fc.constantFrom('1', '2'),
  extraKey: fc.boolean(),
  sourced: fc.boolean(),
  bound: fc.boolean(),
  pinned: fc.boolean(),
  port: fc.constantFrom(80, 443),
});
const entryArb = fc.record({
  name: fc.constantFrom(...NAMES),
  moved: fc.boolean(),
  holds: fc.constantFrom([], [80], [443]),
});
const hostArb = fc.record({
  containers: fc.uniqueArray(containerArb, { selector: (c) => c.name, maxLength: 3 }),
  entries: fc.uniqueArray(entryArb, { selector: (e) => e.name, maxLength: 3 }),
  fileValue: fc.constantFrom('1', '2'),
  fileKey2: fc.boolean(),
  claimFiles: fc.subarray([...FILES]),
  missing: fc.subarray([...FILES], { maxLength: 1 }),
});

type Host = typeof hostArb extends fc.Arbitrary<infer T> ? T : never;

function build(h: Host, takenAt: string, before: boolean): Snapshot {
  const m = new HostModel('p1', takenAt);
  for (const path of FILES) {
    if (h.missing.includes(path)) m.missing(path);
    else if (path.endsWith('.env')) m.file(path, `K1=${h.fileValue}\n${h.fileKey2 && !before ? 'K2=x\n' : ''}${before ? 'OLD=y\n' : ''}`);
    else m.file(path, `${path}\n`, { inode: 50 });
  }
  for (const c of h.containers) {
    const name = c.name;
    m.container({
      name,
      running: c.running,
      network: c.host ? 'host' : 'none',
      env: { K1: c.value, ...(c.extraKey ? { OLD: 'y' } : {}) },
      labels: c.sourced ? { 'mesh.sources': '/etc/mesh/x.env' } : {},
      ...(c.bound && !h.missing.includes('/etc/mesh/y.ini') ? { binds: [{ source: '/etc/mesh/y.ini', destination: '/etc/y.ini' }] } : {}),
      proc: {
        listening: [{ protocol: 'tcp', address: '0.0.0.0', port: c.port }],
        ...(c.pinned ? { bound: [{ destination: '/etc/y.ini', text: 'old\n', inode: 49 }] } : {}),
      },
    });
  }
  m.ledger([
    ...h.entries.map((e) => ({ id: `${e.name}.server`, type: 'container', target: before && e.moved ? `${e.name}-old` : e.name, origin: 'declared', holds: e.holds })),
    ...h.claimFiles.map((path, i) => ({ id: `f${i}.file`, type: 'file', target: before ? `${path}.old` : path, origin: 'declared', sources: [] })),
  ]);
  return m.build();
}

/** The ways one source can be missing from a snapshot, as the collectors record it. */
function hidings(s: Snapshot): [string, Snapshot][] {
  return [
    ['docker', { ...s, docker: null, containers: [], problems: [...s.problems, { source: 'docker', message: 'cannot reach the Docker engine' }] }],
    ['ledger', { ...s, ledger: { ...s.ledger, available: false, entries: [] }, problems: [...s.problems, { source: 'ledger', message: 'ledger: EACCES' }] }],
    ['proc', { ...s, containers: s.containers.map((c) => ({ ...c, proc: { available: false, reason: 'not root' } })) }],
    ...s.files.map((f): [string, Snapshot] => [
      `file ${f.path}`,
      { ...s, files: s.files.map((g) => (g.path === f.path ? { path: g.path, kind: 'unknown', error: 'permission denied' } : g)), problems: [...s.problems, { source: 'files', subject: f.path, message: `${f.path} not checked` }] },
    ]),
  ];
}

const fingerprints = (e: Evaluation) => new Set(e.findings.map((f) => f.fingerprint));

test('hiding any one source never adds a finding; what it takes away is listed as not checked', () => {
  let hiddenAway = 0;
  fc.assert(
    fc.property(hostArb, (h) => {
      const history = [build(h, '2026-10-01T03:00:00Z', true)];
      // Each hiding is of this very snapshot (a rebuilt one would have another HMAC key).
      const snapshot = build(h, '2026-10-02T03:00:00Z', false);
      const base = auditSnapshot(snapshot, history, rules);
      for (const [what, hidden] of hidings(snapshot)) {
        const e = auditSnapshot(hidden, history, rules);
        const added = e.findings.filter((f) => !fingerprints(base).has(f.fingerprint));
        assert.equal(added.map((f) => `${f.ruleId} ${f.subject.id}: ${f.message}`), [], `hiding ${what} added findings`);
        const gone = base.findings.filter((f) => !fingerprints(e).has(f.fingerprint));
        if (gone.length > 0) {
          hiddenAway++;
          assert.is(e.complete, false, `hiding ${what} took findings away in a run called complete`);
          for (const f of gone) {
            // Without the engine there are no containers, without the ledger no entries: the run says the source was not read.
            const subjectGone = (what === 'docker' && f.subject.kind === 'container') || (what === 'ledger' && f.subject.kind === 'ledger-entry');
            const listed = (e.notChecked ?? []).some((n) => n.ruleId === f.ruleId && n.subject.kind === f.subject.kind && n.subject.id === f.subject.id);
            assert.ok(subjectGone || listed, `hiding ${what}: ${f.ruleId} on ${f.subject.kind} ${f.subject.id} went away without being listed as not checked`);
          }
        }
      }
    }),
    RUNS,
  );
  assert.ok(hiddenAway > 0, 'some hidings took findings away (the property is not vacuous)');
});

test.run();
