import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnCli } from '../support/cli.js';
import { bareImage, forEachEngine, removeContainers, runContainer, type Engine } from './engine.js';
import { envText, fingerprintsOf, LiveHost, type LiveReport } from './live-host.js';

// 097 on a real engine: a ledger entry's target moves from the implicit container name to an
// explicit one; the host raises the new container and leaves the old one running, on the host
// network, listening on every interface. A file entry's path moves too; the old file stays. On each
// real engine (Docker, Podman).
forEachEngine('097', scenario097);

function scenario097(e: Engine, it: Test, index: number): void {
  const host = new LiveHost();
  const OLD = `ma097-forge-forge.server-${e.kind}-${process.pid}`;
  const NEW = `ma097-forge-${e.kind}-${process.pid}`;
  // High ports derived from the pid, so parallel runs on one machine do not collide; two per engine.
  const OLD_PORT = 20000 + ((process.pid * 4 + index * 2) % 20000);
  const NEW_PORT = OLD_PORT + 1;
  const meshLabels = ['--label', 'mesh.module=forge', '--label', 'mesh.resource=forge.server'];
  // Each forge container is made from its current env file and an image that sets no env (Podman then
  // writes its own PATH, TERM, … into it): a claimed one must have no finding on either engine (issue 30).
  const forgeEnv = host.path('forge', 'forge.env');
  const fromFile = ['--env-file', forgeEnv, '--label', `mesh.sources=${forgeEnv}`];

  let before: LiveReport | undefined;
  let after: LiveReport | undefined;

  it('before the rename: the implicit container is claimed and clean, and so is the host', () => {
    const eng = e;
    const oldIni = host.write(host.path('forge', 'app.ini'), '[server]\nROOT_URL = http://127.0.0.1/\n');
    host.write(forgeEnv, envText({ FORGE_ROOT_URL: 'http://127.0.0.1/', FORGE_MODE: 'prod' }));
    runContainer(
      eng,
      OLD,
      ['--network', 'host', ...meshLabels, ...fromFile],
      ['httpd', '-f', '-p', `0.0.0.0:${OLD_PORT}`, '-h', '/www'],
      bareImage(eng),
    );
    host.ledger([
      {
        id: 'forge.server',
        type: 'container',
        module: 'forge',
        origin: 'declared',
        target: OLD,
        holds: [OLD_PORT],
        sources: [forgeEnv],
      },
      { id: 'forge.config', type: 'file', module: 'forge', origin: 'declared', target: oldIni },
    ]);
    const run = host.scan(eng.dockerHost, 'live-097');
    before = run.report;
    assert.ok(run.report.summary.complete, run.stderr);
    assert.equal(run.report.findings, [], 'no finding on the host before the rename');
    assert.is(run.code, 0, run.stderr);
  });

  it('after the rename: the new container is claimed with no finding; the old one is unclaimed, mesh-written, exposed, naming its port; the old file is stale', () => {
    const eng = e;
    assert.ok(before);
    const newIni = host.write(host.path('forge', 'conf', 'app.ini'), '[server]\nROOT_URL = http://127.0.0.1/\n');
    runContainer(
      eng,
      NEW,
      ['--network', 'host', ...meshLabels, ...fromFile],
      ['httpd', '-f', '-p', `127.0.0.1:${NEW_PORT}`, '-h', '/www'],
      bareImage(eng),
    );
    // The ledger keeps one entry per id: rewriting it erases the old targets.
    host.ledger([
      {
        id: 'forge.server',
        type: 'container',
        module: 'forge',
        origin: 'declared',
        target: NEW,
        holds: [NEW_PORT],
        sources: [forgeEnv],
      },
      { id: 'forge.config', type: 'file', module: 'forge', origin: 'declared', target: newIni },
    ]);
    const run = host.scan(eng.dockerHost, 'live-097');
    after = run.report;
    assert.ok(run.report.summary.complete, run.stderr);
    assert.is(run.code, 1);
    const about = (id: string) => run.report.findings.filter((f) => f.subject.id === id);
    assert.equal(about(NEW), [], 'the new container is claimed and clean');

    const unclaimed = about(OLD).find((f) => f.ruleName === 'no-unclaimed-container');
    assert.ok(unclaimed, JSON.stringify(about(OLD)));
    assert.is(unclaimed.severity, 'error');
    assert.match(unclaimed.message, 'written by the mesh and lost by its record');
    assert.match(unclaimed.message, `exposed on the host network, listening on 0.0.0.0:${OLD_PORT}/tcp`);
    const stale = about(OLD).find((f) => f.ruleName === 'no-stale-container-at-old-target');
    assert.ok(stale);
    assert.match(stale.message, `forge.server moved from ${OLD} to ${NEW}`);

    const oldIni = host.path('forge', 'app.ini');
    const staleFile = about(oldIni).find((f) => f.ruleName === 'no-stale-file-at-old-target');
    assert.ok(staleFile, `stale file found through history: ${JSON.stringify(run.report.findings)}`);
    assert.match(staleFile.message, `forge.config moved from ${oldIni} to ${newIni}`);
    assert.match(staleFile.message, `${oldIni} is still present`);
  });

  it('the kept snapshot evaluated later with its history gives the same findings', () => {
    assert.ok(after);
    const dir = join(host.out, 'history', 'live-097');
    const kept = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
    assert.is(kept.length, 2, 'one snapshot kept per scan');
    const again = spawnCli(['evaluate', join(dir, kept[1]!), '--history', dir, '--format', 'json', '--out', '-']);
    const report = JSON.parse(again.stdout) as LiveReport;
    assert.equal(report.findings, after.findings);
    // Without its history too: the kept snapshot carries the memory of former targets itself.
    const alone = JSON.parse(
      spawnCli(['evaluate', join(dir, kept[1]!), '--format', 'json', '--out', '-']).stdout,
    ) as LiveReport;
    assert.equal(alone.findings, after.findings);
    const memory = (
      JSON.parse(readFileSync(join(dir, kept[1]!), 'utf8')) as {
        memory?: { formerTargets: { id: string; target: string }[] };
      }
    ).memory;
    assert.equal(
      memory?.formerTargets.map((r) => r.id).sort(),
      ['forge.config', 'forge.server'],
      JSON.stringify(memory),
    );
  });

  it('snapshot -o (with the output folder as history) then evaluate gives the fingerprints the scan gave', () => {
    assert.ok(after);
    const saved = host.snapshotThenEvaluate(e.dockerHost, 'live-097');
    assert.is(saved.snapshot.code, 0, saved.snapshot.stderr);
    assert.equal(fingerprintsOf(saved.report), fingerprintsOf(after));
    assert.ok(
      saved.report.findings.some((f) => f.ruleName === 'no-stale-file-at-old-target'),
      'the file at the former target was read',
    );
  });

  it('clean-up: remove the containers this test made', () => {
    removeContainers(e, [OLD, NEW]);
  });
}
