import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildFacts, derivationOrder, derive, factKinds, read, type FactTable } from '../../src/facts/derived.js';
import { CONTAINER_FACTS, CONTAINER_KINDS, CONTAINER_ORDER } from '../../src/facts/containers.js';
import { buildSubjects } from '../../src/facts/subjects.js';
import { SUBJECT_FIELD_DOCS } from '../../src/policy/fields.js';
import { buildRealistic, realisticHost } from '../support/realistic-host.js';

/*
 * A derived fact declares what it is computed from, and is unknown when what it read is: the table of
 * a container's facts (src/facts/containers.ts) against the realistic host model, and the machinery
 * (src/facts/derived.ts) on small tables. A field of ContainerData missing from the table fails tsc;
 * the tests below fail when a derived fact reads an input it does not declare.
 */

test('every field a rule can read of a container has its origin declared: read from a source, about the scan, or derived', () => {
  const kinds = CONTAINER_KINDS;
  const declared = [...kinds.read.keys(), ...kinds.derived, ...kinds.scan].sort();
  assert.equal(declared, Object.keys(SUBJECT_FIELD_DOCS.containers).sort());
  // What issue 24 found treated as known: each is derived (and so unknown with what it reads).
  for (const field of ['endpoints', 'exposure', 'exposed', 'exposed_endpoints', 'open_ports'] as const)
    assert.ok(kinds.derived.includes(field), field);
  assert.is(kinds.read.get('listening'), 'proc');
});

test('a derived fact of a container reads no field beyond those it declares', () => {
  const order = CONTAINER_ORDER;
  let checked = 0;
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    for (const subject of buildSubjects(buildRealistic(realisticHost(seed), '2026-10-02T03:00:00Z')).containers) {
      const data = subject.data as unknown as Record<string, unknown>;
      for (const field of order) {
        const fact = CONTAINER_FACTS[field] as unknown as {
          from: readonly string[];
          compute: (inputs: object, context: object) => unknown;
        };
        // Only the declared inputs, and a read of any other field fails.
        const inputs = new Proxy(Object.fromEntries(fact.from.map((f) => [f, data[f]])), {
          get(target, key) {
            if (typeof key === 'string' && !fact.from.includes(key))
              throw new Error(`${field} reads ${key}, which it does not declare`);
            return Reflect.get(target, key) as unknown;
          },
        });
        const value = fact.compute(inputs, {
          labels: {
            module: 'mesh.module',
            resource: 'mesh.resource',
            sources: 'mesh.sources',
            sourceDigests: 'mesh.source-digests',
          },
        });
        assert.equal(value, data[field], `${field} of ${subject.about.id} from its declared inputs alone`);
        checked++;
      }
    }
  }
  assert.ok(checked > 100, String(checked));
});

interface Toy {
  a: number;
  b: number | null;
  flag: boolean;
  sum: number;
  doubled: number;
  either: number;
}
const toy = derive<Toy, null>();
const TOY = {
  a: read('docker'),
  b: read('proc'),
  flag: read('docker'),
  // Reads b only when flag is set.
  sum: toy(['a', 'b', 'flag'], (x) => x.a + (x.flag ? (x.b ?? 0) : 0)),
  doubled: toy(['sum'], (x) => x.sum * 2),
  either: toy(['a'], (x) => x.a),
} satisfies FactTable<Toy, null>;
const TOY_KINDS = factKinds<Toy, null>(TOY);
const TOY_ORDER = derivationOrder<Toy, null>(TOY);
const build = (flag: boolean, unread: [string, string][]) =>
  buildFacts<Toy, null, typeof TOY>(
    TOY,
    TOY_ORDER,
    { a: 1, b: null, flag },
    null,
    new Map(unread as [never, string][]),
    TOY_KINDS.read,
  );

test('a fact derived from an unknown input it reads is unknown, with the source and reason; transitively', () => {
  const { unknown } = build(true, [['proc', '/proc not read: not root']]);
  assert.equal(
    unknown.map((u) => [u.field, u.source, u.reason]),
    [
      ['b', 'proc', '/proc not read: not root'],
      ['sum', 'proc', '/proc not read: not root'],
      ['doubled', 'proc', '/proc not read: not root'],
    ],
  );
});

test('a fact that does not read its unknown input on this subject is known', () => {
  const { data, unknown } = build(false, [['proc', 'not root']]);
  assert.equal(
    unknown.map((u) => u.field),
    ['b'],
  );
  assert.is(data.sum, 1);
  assert.is(data.doubled, 2);
});

test('every source read: nothing unknown', () => {
  assert.equal(build(true, []).unknown, []);
});

test('derivation order: inputs first; a cycle or an input that is no field is refused', () => {
  assert.ok(TOY_ORDER.indexOf('sum') < TOY_ORDER.indexOf('doubled'));
  const t = derive<{ x: number; y: number }, null>();
  assert.throws(
    () => derivationOrder<{ x: number; y: number }, null>({ x: t(['y'], (v) => v.y), y: t(['x'], (v) => v.x) }),
    /read each other: x <- y <- x/,
  );
  assert.throws(
    () =>
      derivationOrder<{ x: number; y: number }, null>({
        x: read('docker'),
        y: { from: ['nope' as 'x'], compute: () => 0 },
      }),
    /derived from nope, which is no field/,
  );
});

test.run();
