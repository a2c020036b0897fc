import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { composeFacts } from '../../src/collect/compose-file.js';
import { composeFilesOf } from '../../src/engine/compose-labels.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { buildSubjects } from '../../src/facts/subjects.js';
import { DEFAULT_POLICY, loadPack } from '../../src/policy/load.js';
import type { Snapshot } from '../../src/snapshot/types.js';
import { HostModel } from '../support/host-model.js';
import { buildRealistic, realisticHost, type RealisticHost } from '../support/realistic-host.js';

/*
 * Keys given inline beside an env file (`docker run -e K=… --env-file f`, Compose's `environment:`
 * beside `env_file:`) are not keys dropped from the file (MA1004): the evidence is the Compose file the
 * container's own labels name, or the `env:` of the ledger entry claiming it (src/facts/inline-env.ts).
 */

const MA1004 = (await loadPack(DEFAULT_POLICY)).rules.filter((r) => r.id === 'MA1004');
const run = (snapshot: Snapshot, history: Snapshot[] = []) =>
  evaluate(snapshot, buildSubjects(snapshot, history), MA1004, history);
const bytes = (text: string) => Buffer.from(text, 'utf8');

test('a Compose file gives the keys of each service: list form, map form, a KEY alone, merges and extends', () => {
  const facts = composeFacts(
    bytes(
      [
        'version: "2.4"',
        'x-common: &common',
        '  TZ: Europe/Berlin',
        'services:',
        '  api:',
        '    env_file: [api.env]',
        '    environment:',
        '      - GOMAXPROCS=4',
        '      - UMASK',
        '      - "EQ=a=b"',
        '  worker:',
        '    extends: {service: api}',
        '    environment:',
        '      <<: *common',
        '      INSTANCE_ID: "7"',
        '      FROM_SHELL:',
        '  bare:',
        '',
      ].join('\n'),
    ),
  );
  assert.equal(facts, {
    services: {
      api: { environment: ['EQ', 'GOMAXPROCS', 'UMASK'] },
      worker: { environment: ['FROM_SHELL', 'INSTANCE_ID', 'TZ'], extends: { service: 'api' } },
      bare: { environment: [] },
    },
  });
  // File format 1: the services at the top level.
  assert.equal(composeFacts(bytes('web:\n  environment: {A: 1}\n')), { services: { web: { environment: ['A'] } } });
});

test('a file Compose could not read is an error that quotes no value of it', () => {
  const secret = 'hunter2-canary-value';
  for (const text of [
    `services:\n  api:\n    environment:\n      TOKEN: "${secret}\n   bad: [\n`,
    `services:\n  api:\n    environment: "${secret}"\n`,
    `services: [${secret}]\n`,
    `- ${secret}\n`,
  ]) {
    const facts = composeFacts(bytes(text));
    assert.ok('error' in facts, text);
    assert.not.match(JSON.stringify(facts), secret);
  }
  // Each level aliases the one before twelve times: 12^8 nodes if expanded.
  const lines = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i <= 8; i++)
    lines.push(`l${i}: &l${i} [${Array.from({ length: 12 }, () => `*l${i - 1}`).join(', ')}]`);
  const bomb = lines.join('\n');
  assert.ok('error' in composeFacts(bytes(bomb)), 'an alias bomb is refused, not expanded');
});

