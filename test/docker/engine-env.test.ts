import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { ENGINE_ADDED_ENV } from '../../src/engine/engine-env.js';
import { spawnCli } from '../support/cli.js';
import {
  bareImage,
  createContainer,
  createWithPodman,
  forEachEngine,
  privatePodmanWith,
  removeContainers,
  runContainer,
  type Engine,
} from './engine.js';
import { envText, LiveHost, sha256, type LiveReport } from './live-host.js';

// Issue 30 on each real engine: what the engine writes into a container's env by itself, measured; a
// container of an image that sets no env (an imported or FROM scratch image), created from an env file
// that never named PATH, has no finding; a key an earlier snapshot of the file named and the file
// dropped is still MA1004, on Podman too, where the engine writes that key itself.
forEachEngine('engine-env', scenario);

function scenario(e: Engine, it: Test): void {
  const host = new LiveHost();
  const pid = process.pid;
  const PROBE_CREATED = `ma30-probe-created-${e.kind}-${pid}`;
  const PROBE_RUNNING = `ma30-probe-running-${e.kind}-${pid}`;
  const SVC = `ma30-svc-${e.kind}-${pid}`;
  const FLAGGED = `ma30-flagged-${e.kind}-${pid}`;
  const HOSTNAME = 'live-30';
  const heldKeys = (name: string): string[] =>
    ((JSON.parse(e.docker(['inspect', '--format', '{{json .Config.Env}}', name])) as string[] | null) ?? []).map(
      (kv) => kv.split('=')[0]!,
    );

  let clean: LiveReport | undefined;

  it("what the engine writes into a container with no env, from an image with no env, is the scanner's list for that engine", () => {
    const image = bareImage(e);
    assert.is(
      e.docker(['image', 'inspect', '--format', '{{json .Config.Env}}', image]).trim(),
      'null',
      'the image sets no env',
    );
    createContainer(e, PROBE_CREATED, ['--network', 'none'], ['sleep', '3600'], image);
    runContainer(e, PROBE_RUNNING, ['--network', 'none'], ['sleep', '3600'], image);
    // Podman writes some keys at create and more at start: the list is what a container may hold.
    const added = [...new Set([...heldKeys(PROBE_CREATED), ...heldKeys(PROBE_RUNNING)])].sort();
    assert.equal(added, [...ENGINE_ADDED_ENV[e.kind].added].sort(), `${e.kind} wrote ${added.join(', ') || 'nothing'}`);
  });

  if (e.kind === 'podman') {
    it("Podman passes the proxy variables of its own environment into a container made through its own API, not through the Docker one: the scanner's list of them", () => {
      const proxies = Object.fromEntries(
        ENGINE_ADDED_ENV.podman.fromEngineEnvironment.map((k) => [k, /no_proxy/i.test(k) ? '*' : 'http://127.0.0.1:9']),
      );
      // Every proxy variable the list names, set in a Podman service's own environment (no_proxy `*`, so
      // that nothing is ever sent to the proxy address, which nothing serves).
      const proxied = privatePodmanWith(proxies);
      const image = bareImage(proxied);
      const keysOf = (name: string) =>
        (JSON.parse(proxied.docker(['inspect', '--format', '{{json .Config.Env}}', name])) as string[]).map(
          (kv) => kv.split('=')[0]!,
        );
      const added = new Set(ENGINE_ADDED_ENV.podman.added);
      createWithPodman(proxied, `ma30-probe-podman-${pid}`, ['--network', 'none'], ['sleep', '3600'], image);
      createContainer(proxied, `ma30-probe-compat-${pid}`, ['--network', 'none'], ['sleep', '3600'], image);
      const byPodman = keysOf(`ma30-probe-podman-${pid}`);
      assert.equal(
        byPodman.filter((k) => !added.has(k)).sort(),
        Object.keys(proxies).sort(),
        `Podman wrote ${byPodman.join(', ')}`,
      );
      const byCompat = keysOf(`ma30-probe-compat-${pid}`);
      assert.equal(
        byCompat.filter((k) => !added.has(k)),
        [],
        `through the Docker API Podman wrote ${byCompat.join(', ')}`,
      );
      removeContainers(proxied, [`ma30-probe-podman-${pid}`, `ma30-probe-compat-${pid}`]);
    });
  }

  it('a container of that image, created from an env file without PATH, and one whose file names PATH: no finding (clean stays clean)', () => {
    const image = bareImage(e);
    const svcEnv = host.write(
      host.path('svc', 'svc.env'),
      envText({ DB_URL: 'postgresql://svc@db.mesh.internal:20000/svc', MODE: 'prod' }),
    );
    const flaggedEnv = host.write(
      host.path('flagged', 'flagged.env'),
      envText({ MODE: 'prod', FEATURE_X: 'on', PATH: '/opt/flagged/bin:/bin', TERM: 'dumb' }),
    );
    const labels = (module: string, source: string) => [
      '--label',
      `mesh.module=${module}`,
      '--label',
      `mesh.resource=${module}.server`,
      '--label',
      `mesh.sources=${source}`,
      '--label',
      `mesh.source-digests=${sha256(readFileSync(source, 'utf8'))}`,
    ];
    runContainer(
      e,
      SVC,
      ['--network', 'none', '--env-file', svcEnv, ...labels('svc', svcEnv)],
      ['sleep', '3600'],
      image,
    );
    runContainer(
      e,
      FLAGGED,
      ['--network', 'none', '--env-file', flaggedEnv, ...labels('flagged', flaggedEnv)],
      ['sleep', '3600'],
      image,
    );
    host.ledger([
      { id: 'svc.server', type: 'container', origin: 'declared', target: SVC, sources: [svcEnv] },
      { id: 'svc.env', type: 'file', origin: 'declared', target: svcEnv },
      { id: 'flagged.server', type: 'container', origin: 'declared', target: FLAGGED, sources: [flaggedEnv] },
      { id: 'flagged.env', type: 'file', origin: 'declared', target: flaggedEnv },
      { id: 'probe.created', type: 'container', origin: 'declared', target: PROBE_CREATED },
      { id: 'probe.running', type: 'container', origin: 'declared', target: PROBE_RUNNING },
    ]);
    const run = host.scan(e.dockerHost, HOSTNAME);
    clean = run.report;
    assert.ok(run.report.summary.complete, `${run.stderr} ${JSON.stringify(run.report.notifications)}`);
    assert.equal(run.report.findings, [], 'no finding on a clean host');
    assert.is(run.code, 0, run.stderr);
  });

  it('the snapshot keeps which engine it read (GET /version), so a saved snapshot is evaluated as the live scan was', () => {
    assert.ok(clean);
    const dir = join(host.out, 'history', HOSTNAME);
    const kept = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
    const snapshot = JSON.parse(readFileSync(join(dir, kept[0]!), 'utf8')) as { docker: { kind?: string } };
    assert.is(snapshot.docker.kind, e.kind);
    const svc = (
      JSON.parse(readFileSync(join(dir, kept[0]!), 'utf8')) as {
        containers: { name: string; env: Record<string, unknown> }[];
      }
    ).containers.find((c) => c.name === SVC);
    // What made the false finding on Podman (issue 30): a PATH the file never named.
    assert.is(svc?.env['PATH'] !== undefined, e.kind === 'podman', JSON.stringify(Object.keys(svc?.env ?? {})));
  });

  it('the file drops FEATURE_X, PATH and TERM: each is MA1004 on that container alone, on Podman by the history of the file', () => {
    const flaggedEnv = host.path('flagged', 'flagged.env');
    host.replaceByRename(flaggedEnv, envText({ MODE: 'prod' }));
    const run = host.scan(e.dockerHost, HOSTNAME);
    assert.ok(run.report.summary.complete, run.stderr);
    assert.equal(
      run.report.findings.filter((f) => f.subject.id !== FLAGGED),
      [],
      'the other containers stay clean',
    );
    const dropped = run.report.findings.filter((f) => f.ruleId === 'MA1004');
    assert.equal(
      dropped.map((f) => f.discriminator),
      ['FEATURE_X', 'PATH', 'TERM'].map((k) => `${flaggedEnv}#${k}`),
      JSON.stringify(run.report.findings),
    );
    const evidence = (key: string) => dropped.find((f) => f.discriminator === `${flaggedEnv}#${key}`)!.message;
    assert.match(
      evidence('FEATURE_X'),
      `${FLAGGED} holds FEATURE_X=<2 chars> but ${flaggedEnv} no longer names FEATURE_X (the image does not set it)`,
    );
    const engineKey =
      e.kind === 'podman' ? '(an earlier snapshot of the file named it)' : '(the image does not set it)';
    assert.match(evidence('PATH'), engineKey);
    assert.match(evidence('TERM'), engineKey);
    // The rewritten file's digest no longer matches the one the container was made from.
    assert.equal(
      run.report.findings.filter((f) => f.ruleId !== 'MA1004').map((f) => f.ruleId),
      ['MA1003'],
    );

    // Kept and evaluated later, with the history beside it: the same findings.
    const dir = join(host.out, 'history', HOSTNAME);
    const kept = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
    const again = JSON.parse(
      spawnCli(['evaluate', join(dir, kept.at(-1)!), '--history', dir, '--format', 'json', '--out', '-']).stdout,
    ) as LiveReport;
    assert.equal(again.findings, run.report.findings);
  });

  it('clean-up: remove the containers this test made', () => {
    removeContainers(e, [PROBE_CREATED, PROBE_RUNNING, SVC, FLAGGED]);
  });
}
