import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { tempDir } from '../support/cli.js';
import { createContainer, forEachEngine, removeContainers, type Engine } from './engine.js';
import { envText, LiveHost } from './live-host.js';

/*
 * Keys given inline beside an env file are not keys dropped from it (MA1004), on each real engine:
 * two services made by Debian's docker-compose 1.29 (`up --no-start` in the project folder, as an
 * operator runs it: its labels then name the Compose file relative to it; `network_mode: none`), one
 * with `environment:` in the map form beside `env_file:`, one in the list form (a `KEY` alone taken
 * from Compose's shell); and one container made with `docker create -e UMASK=… --env-file`, whose
 * ledger entry declares `env: [UMASK]`. The image sets none of those keys. A clean host has no
 * finding; a key removed from the env file is MA1004 on every container, the inline keys never; a
 * Compose file that can no longer be read leaves MA1004 not checked on its containers (exit 3).
 */

const toolEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: tempDir('ma-inline-home-', '/tmp'),
  FROM_SHELL: 'given-by-the-shell',
  ...extra,
});

function composeMissing(): string | null {
  const r = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8', env: toolEnv() });
  return r.status === 0
    ? null
    : `docker-compose is not installed${r.error ? ` (${r.error.message})` : ''}: .ci/run must apt-get install docker-compose`;
}

function heldKeys(e: Engine, name: string): string[] {
  const [inspect] = JSON.parse(e.docker(['inspect', name])) as { Config: { Env: string[] | null } }[];
  return (inspect?.Config.Env ?? []).map((kv) => kv.split('=')[0]!).sort();
}