test("the Compose files a container's labels name, as docker-compose 1.29 writes them", () => {
  const labels = (files: string, dir?: string) => ({
    'com.docker.compose.project.config_files': files,
    ...(dir !== undefined ? { 'com.docker.compose.project.working_dir': dir } : {}),
  });
  assert.equal(composeFilesOf(labels('/srv/app/docker-compose.yml,/srv/app/override.yml', '/srv/app')), {
    paths: ['/srv/app/docker-compose.yml', '/srv/app/override.yml'],
  });
  // `docker-compose up` in /srv/app: the names as found there.
  assert.equal(composeFilesOf(labels('docker-compose.yml,docker-compose.override.yml', '/srv/app')), {
    paths: ['/srv/app/docker-compose.yml', '/srv/app/docker-compose.override.yml'],
  });
  // `docker-compose -f app/docker-compose.yml -f app/prod.yml up` in /srv: the project folder is /srv/app.
  assert.equal(composeFilesOf(labels('app/docker-compose.yml,app/prod.yml', '/srv/app')), {
    paths: ['/srv/app/docker-compose.yml', '/srv/app/prod.yml'],
  });
  assert.ok('unknown' in composeFilesOf(labels('app/docker-compose.yml', '/elsewhere')));
  assert.ok('unknown' in composeFilesOf(labels('docker-compose.yml')));
  assert.ok('unknown' in composeFilesOf({ 'com.docker.compose.service': 'app' }), 'made from stdin: no file label');
});

/** The realistic host model of a seed, tonight and the night before (its history). */
function realistic(seed: number, change?: (h: RealisticHost) => void) {
  const host = realisticHost(seed);
  change?.(host);
  return {
    host,
    tonight: buildRealistic(host, '2026-10-02T03:00:00Z'),
    before: buildRealistic(host, '2026-10-01T03:00:00Z', { before: true }),
  };
}

test('the realistic host model: no MA1004 at all, every check made, though its containers hold keys given inline', () => {
  const inline = { compose: 0, ledger: 0 };
  for (let seed = 1; seed <= 40; seed++) {
    const { tonight, before } = realistic(seed);
    const evaluation = run(tonight, [before]);
    assert.equal(
      evaluation.findings.map((f) => f.message),
      [],
      `seed ${seed}`,
    );
    assert.equal(evaluation.notChecked ?? [], [], `seed ${seed}: MA1004 checked everywhere`);
    for (const s of buildSubjects(tonight, [before]).container_sources) {
      if (s.data.inline_keys.length === 0) continue;
      if (s.data.inline_from.some((f) => f.startsWith('Compose file'))) inline.compose++;
      else inline.ledger++;
    }
  }
  // Not vacuous: both kinds of evidence were there to be used.
  assert.ok(inline.compose >= 20 && inline.ledger >= 20, JSON.stringify(inline));
});

/** A seed whose first claimed `docker run` container (not Compose) holds keys given inline. */
function plainWithInline(): { seed: number; name: string; keys: string[] } {
  for (let seed = 1; ; seed++) {
    const c = realisticHost(seed).containers.find(
      (x) => x.claimed && !x.compose && x.meshLabelled && Object.keys(x.extraEnv).length > 0,
    );
    if (c) return { seed, name: c.name, keys: Object.keys(c.extraEnv).sort() };
  }
}

test('a key given inline that the ledger entry does not declare, the image not setting it, is still MA1004', () => {
  const { seed, name, keys } = plainWithInline();
  const { tonight } = realistic(seed);
  // The entry no longer says what it gives inline: the keys are the case MA1004 exists for.
  const entry = tonight.ledger.entries.find((r) => r.entry.target === name)!;
  delete entry.entry.env;
  const findings = run(tonight).findings;
  assert.equal(
    findings.map((f) => f.discriminator?.split('#')[1]),
    keys,
  );
  for (const f of findings)
    assert.match(f.message, /^\S+ holds \w+=<\d+ chars> but \S+ no longer names \w+ \(the image does not set it\)$/);
});

