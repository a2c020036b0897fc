import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withMemory } from '../src/facts/history.js';
import { auditSnapshot } from '../src/pipeline.js';
import { loadPolicies } from '../src/policy/load.js';
import { parseSnapshot } from '../src/snapshot/load.js';
import type { EnvFileSyntax, Snapshot } from '../src/snapshot/types.js';
import { HostModel } from './support/host-model.js';
import { PACKAGE_ROOT } from '../src/paths.js';

/*
 * Issue 24, item 1: an env file is read as the consumer that made the container read it. The values
 * below are what the real tools gave for these lines (test/docker/env-readings.test.ts measures them on
 * the engines): `docker run --env-file` keeps them literally, Compose's `env_file:` like dotenv.
 */

const rules = (await loadPolicies()).flatMap((p) => p.rules);
const ENV_PATH = '/etc/mesh/app/app.env';
const FILE = ['Q="quoted value"', 'C=x # not a comment', 'T=trail  ', "S='single'", 'PASS', 'PLAIN=p', ''].join('\r\n');
/** What each consumer put into the container for FILE (PASS: the caller's own variable). */
const LITERAL = {
  Q: '"quoted value"',
  C: 'x # not a comment',
  T: 'trail  ',
  S: "'single'",
  PASS: 'from-the-caller',
  PLAIN: 'p',
};
const COMPOSE = { Q: 'quoted value', C: 'x', T: 'trail', S: 'single', PASS: 'from-the-caller', PLAIN: 'p' };
const COMPOSE_LABELS = {
  'com.docker.compose.project': 'app',
  'com.docker.compose.service': 'server',
  'com.docker.compose.version': '1.29.2',
};

function host(options: {
  env: Record<string, string>;
  labels?: Record<string, string>;
  file?: string;
  syntax?: EnvFileSyntax;
  takenAt?: string;
}): Snapshot {
  const snapshot = new HostModel('n1', options.takenAt ?? '2026-09-22T00:00:00Z')
    .file(ENV_PATH, options.file ?? FILE)
    .container({
      name: 'app',
      labels: { 'mesh.module': 'app', 'mesh.resource': 'app.server', 'mesh.sources': ENV_PATH, ...options.labels },
      env: options.env,
    })
    .ledger([
      { id: 'app.server', type: 'container', target: 'app', sources: [ENV_PATH] },
      { id: 'app.env', type: 'file', target: ENV_PATH },
    ])
    .build();
  // The image was read and sets none of these keys: a key the file does not name would be a dropped key (MA1004).
  for (const c of snapshot.containers) c.imageEnv = {};
  if (options.syntax) snapshot.config.envFileSyntax = options.syntax;
  return snapshot;
}

const envFindings = (snapshot: Snapshot, history: Snapshot[] = []) =>
  auditSnapshot(history.length > 0 ? withMemory(snapshot, history) : snapshot, history, rules)
    .findings.filter((f) => f.ruleId === 'MA1001' || f.ruleId === 'MA1004')
    .map((f) => ({ rule: f.ruleId, key: f.discriminator?.split('#')[1], message: f.message }));

test('a container made by docker run --env-file holds the quotes, the comment, the blanks: no drift, no dropped key', () => {
  assert.equal(envFindings(host({ env: LITERAL })), []);
});

test('a container made by Compose holds the values dotenv-like: no drift either, with or without its labels', () => {
  assert.equal(envFindings(host({ env: COMPOSE, labels: COMPOSE_LABELS })), []);
  assert.equal(envFindings(host({ env: COMPOSE })), []);
});

test('Compose labels say Compose: the literal values are drift, and the finding says it read the file as Compose does', () => {
  const found = envFindings(host({ env: LITERAL, labels: COMPOSE_LABELS }));
  assert.equal(
    found.map((f) => [f.rule, f.key]),
    [
      ['MA1001', 'C'],
      ['MA1001', 'Q'],
      ['MA1001', 'S'],
      ['MA1001', 'T'],
    ],
  );
  assert.match(found[0]!.message, "now says C=<1 chars> as Compose's env_file reads it");
  assert.match(found[0]!.message, 'made by Compose (label com.docker.compose.project)');
});

