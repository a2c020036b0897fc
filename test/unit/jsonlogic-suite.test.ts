import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evaluateRule } from '../../src/evaluate/evaluate.js';
import type { Subject } from '../../src/facts/subjects.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { parsePolicyPack } from '../../src/policy/load.js';
import { applyLogic, truthy } from '../../src/policy/logic.js';

/*
 * The public JSON Logic conformance suite (test/fixtures/jsonlogic/, see its README for source and
 * licence), run as rules use JSON Logic: every case's expression written into a policy pack and read
 * by the pack loader (which checks every operator), then evaluated by the compiled path
 * (`applyLogic`) on the case's data, and — where the data is an object, as a subject's is — as the
 * `assert` of a rule through the evaluator: a finding exactly when the expected answer is falsy.
 */

const SUITE = `${PACKAGE_ROOT}/test/fixtures/jsonlogic/tests.json`;
type Case = [rule: unknown, data: unknown, expected: unknown];
const cases = (JSON.parse(readFileSync(SUITE, 'utf8')) as unknown[]).filter((c): c is Case => Array.isArray(c));

test('the vendored suite is the published one: 277 cases', () => {
  assert.is(cases.length, 277);
});

// One pack, one rule per case; JSON is YAML, so the pack text is the cases' own JSON.
const packText = JSON.stringify(
  {
    schema: 'mesh-audit/policy@1',
    pack: { id: 'jsonlogic-suite', name: 'JSON Logic conformance suite', version: '1' },
    rules: cases.map(([rule], i) => ({
      id: `JL${i + 1}`,
      name: `case-${i + 1}`,
      title: `JSON Logic suite case ${i + 1}`,
      severity: 'note',
      subject: 'host',
      assert: rule,
      message: 'case failed',
      help: 'A case of the public JSON Logic suite.',
      remediation: 'None.',
      tags: [],
      profiles: ['nightly'],
    })),
  },
  null,
  1,
);
// The cases read their own data, which is no subject set: the check of subject fields is left out.
const pack = await parsePolicyPack('jsonlogic-suite.yaml', packText, { checkFields: false });

const subjectOf = (data: Record<string, unknown>): Subject => ({
  set: 'host',
  about: { kind: 'host', id: 'suite' },
  resource: null,
  module: null,
  part: null,
  data,
  locate: () => ({ physical: [], logical: [] }),
});

test('every case loads, and the compiled path gives the expected answer', () => {
  assert.is(pack.rules.length, cases.length);
  const wrong: string[] = [];
  cases.forEach(([rule, data, expected], i) => {
    const loaded = pack.rules[i]!;
    assert.equal(loaded.assert, rule, `case ${i + 1} is loaded as written`);
    let got: unknown;
    try {
      got = applyLogic(loaded.assert, data);
    } catch (err) {
      got = `threw ${(err as Error).message}`;
    }
    if (!isDeepStrictEqual(got, expected))
      wrong.push(
        `case ${i + 1}: ${JSON.stringify(rule)} on ${JSON.stringify(data)} gave ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`,
      );
  });
  assert.equal(wrong, []);
});

test('every case whose data is an object gives a finding through the evaluator exactly when its answer is falsy', () => {
  let run = 0;
  const wrong: string[] = [];
  cases.forEach(([, data, expected], i) => {
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return;
    run++;
    const findings = evaluateRule(pack.rules[i]!, subjectOf(data as Record<string, unknown>));
    if (findings.length !== (truthy(expected) ? 0 : 1))
      wrong.push(`case ${i + 1}: ${findings.length} findings, expected answer ${JSON.stringify(expected)}`);
  });
  assert.is(run, 199, 'the suite has 199 cases with object data');
  assert.equal(wrong, []);
});

test.run();
