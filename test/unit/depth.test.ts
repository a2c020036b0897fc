import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_DEPTH, MAX_SNAPSHOT_DEPTH, pathTooDeep } from '../../src/input/depth.js';
import { parseJsonInput } from '../../src/input/json.js';
import { parseYaml } from '../../src/input/yaml.js';
import { composeFacts } from '../../src/collect/compose-file.js';
import { collectDaemonHost } from '../../src/collect/daemon.js';
import { createSafeValueMaker } from '../../src/secret/value.js';
import { tempDir } from '../support/cli.js';

/*
 * src/input/depth.ts: one bound on how deep a document may nest, measured without recursion, and each
 * reader refusing a deeper document as that document's problem (never a stack overflow).
 */

const arrays = (n: number, inner = '1'): string => '['.repeat(n) + inner + ']'.repeat(n);
const nested = (n: number): unknown => JSON.parse(arrays(n));
const messageOf = (f: () => unknown): string => {
  try {
    f();
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
};

test('depth counts containers; the bound is MAX_DEPTH; the path is that of the first container past it', () => {
  assert.is(pathTooDeep(1), null);
  assert.is(pathTooDeep({}), null);
  assert.is(pathTooDeep(nested(MAX_DEPTH)), null);
  assert.equal(pathTooDeep(nested(MAX_DEPTH + 1)), Array(MAX_DEPTH).fill(0));
  assert.equal(pathTooDeep({ a: [1, { b: {} }] }, 2), ['a', 1]);
  assert.equal(pathTooDeep({ a: [1, 'x'], b: { c: [[]] } }, 2), ['b', 'c']);
  // Strings, numbers and null are no level.
  assert.is(pathTooDeep({ a: { b: 'x', c: null, d: 2 } }, 2), null);
});

test('any depth is measured without recursion (100,000 arrays, 100,000 objects)', () => {
  assert.is(pathTooDeep(nested(100_000))!.length, MAX_DEPTH);
  const objects = JSON.parse('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)) as unknown;
  assert.equal(pathTooDeep(objects), Array(MAX_DEPTH).fill('a'));
});

test('a JSON input deeper than its bound: file:line:column of the first bracket past it, nothing quoted', () => {
  const text = `{\n  "secret": "CANARY-depth",\n  "x": ${arrays(10_000)}\n}`;
  const message = messageOf(() => parseJsonInput(text, 'snap.json', 'snapshot', MAX_SNAPSHOT_DEPTH));
  assert.is(
    message,
    `snap.json:3:${8 + MAX_SNAPSHOT_DEPTH - 1}: snapshot nests more than ${MAX_SNAPSHOT_DEPTH} levels deep`,
  );
  assert.equal(parseJsonInput(arrays(MAX_DEPTH - 1), 'f.json', 'report'), nested(MAX_DEPTH - 1));
});

test('a YAML input deeper than MAX_DEPTH, in flow or block style or through aliases: file:line, no stack overflow', () => {
  const flow = `a: ${arrays(10_000)}\n`;
  assert.is(
    messageOf(() => parseYaml(flow, 'p.yaml')),
    `p.yaml:1:${4 + MAX_DEPTH - 1}: nested more than 64 levels deep`,
  );
  const block = ['a:', ...Array.from({ length: 10_000 }, (_, i) => `${' '.repeat(2 + 2 * i)}b:`)].join('\n');
  assert.match(
    messageOf(() => parseYaml(block, 'p.yaml')),
    /^p\.yaml:65:\d+: nested more than 64 levels deep$/,
  );
  // Each alias 40 deep where it is written; together 80 deep.
  const aliased = `x: &x ${arrays(40)}\ny: ${'['.repeat(40)}*x${']'.repeat(40)}\n`;
  assert.is(
    messageOf(() => parseYaml(aliased, 'p.yaml')),
    'p.yaml:2: nested more than 64 levels deep (through aliases)',
  );
  assert.not.throws(() => parseYaml(`a: ${arrays(MAX_DEPTH - 1)}\n`, 'p.yaml'));
});

test('a Compose file nested 10,000 deep is a Compose error with its line, not a crash', () => {
  const text = `services:\n  web:\n    environment: [A=1]\n    x: ${arrays(10_000)}\n`;
  assert.equal(composeFacts(Buffer.from(text)), {
    error: `nested more than ${MAX_DEPTH} levels deep at line 4, column ${8 + MAX_DEPTH - 3}`,
  });
});

test('daemon.json nested 10,000 deep: not read, said with its line, never walked (was: Maximum call stack size exceeded)', async () => {
  const root = tempDir('mesh-depth-root-');
  mkdirSync(join(root, 'etc', 'docker'), { recursive: true });
  writeFileSync(
    join(root, 'etc', 'docker', 'daemon.json'),
    `{\n  "registry-mirrors": ["https://u:CANARY-daemon@mirror"],\n  "x": ${arrays(10_000)}\n}\n`,
  );
  const host = await collectDaemonHost({
    root,
    safe: createSafeValueMaker(),
    socketPath: '/run/docker.sock',
    procUnavailable: 'not in this test',
    kind: 'docker',
  });
  const reason = `not read: it nests more than ${MAX_DEPTH} levels deep (line 3, column ${8 + MAX_DEPTH - 1})`;
  assert.equal(host.config, { available: false, reason });
  assert.equal(
    host.problems.map((p) => [p.source, p.subject, p.message]),
    [['daemon', '/etc/docker/daemon.json', `/etc/docker/daemon.json: ${reason}`]],
  );
  // Its path is still looked at (owner, mode): the file exists.
  assert.is(host.paths.find((p) => p.role === 'daemon_json')?.exists, true);
});

test.run();