test("the config (envFileSyntax: docker) and the label mesh.env-file-syntax decide for the mesh's own containers; the label wins", () => {
  const byConfig = envFindings(host({ env: COMPOSE, syntax: 'docker' }));
  assert.equal(
    byConfig.map((f) => f.key),
    ['C', 'Q', 'S', 'T'],
  );
  assert.match(
    byConfig[1]!.message,
    'now says Q=<14 chars> as `docker run --env-file` reads it; config envFileSyntax: docker',
  );
  assert.equal(
    envFindings(host({ env: COMPOSE, syntax: 'docker', labels: { 'mesh.env-file-syntax': 'compose' } })),
    [],
  );
  const byLabel = envFindings(host({ env: COMPOSE, labels: { 'mesh.env-file-syntax': 'docker' } }));
  assert.equal(
    byLabel.map((f) => f.key),
    ['C', 'Q', 'S', 'T'],
  );
  assert.match(byLabel[0]!.message, 'label mesh.env-file-syntax=docker');
});

test('with no evidence, a value changed inside its quotes matches neither reading: one MA1001, naming both readings', () => {
  const file = FILE.replace('"quoted value"', '"quoted VALUE"');
  for (const env of [LITERAL, COMPOSE]) {
    const found = envFindings(host({ env, file }));
    assert.equal(
      found.map((f) => [f.rule, f.key]),
      [['MA1001', 'Q']],
    );
    assert.match(
      found[0]!.message,
      "now says Q=<14 chars> as `docker run --env-file` reads it, Q=<12 chars> as Compose's env_file does",
    );
    assert.match(found[0]!.message, 'nothing says whether `docker run --env-file` or Compose made the container');
  }
});

test('a key written without = is never drift nor a dropped key, whatever value the container holds for it', () => {
  assert.equal(envFindings(host({ env: { ...LITERAL, PASS: 'anything else' } })), []);
  assert.equal(envFindings(host({ env: { ...COMPOSE, PASS: '' }, labels: COMPOSE_LABELS })), []);
});

test("an export line: Docker's CLI refuses the file, so only Compose (or Podman's CLI) can have made the container", () => {
  const file = 'export E=1\nQ="q"\n';
  assert.equal(envFindings(host({ env: { E: '1', Q: 'q' }, file })), []);
  assert.equal(envFindings(host({ env: { E: '1', Q: 'q' }, file, labels: COMPOSE_LABELS })), []);
  assert.equal(
    envFindings(host({ env: { E: '1', Q: '"q"' }, file, labels: COMPOSE_LABELS })).map((f) => f.key),
    ['Q'],
  );
});

test('history: a key only the Compose reading of a former file named (export) is a dropped key for a Compose-made container', () => {
  const before = new HostModel('n1', '2026-09-21T00:00:00Z').file(ENV_PATH, 'export FEATURE=on\nPLAIN=p\n').build();
  const now = host({ env: { FEATURE: 'on', PLAIN: 'p' }, labels: COMPOSE_LABELS, file: 'PLAIN=p\n' });
  for (const c of now.containers) delete c.imageEnv; // the image not read: history is the only evidence
  const found = envFindings(now, [before]);
  assert.equal(
    found.map((f) => [f.rule, f.key]),
    [['MA1004', 'FEATURE']],
  );
  assert.match(found[0]!.message, 'an earlier snapshot of the file named it');
});

test('a snapshot made before the literal reading was kept loads, and is judged by its Compose reading, saying so', () => {
  const legacy = parseSnapshot(
    JSON.parse(
      readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'legacy', '045-snapshot-before-readings.json'), 'utf8'),
    ),
    'legacy',
  );
  assert.ok(legacy.files.some((f) => f.env !== undefined && f.envLiteral === undefined));
  const found = auditSnapshot(legacy, [], rules).findings.filter((f) => f.ruleId === 'MA1001');
  assert.equal(
    found.map((f) => f.discriminator),
    ['/etc/mesh/gitea/db.env#DATABASE_URL'],
  );
  assert.match(
    found[0]!.message,
    "as Compose's env_file reads it; nothing says whether `docker run --env-file` or Compose made the container; the snapshot holds the Compose reading only",
  );
});

test.run();
