import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { evaluate, evaluateRule } from '../../src/evaluate/evaluate.js';
import type { Finding } from '../../src/evaluate/finding.js';
import { buildSubjects, type Subject } from '../../src/facts/subjects.js';
import { DEFAULT_POLICY, loadPolicyFile } from '../../src/policy/load.js';
import type { LoadedRule, SubjectSetName } from '../../src/policy/types.js';
import { loadSnapshot } from '../../src/snapshot/load.js';
import type { Snapshot } from '../../src/snapshot/types.js';
import { example } from '../support/cli.js';

/*
 * Properties of the evaluator, with every rule of the shipped pack over arbitrary subject data (real
 * subjects of the example hosts with fields replaced by arbitrary JSON, and data that is JSON only):
 * a rule gives well-formed findings or throws an Error; `evaluate` never throws, turns each failing
 * (rule, subject) into one notification, and loses no finding — two subjects with one identity give
 * two findings, told apart.
 */

// A seed whose 200 runs reach all three outcomes: a rule throwing on arbitrary data is rare (about one
// run in 300), and 0xe7a1 reached none once MA2001's wording followed `exposure` (issue 18).
const RUNS = { numRuns: 200, seed: 0xe7a2 } as const;
const SETS: SubjectSetName[] = ['containers', 'files', 'ledger', 'container_sources', 'mounts', 'host'];

const rules: LoadedRule[] = (await loadPolicyFile(DEFAULT_POLICY)).rules;
const snapshots = new Map<string, Snapshot>();
const realSubjects = Object.fromEntries(SETS.map((s) => [s, [] as Subject[]])) as Record<SubjectSetName, Subject[]>;
for (const name of ['clean', '045', '097', 'demo', 'adopted-node']) {
  const snapshot = await loadSnapshot(example(name, 'snapshot.json'));
  const historyDir = example(name, 'history');
  const history = existsSync(historyDir) ? await Promise.all(readdirSync(historyDir).map((f) => loadSnapshot(join(historyDir, f)))) : [];
  snapshots.set(name, snapshot);
  const sets = buildSubjects(snapshot, history);
  for (const set of SETS) realSubjects[set].push(...sets[set]);
}
for (const set of SETS) assert.ok(realSubjects[set].length > 0, `the examples have ${set}`);
const ruleById = new Map(rules.map((r) => [r.id, r]));
// Rules and snapshots are drawn by name, so that a counterexample reads as ids, not as whole objects.
const ruleIds = fc.constantFrom(...ruleById.keys());

/**
 * A subject of `set`: a real one with some fields replaced by arbitrary JSON, or arbitrary data with a
 * real identity; every fact known (what unknown facts do is test/property/unknown.test.ts's business).
 */
function subjectOf(set: SubjectSetName, ids: fc.Arbitrary<string>): fc.Arbitrary<Subject> {
  const bases = realSubjects[set];
  const keys = [...new Set(bases.flatMap((b) => Object.keys(b.data)))];
  const mutated = fc
    .tuple(fc.constantFrom(...bases), fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 })), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), ids)
    .map(([base, overrides, id]): Subject => ({ ...base, about: { ...base.about, id }, data: { ...base.data, ...overrides }, unknown: [] }));
  const arbitrary = fc
    .tuple(fc.constantFrom(...bases), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }), ids)
    .map(([base, data, id]): Subject => ({ ...base, about: { ...base.about, id }, data, unknown: [] }));
  return fc.oneof({ arbitrary: mutated, weight: 3 }, { arbitrary: arbitrary, weight: 1 });
}

const SEVERITIES = new Set(['error', 'warning', 'note']);

/** What every finding of a rule on a subject looks like. */
function wellFormed(f: Finding, rule: LoadedRule, subject: Subject): void {
  assert.is(f.ruleId, rule.id);
  assert.is(f.ruleName, rule.name);
  assert.ok(SEVERITIES.has(f.severity), f.severity);
  assert.match(f.fingerprint, /^[0-9a-f]{32}$/);
  assert.equal(f.subject, subject.about);
  assert.ok(f.discriminator === null || typeof f.discriminator === 'string');
  assert.type(f.message, 'string');
  assert.ok(Array.isArray(f.locations.physical) && Array.isArray(f.locations.logical));
}

/** A rule's outcome on one subject: its findings (one per fingerprint), or the Error it threw. */
function outcome(rule: LoadedRule, subject: Subject): { findings: Finding[] } | { error: Error } {
  try {
    const findings = evaluateRule(rule, subject);
    return { findings: findings.filter((f, i) => findings.findIndex((g) => g.fingerprint === f.fingerprint) === i) };
  } catch (err) {
    assert.instance(err, Error, `a rule threw something that is not an Error: ${String(err)}`);
    return { error: err as Error };
  }
}

test('every shipped rule on arbitrary subject data: well-formed findings, or an Error', () => {
  const seen = { findings: 0, errors: 0, quiet: 0 };
  fc.assert(
    fc.property(
      ruleIds.chain((id) => fc.tuple(fc.constant(id), subjectOf(ruleById.get(id)!.subject, fc.constantFrom('a', 'b')))),
      ([id, subject]) => {
        const rule = ruleById.get(id)!;
        const result = outcome(rule, subject);
        if ('error' in result) {
          seen.errors++;
          return;
        }
        if (result.findings.length === 0) seen.quiet++;
        else seen.findings++;
        for (const f of result.findings) wellFormed(f, rule, subject);
      },
    ),
    RUNS,
  );
  // Not vacuous: the data reached findings, quiet passes and failures.
  assert.ok(seen.findings > 0 && seen.quiet > 0 && seen.errors > 0, JSON.stringify(seen));
});

test('evaluate never throws: each failing (rule, subject) is one notification, no finding is lost, fingerprints are unique', () => {
  const sets = fc.record(
    Object.fromEntries(SETS.map((set) => [set, fc.array(subjectOf(set, fc.constantFrom('a', 'b', 'line 1')), { maxLength: 3 })])) as Record<SubjectSetName, fc.Arbitrary<Subject[]>>,
  );
  fc.assert(
    fc.property(fc.constantFrom(...snapshots.keys()), sets, fc.subarray([...ruleById.keys()], { minLength: 1 }), (name, subjects, ids) => {
      const snapshot = snapshots.get(name)!;
      const some = ids.map((id) => ruleById.get(id)!);
      let evaluation;
      try {
        evaluation = evaluate(snapshot, subjects, some);
      } catch (err) {
        assert.unreachable(`evaluate threw: ${err instanceof Error ? err.stack : String(err)}`);
        return;
      }
      let expectedFindings = 0;
      const expectedFailures: string[] = [];
      for (const rule of some) {
        for (const subject of subjects[rule.subject]) {
          const result = outcome(rule, subject);
          if ('error' in result) expectedFailures.push(`${rule.id} ${subject.about.kind} ${subject.about.id}`);
          else expectedFindings += result.findings.length;
        }
      }
      const failures = evaluation.notifications.filter((n) => n.kind === 'evaluation');
      assert.equal(failures.map((n) => `${n.source} ${n.subject}`).sort(), expectedFailures.sort());
      for (const n of failures) assert.is(n.level, 'error');
      assert.is(evaluation.findings.length, expectedFindings, 'no finding lost, none made up');
      const fingerprints = evaluation.findings.map((f) => f.fingerprint);
      assert.is(new Set(fingerprints).size, fingerprints.length, 'fingerprints are unique');
      assert.is(evaluation.complete, evaluation.notifications.every((n) => n.level !== 'error'));
    }),
    RUNS,
  );
});

test.run();
