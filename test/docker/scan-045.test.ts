import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnCli } from '../support/cli.js';
import { bareImage, forEachEngine, removeContainers, runContainer, type Engine } from './engine.js';
import { fingerprintsOf, LiveHost, envText, sha256, type LiveReport } from './live-host.js';

// 045 on each real engine (Docker, Podman): a container created from a composed env file of three
// keys; the file is then rewritten by rename with one key changed.
forEachEngine('045', (e, it) => scenario045(e, it));

function scenario045(e: Engine, it: Test): void {
  const host = new LiveHost();
  const APP = `ma045-app-${e.kind}-${process.pid}`;
  const CONTROL = `ma045-control-${e.kind}-${process.pid}`;
  const CANARY = `canary-${process.pid}-7f3a9c`;

  it('045: no finding while the files are as the containers were made from them; then exactly the rewritten key for that container, the stale single-file bind mount, nothing for the control', () => {
    const eng = e;
    const appEnv = host.write(
      host.path('app', 'app.env'),
      envText({ DATABASE_URL: `postgresql://app:${CANARY}@:20000/app`, APP_MODE: 'prod', APP_TOKEN: `tok-${CANARY}` }),
    );
    const appIni = host.write(host.path('app', 'app.ini'), '[server]\nport = 2999\n');
    const controlEnv = host.write(
      host.path('control', 'control.env'),
      envText({ CONTROL_KEY: `ctl-${CANARY}`, CONTROL_MODE: 'steady', CONTROL_URL: 'http://127.0.0.1:1/' }),
    );
    const labels = (module: string, resource: string, source: string) => [
      '--label',
      `mesh.module=${module}`,
      '--label',
      `mesh.resource=${resource}`,
      '--label',
      `mesh.sources=${source}`,
      '--label',
      `mesh.source-digests=${sha256(readFileSync(source, 'utf8'))}`,
    ];
    runContainer(
      eng,
      APP,
      [
        '--network',
        'none',
        '--env-file',
        appEnv,
        '-v',
        `${appIni}:/etc/app/app.ini:ro`,
        ...labels('app', 'app.server', appEnv),
      ],
      ['sleep', '3600'],
    );
    // The control is clean and must stay so on every engine: made, as static services are, from an image
    // that sets no env (Podman then writes its own PATH, TERM, … into it: issue 30).
    runContainer(
      eng,
      CONTROL,
      ['--network', 'none', '--env-file', controlEnv, ...labels('control', 'control.server', controlEnv)],
      ['sleep', '3600'],
      bareImage(eng),
    );
    host.ledger([
      { id: 'app.server', type: 'container', origin: 'declared', target: APP, sources: [appEnv] },
      { id: 'app.env', type: 'file', origin: 'declared', target: appEnv },
      { id: 'app.ini', type: 'file', origin: 'declared', target: appIni },
      { id: 'control.server', type: 'container', origin: 'declared', target: CONTROL, sources: [controlEnv] },
      { id: 'control.env', type: 'file', origin: 'declared', target: controlEnv },
    ]);

    // Clean stays clean: both containers made from their current files, the host has no finding (exit
    // 0). Under another host name, so the 045 scan below keeps a history of its own.
    const fresh = host.scan(eng.dockerHost, 'live-045-before');
    assert.ok(fresh.report.summary.complete, fresh.stderr);
    assert.equal(fresh.report.findings, [], 'no finding before the file is rewritten');
    assert.is(fresh.code, 0, fresh.stderr);

    // The mesh learns the database address and rewrites the file; the container keeps what it had.
    host.replaceByRename(
      appEnv,
      envText({
        DATABASE_URL: `postgresql://app:${CANARY}@db.mesh.internal:20000/app`,
        APP_MODE: 'prod',
        APP_TOKEN: `tok-${CANARY}`,
      }),
    );
    host.replaceByRename(appIni, '[server]\nport = 2999\nworkers = 4\n');

    const { report, code, stderr } = host.scan(eng.dockerHost, 'live-045');
    assert.ok(report.summary.complete, `complete scan: ${stderr} ${JSON.stringify(report.notifications)}`);
    assert.is(code, 1);
    const about = (name: string) => report.findings.filter((f) => f.subject.id === name);
    const envDrift = about(APP).filter((f) => f.ruleName === 'container-env-matches-composed-file');
    assert.equal(
      envDrift.map((f) => f.discriminator),
      [`${appEnv}#DATABASE_URL`],
    );
    assert.match(envDrift[0]!.message, 'DATABASE_URL=postgresql://…@:20000/… but');
    assert.match(envDrift[0]!.message, 'now says DATABASE_URL=postgresql://…@db.mesh.internal:20000/…');
    const mount = about(APP).filter((f) => f.ruleName === 'bind-mounted-file-current');
    assert.is(mount.length, 1, JSON.stringify(about(APP)));
    assert.match(mount[0]!.message, '/etc/app/app.ini');
    assert.equal(about(CONTROL), [], 'the control container has no finding');
    assert.equal(about(controlEnv), [], 'nor its file');
    liveReport = report;
  });

  let liveReport: LiveReport | undefined;

  it("the container's real env was read from /proc, and its image's own env from the engine, under the scan's one key", () => {
    const historyDir = join(host.out, 'history', 'live-045');
    const kept = readdirSync(historyDir).filter((n) => n.endsWith('.json'));
    const snapshot = JSON.parse(readFileSync(join(historyDir, kept[0]!), 'utf8')) as { containers: LiveContainer[] };
    const app = snapshot.containers.find((c) => c.name === APP);
    assert.ok(app, 'the app container is in the snapshot');
    assert.is(app.proc.available, true, JSON.stringify(app.proc));
    assert.equal(
      app.proc.env?.['DATABASE_URL'],
      app.env['DATABASE_URL'],
      'the running process holds what the container was created with',
    );
    assert.ok(app.proc.env?.['APP_TOKEN'] !== undefined);
    assert.ok(app.imageEnv, 'the image was inspected');
    assert.equal(app.imageEnv['PATH'], app.env['PATH'], "the image's PATH=/bin, under the same key as the container's");
    assert.is(app.imageEnv['DATABASE_URL'], undefined, "the image does not hold the container's keys");
  });

  it('the kept snapshot, evaluated later with `evaluate`, gives the same findings', () => {
    assert.ok(liveReport);
    const historyDir = join(host.out, 'history', 'live-045');
    const kept = readdirSync(historyDir).filter((n) => n.endsWith('.json'));
    assert.is(kept.length, 1);
    const again = spawnCli(['evaluate', join(historyDir, kept[0]!), '--format', 'json', '--out', '-']);
    const report = JSON.parse(again.stdout) as LiveReport;
    assert.equal(report.findings, liveReport.findings);
  });

  it('snapshot -o then evaluate gives the fingerprints the scan gave', () => {
    assert.ok(liveReport);
    const saved = host.snapshotThenEvaluate(e.dockerHost, 'live-045');
    assert.is(saved.snapshot.code, 0, saved.snapshot.stderr);
    assert.ok(liveReport.findings.length > 0);
    assert.equal(fingerprintsOf(saved.report), fingerprintsOf(liveReport));
  });

  it('no raw env value of this test appears in any report or saved snapshot', () => {
    const files = [
      join(host.out, 'mesh-audit.json'),
      ...readdirSync(join(host.out, 'history', 'live-045')).map((n) => join(host.out, 'history', 'live-045', n)),
    ];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const variant of [CANARY, Buffer.from(CANARY).toString('base64'), encodeURIComponent(`app:${CANARY}`)]) {
        assert.not.ok(text.includes(variant), `${variant} in ${file}`);
      }
    }
  });

  it('with DEBUG=* and NODE_DEBUG=http,net no raw value reaches stdout or stderr (HTTP client debug output can log bodies)', () => {
    const out = host.scan(e.dockerHost, 'live-045-debug', ['--format', 'text,json'], {
      DEBUG: '*',
      NODE_DEBUG: 'http,net',
    });
    for (const text of [out.stdout, out.stderr]) assert.not.ok(text.includes(CANARY), 'canary printed');
    assert.is(out.code, 1);
  });

  it('clean-up: remove the containers this test made', () => {
    removeContainers(e, [APP, CONTROL]);
  });
}

/** The part of a saved snapshot's container these tests read. */
interface LiveContainer {
  name: string;
  env: Record<string, unknown>;
  imageEnv?: Record<string, unknown>;
  proc: { available: boolean; env?: Record<string, unknown> };
}