test('a key removed from the env file of a Compose-made container is still MA1004; one in its environment: is not', () => {
  const m = new HostModel('n1', '2026-10-02T03:00:00Z');
  m.file('/etc/mesh/app/app.env', 'DB=postgresql://app@db:5432/app\n');
  m.file(
    '/etc/mesh/app/docker-compose.yml',
    'services:\n  app:\n    env_file: [app.env]\n    environment:\n      GOMAXPROCS: "4"\n',
    { compose: true },
  );
  m.container({
    name: 'mesh-app_app_1',
    imageEnv: { PATH: '/bin' },
    env: { PATH: '/bin', DB: 'postgresql://app@db:5432/app', GOMAXPROCS: '4', FEATURE_X: 'on' },
    labels: {
      'com.docker.compose.project': 'mesh-app',
      'com.docker.compose.service': 'app',
      'com.docker.compose.project.config_files': '/etc/mesh/app/docker-compose.yml',
      'com.docker.compose.project.working_dir': '/etc/mesh/app',
      'mesh.sources': '/etc/mesh/app/app.env',
    },
  });
  m.ledger([]);
  const findings = run(m.build()).findings;
  assert.equal(
    findings.map((f) => f.message),
    [
      'mesh-app_app_1 holds FEATURE_X=<2 chars> but /etc/mesh/app/app.env no longer names FEATURE_X (the image does not set it)',
    ],
  );
});

test('a Compose file not read: MA1004 not checked there, saying why (the run incomplete) — unless history decides', () => {
  const composed = (composeFile: 'missing' | 'broken') => {
    const m = new HostModel('n1', '2026-10-02T03:00:00Z');
    m.file('/etc/mesh/app/app.env', 'DB=x\n');
    if (composeFile === 'missing') m.missing('/etc/mesh/app/docker-compose.yml');
    else m.file('/etc/mesh/app/docker-compose.yml', 'services: [\n', { compose: true });
    m.container({
      name: 'app',
      imageEnv: { PATH: '/bin' },
      env: { PATH: '/bin', DB: 'x', GOMAXPROCS: '4', OLD: '1' },
      labels: {
        'com.docker.compose.service': 'app',
        'com.docker.compose.project.config_files': '/etc/mesh/app/docker-compose.yml',
        'mesh.sources': '/etc/mesh/app/app.env',
      },
    });
    m.ledger([]);
    return m;
  };
  for (const kind of ['missing', 'broken'] as const) {
    const evaluation = run(composed(kind).build());
    assert.equal(evaluation.findings, [], kind);
    assert.is(evaluation.complete, false, kind);
    const notChecked = evaluation.notChecked ?? [];
    assert.equal(
      notChecked.map((n) => [n.ruleId, n.subject.id, n.sources]),
      [['MA1004', 'app', ['files']]],
      kind,
    );
    assert.match(notChecked[0]!.reasons[0]!, 'whether app was given GOMAXPROCS, OLD inline is not known');
    assert.match(notChecked[0]!.reasons[0]!, '/etc/mesh/app/docker-compose.yml');
  }
  // The file named OLD the night before: history says where it came from, whatever the Compose file says.
  const before = new HostModel('n1', '2026-10-01T03:00:00Z');
  before.file('/etc/mesh/app/app.env', 'DB=x\nOLD=1\nGOMAXPROCS=4\n');
  before.ledger([]);
  const evaluation = run(composed('missing').build(), [before.build()]);
  assert.equal(
    evaluation.findings.map((f) => f.discriminator),
    ['/etc/mesh/app/app.env#GOMAXPROCS', '/etc/mesh/app/app.env#OLD'],
  );
  assert.match(evaluation.findings[1]!.message, '(an earlier snapshot of the file named it)');
});

test('the ledger not read: whether a docker-run container was given a key inline is unknown, not a finding', () => {
  const { seed, name } = plainWithInline();
  const { tonight } = realistic(seed);
  tonight.ledger = { ...tonight.ledger, available: false, entries: [] };
  tonight.problems.push({ source: 'ledger', message: 'the ledger was not read' });
  const evaluation = run(tonight);
  assert.equal(evaluation.findings, []);
  assert.ok(
    (evaluation.notChecked ?? []).some((n) => n.subject.id === name && n.sources.includes('ledger')),
    JSON.stringify(evaluation.notChecked),
  );
});

test.run();