forEachEngine('inline-env', (e, it) => {
  const missing = composeMissing();
  if (missing !== null) {
    // In CI a missing tool is a failure, never a skip.
    if (process.env['CI'] === 'true') {
      it('docker-compose 1.29 is installed', () => {
        throw new Error(missing);
      });
    } else it.skip(`inline-env (${missing})`, () => undefined);
    return;
  }

  const host = new LiveHost();
  const tag = `${e.kind}-${process.pid}`;
  const MAPPED = `ma-inline-mapped-${tag}`;
  const LISTED = `ma-inline-listed-${tag}`;
  const PLAIN = `ma-inline-plain-${tag}`;
  const HOSTNAME = `live-inline-${e.kind}`;
  const INLINE = ['FROM_SHELL', 'GOMAXPROCS', 'INSTANCE_ID', 'UMASK'];

  it('Compose environment: beside env_file:, and a declared `-e`: no finding; a key removed from the file: MA1004 on each container, never an inline key; a Compose file not readable: not checked, exit 3', () => {
    const envFile = host.write(
      host.path('app', 'app.env'),
      envText({ DB_URL: 'postgresql://app@db.mesh.internal:20000/app', MODE: 'prod', FEATURE_X: 'on' }),
    );
    const mesh = (name: string): Record<string, string> => ({
      'mesh.module': 'app',
      'mesh.resource': `app.${name}`,
      'mesh.sources': envFile,
      'mesh-audit-test': e.run,
    });
    const labelLines = (name: string) =>
      Object.entries(mesh(name)).map(([k, v]) => `      ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    const composeText = [
      'version: "2.4"',
      'services:',
      '  mapped:',
      `    image: ${JSON.stringify(e.image)}`,
      `    container_name: ${MAPPED}`,
      '    command: ["sleep", "3600"]',
      '    network_mode: none',
      '    env_file: [app.env]',
      '    environment:',
      '      GOMAXPROCS: "4"',
      '    labels:',
      ...labelLines(MAPPED),
      '  listed:',
      `    image: ${JSON.stringify(e.image)}`,
      `    container_name: ${LISTED}`,
      '    command: ["sleep", "3600"]',
      '    network_mode: none',
      '    env_file: [app.env]',
      '    environment:',
      '      - INSTANCE_ID=7',
      '      - FROM_SHELL',
      '    labels:',
      ...labelLines(LISTED),
      '',
    ].join('\n');
    const composeFile = host.write(host.path('app', 'docker-compose.yml'), composeText);
    try {
      const up = spawnSync('docker-compose', ['-p', `ma-inline-${tag}`, 'up', '--no-start'], {
        encoding: 'utf8',
        env: toolEnv({ DOCKER_HOST: e.dockerHost }),
        cwd: host.path('app'),
        timeout: 180_000,
      });
      assert.is(up.status, 0, up.stderr);
      createContainer(
        e,
        PLAIN,
        [
          '--network',
          'none',
          '-e',
          'UMASK=022',
          '--env-file',
          envFile,
          ...Object.entries(mesh(PLAIN)).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
        ],
        ['sleep', '3600'],
      );
      // Not vacuous: each container holds its inline keys, which the image does not set.
      assert.ok(heldKeys(e, MAPPED).includes('GOMAXPROCS'), heldKeys(e, MAPPED).join(' '));
      assert.ok(
        ['INSTANCE_ID', 'FROM_SHELL'].every((k) => heldKeys(e, LISTED).includes(k)),
        heldKeys(e, LISTED).join(' '),
      );
      assert.ok(heldKeys(e, PLAIN).includes('UMASK'));
      const imageKeys = (
        (JSON.parse(e.docker(['image', 'inspect', '--format', '{{json .Config.Env}}', e.image])) as string[] | null) ??
        []
      ).map((kv) => kv.split('=')[0]!);
      assert.equal(
        imageKeys.filter((k) => INLINE.includes(k)),
        [],
      );
      // Compose wrote the file's name as found in the project folder.
      const [compose] = JSON.parse(e.docker(['inspect', MAPPED])) as { Config: { Labels: Record<string, string> } }[];
      assert.is(compose!.Config.Labels['com.docker.compose.project.config_files'], 'docker-compose.yml');

      host.ledger([
        { id: `app.${MAPPED}`, type: 'container', origin: 'declared', target: MAPPED, sources: [envFile] },
        { id: `app.${LISTED}`, type: 'container', origin: 'declared', target: LISTED, sources: [envFile] },
        {
          id: `app.${PLAIN}`,
          type: 'container',
          origin: 'declared',
          target: PLAIN,
          sources: [envFile],
          env: ['UMASK'],
        },
        { id: 'app.env', type: 'file', origin: 'declared', target: envFile },
        { id: 'app.compose', type: 'file', origin: 'declared', target: composeFile },
      ]);
      const clean = host.scan(e.dockerHost, HOSTNAME);
      assert.ok(clean.report.summary.complete, `${clean.stderr} ${JSON.stringify(clean.report.notifications)}`);
      assert.equal(
        clean.report.findings.map((f) => [f.ruleId, f.subject.id, f.message]),
        [],
        'no finding on the clean host',
      );
      assert.is(clean.code, 0, clean.stderr);

      // The mesh removes FEATURE_X from the file; every container still holds it.
      host.replaceByRename(envFile, envText({ DB_URL: 'postgresql://app@db.mesh.internal:20000/app', MODE: 'prod' }));
      const removed = host.scan(e.dockerHost, HOSTNAME);
      assert.ok(removed.report.summary.complete, removed.stderr);
      const dropped = removed.report.findings.filter((f) => f.ruleId === 'MA1004');
      assert.equal(
        dropped.map((f) => [f.subject.id, f.discriminator]).sort(),
        [MAPPED, LISTED, PLAIN].sort().map((name) => [name, `${envFile}#FEATURE_X`]),
        JSON.stringify(removed.report.findings),
      );
      for (const f of dropped)
        assert.match(f.message, `but ${envFile} no longer names FEATURE_X (the image does not set it)`);
      assert.equal(
        removed.report.findings.filter((f) => INLINE.some((k) => f.message.includes(k))),
        [],
        'no inline key is taken for a dropped one',
      );
      assert.is(removed.code, 1);

      // The Compose file is broken: its containers' inline keys are unknown, so MA1004 is not checked on them.
      writeFileSync(composeFile, 'services: [\n');
      const broken = host.scan(e.dockerHost, HOSTNAME);
      assert.is(broken.code, 3, broken.stderr);
      assert.is(broken.report.summary.complete, false);
      assert.equal(
        broken.report.findings.filter((f) => f.ruleId === 'MA1004').map((f) => f.subject.id),
        [PLAIN],
        'the docker-run container, whose evidence is the ledger, is still checked',
      );
      const notes = broken.report.notifications.map((n) => n.message).join('\n');
      assert.match(notes, `${composeFile} not read as a Compose file`);
      const notChecked = broken.report.notifications.find((n) => n.message.startsWith('rule MA1004 not checked on'));
      assert.ok(notChecked, notes);
      for (const name of [MAPPED, LISTED]) assert.match(notChecked.message, name);
      assert.match(notChecked.message, /whether ma-inline-\S+ was given .+ inline is not known/, notChecked.message);
      assert.match(notChecked.message, 'docker-compose.yml');
    } finally {
      removeContainers(e, [MAPPED, LISTED, PLAIN]);
    }
  });
});
