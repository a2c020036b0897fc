import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadPack } from '../../src/policy/load.js';
import { KNOWN_OPERATORS } from '../../src/policy/logic.js';
import { SUBJECT_SET_NAMES } from '../../src/policy/sets.js';
import { MeshAuditError } from '../../src/errors.js';
import type { PolicyPack } from '../../src/policy/types.js';
import { tempDir } from '../support/cli.js';
import { shippedPackAsOneFile } from '../support/shipped-pack.js';

/*
 * Property of the policy loader: whatever YAML text a policy file holds, loading it gives a PolicyPack
 * or a MeshAuditError with exit code 2 (a usage error, one file:line per problem) — never another
 * exception, which the CLI would report as an internal error.
 */

const RUNS = { numRuns: 200, seed: 0x9011c7 } as const;
const dir = tempDir('mesh-prop-policy-');
const SHIPPED = shippedPackAsOneFile();
let n = 0;

type Outcome = { pack: PolicyPack } | { error: MeshAuditError };

/** Loads the text from a fresh file; fails the property on anything but a pack or a MeshAuditError(2). */
async function load(text: string): Promise<Outcome> {
  const file = join(dir, `p${++n}.yaml`);
  writeFileSync(file, text);
  try {
    return { pack: await loadPack(file) };
  } catch (err) {
    if (!(err instanceof MeshAuditError)) {
      throw new Error(
        `not a MeshAuditError: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n--- policy text ---\n${text.slice(0, 2000)}`,
      );
    }
    assert.is(err.exitCode, 2, err.message);
    // Every problem at once (issue 18), each on its own line that starts with file:line.
    for (const line of err.message.split('\n'))
      assert.ok(line.startsWith(`${file}:`), `each line starts with file:line: ${err.message}`);
    return { error: err };
  }
}

/** YAML-ish text: indicators, anchors, tags, directives, in any order. */
const yamlSoup = fc.string({
  unit: fc.constantFrom(
    'a',
    'id',
    ': ',
    '- ',
    '\n',
    '  ',
    '[',
    ']',
    '{',
    '}',
    ',',
    '&x ',
    '*x',
    '!!str ',
    '!!binary ',
    '%YAML 1.1\n',
    '%YAML 1.2\n',
    '---\n',
    '...\n',
    '|',
    '>',
    '"',
    "'",
    '#',
    '<<: ',
    '? ',
    'rules',
    'schema',
    'mesh-audit/policy@1',
    '\t',
    '\r\n',
    '\0',
  ),
  maxLength: 60,
});

/** The shipped pack, edited at random: a slice cut out, or a fragment inserted, at a random place. */
const editedPack = fc
  .tuple(fc.nat(SHIPPED.length), fc.nat(200), fc.oneof(fc.constant(''), yamlSoup, fc.string({ maxLength: 20 })))
  .map(([at, cut, insert]) => SHIPPED.slice(0, at) + insert + SHIPPED.slice(Math.min(SHIPPED.length, at + cut)));

/** Mostly one of the good values, sometimes a bad one: deep enough into the loader to reach its later checks. */
const mostly = <T>(good: T[], bad: T[]): fc.Arbitrary<T> =>
  fc.oneof({ arbitrary: fc.constantFrom(...good), weight: 9 }, { arbitrary: fc.constantFrom(...bad), weight: 1 });

/** JSON Logic-ish expressions: known operators mostly, unknown ones, literals, object literals. */
const logic = fc.letrec<{ expr: unknown }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.boolean(), fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null)),
    { arbitrary: fc.jsonValue({ maxDepth: 1 }), weight: 1 },
    {
      arbitrary: fc.record({
        var: mostly(['name', 'running', 'labels.mesh.module', 'id', ''], ['constructor', '__proto__']),
      }),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(
          mostly([...KNOWN_OPERATORS], ['log', 'nope', '__proto__', 'constructor']),
          fc.array(tie('expr'), { maxLength: 3 }),
        )
        .map(([op, args]) => ({ [op]: args })),
      weight: 3,
    },
  ),
})).expr;

/** A pack whose rules have arbitrary fields and expressions, written as YAML. */
const packText = fc
  .record({
    rules: fc.array(
      fc.record(
        {
          id: mostly(['T1', 'T2', 'T3'], ['X', '']),
          name: mostly(['rule-one', 'rule-two', 'rule-three'], ['T1', 'Bad Name']),
          title: mostly(['t'], ['']),
          severity: mostly(['error', 'warning', 'note'], ['fatal']),
          subject: mostly([...SUBJECT_SET_NAMES], ['nothing']),
          where: logic,
          each: logic,
          let: fc.dictionary(fc.constantFrom('a', 'b', 'item'), logic, { maxKeys: 2 }),
          escalate: fc.array(fc.record({ when: logic, severity: mostly(['error'], ['fatal']) }), { maxLength: 1 }),
          discriminator: logic,
          assert: logic,
          message: mostly(['{id}', 'plain', '{host} {id}'], ['{nope}', '{a}', '{item.x}', '{name}']),
          help: fc.constant('h'),
          remediation: fc.constant('r'),
          tags: fc.constant([]),
          profiles: mostly([['nightly'], ['premigration'], ['nightly', 'premigration']], [['sometimes']]),
        },
        {
          requiredKeys: [
            'id',
            'name',
            'title',
            'severity',
            'subject',
            'assert',
            'message',
            'help',
            'remediation',
            'tags',
            'profiles',
          ],
        },
      ),
      { minLength: 1, maxLength: 3 },
    ),
  })
  .map((p) => stringify({ schema: 'mesh-audit/policy@1', pack: { id: 'prop', name: 'prop', version: '1' }, ...p }));

test('arbitrary text as a policy: a pack or a MeshAuditError (exit 2), never another exception', async () => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), yamlSoup), async (text) => {
      await load(text);
    }),
    RUNS,
  );
});

test('the shipped pack, randomly damaged: a pack or a MeshAuditError (exit 2)', async () => {
  await fc.assert(
    fc.asyncProperty(editedPack, async (text) => {
      await load(text);
    }),
    RUNS,
  );
});

test('packs with arbitrary rules and JSON Logic: a pack or a MeshAuditError; a loaded pack holds only known operators', async () => {
  const loaded = { packs: 0, errors: 0 };
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        packText,
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
      async (text) => {
        const outcome = await load(text);
        if ('error' in outcome) {
          loaded.errors++;
          return;
        }
        loaded.packs++;
        const operators = (e: unknown): string[] =>
          Array.isArray(e)
            ? e.flatMap(operators)
            : e !== null && typeof e === 'object'
              ? Object.entries(e).flatMap(([k, v]) => [k, ...operators(v)])
              : [];
        for (const rule of outcome.pack.rules) {
          for (const op of operators(
            [rule.where, rule.each, rule.assert, ...Object.values(rule.let ?? {})].filter((x) => x !== undefined),
          )) {
            assert.ok(KNOWN_OPERATORS.has(op), `a loaded rule uses operator ${op}`);
          }
        }
      },
    ),
    RUNS,
  );
  // Both outcomes were reached: the property is not vacuous.
  assert.ok(loaded.packs > 0 && loaded.errors > 0, JSON.stringify(loaded));
});

test.run();
