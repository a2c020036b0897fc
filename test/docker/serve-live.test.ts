import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { startAlertmanager } from '../support/alertmanager.js';
import { engineProxy, on } from '../support/engine-proxy.js';
import { startServe, type ServeChild } from '../support/serve-child.js';
import { waitUntil } from '../support/wait.js';
import { spawnCli, tempDir } from '../support/cli.js';
import { forEachEngine, removeContainers, runContainer, stopOrStartEngine, type Engine } from './engine.js';
import { envText, LiveHost, sha256 } from './live-host.js';

/*
 * Issue 44 on each real engine (Docker, Podman): `mesh-audit serve` keeps its answer current from the engine's events
 * and the folder watches, without being asked. Each change below is made the way the mesh or an operator makes it,
 * and the answer is awaited for at most 5 s (the acceptance's bound; a full read of this host takes well under one).
 * The engine is reached through a recording proxy (test/support/engine-proxy.ts): it shows that only GET reaches the
 * engine, the events stream included, and it cuts that stream as a restarted engine does.
 * Listeners are left out of scope (`listener:*`): this test judges what it made, not the machine's own sockets.
 */
forEachEngine('serve', (e, it) => scenario(e, it));

const CHANGE_MS = 5_000;

interface Finding {
  ruleId: string;
  subject: { kind: string; id: string };
}
const findingsOf = (body: string): Finding[] => (JSON.parse(body) as { findings: Finding[] }).findings;
const stateOf = (body: string): string => (JSON.parse(body) as { state: string }).state;
const has = (body: string, ruleId: string, id: string): boolean =>
  findingsOf(body).some((f) => f.ruleId === ruleId && f.subject.id === id);

function scenario(e: Engine, it: Test): void {
  it('serve: clean, then each change answered within 5 s; a cut events stream is incomplete, then current again', async () => {
    const host = new LiveHost();
    const APP = `maserve-app-${e.kind}-${process.pid}`;
    const STRAY = `maserve-stray-${e.kind}-${process.pid}`;
    const appEnv = host.write(host.path('app', 'app.env'), envText({ APP_MODE: 'prod', APP_URL: 'http://db:1/' }));
    const labels = (module: string, resource: string, source?: string) => [
      '--label',
      `mesh.module=${module}`,
      '--label',
      `mesh.resource=${resource}`,
      ...(source === undefined
        ? []
        : [
            '--label',
            `mesh.sources=${source}`,
            '--label',
            `mesh.source-digests=${sha256(readFileSync(source, 'utf8'))}`,
          ]),
    ];
    runContainer(
      e,
      APP,
      ['--network', 'none', '--env-file', appEnv, ...labels('app', 'app.server', appEnv)],
      ['sleep', '3600'],
    );
    const entries = [
      { id: 'app.server', type: 'container', origin: 'declared', target: APP, sources: [appEnv] },
      { id: 'app.env', type: 'file', origin: 'declared', target: appEnv },
    ];
    host.ledger(entries);
    const proxy = await engineProxy(e.dockerHost);
    const am = await startAlertmanager();
    // This host's alerts of a rule (one finding of each rule here).
    const firing = async (ruleId: string) =>
      (await am.alerts()).some((a) => a.labels['rule_id'] === ruleId && a.labels['host'] === `serve-${e.kind}`);
    const socket = join(tempDir('ma-serve-live-', '/tmp'), 'serve.sock');
    let serve: ServeChild | undefined;
    try {
      serve = startServe(
        [
          '--docker-host',
          proxy.dockerHost,
          '--ledger',
          host.ledgerPath,
          '--managed-root',
          host.managedRoot,
          '--hostname',
          `serve-${e.kind}`,
          '--exclude',
          'listener:*',
          '--alertmanager',
          am.url,
          // What each read found goes to stderr, shown when a step fails.
          '--verbose',
        ],
        socket,
      );
      const s = serve;
      await s.until(
        'clean after the first read',
        '/v1/status',
        (a) => a.code === 200 && stateOf(a.body) === 'clean',
        60_000,
      );

      // 045: the composed file rewritten by rename; the container keeps what it was made with.
      host.replaceByRename(appEnv, envText({ APP_MODE: 'prod', APP_URL: 'http://db.mesh.internal:1/' }));
      await s.until('MA1001 once the file is rewritten', '/v1/findings', (a) => has(a.body, 'MA1001', APP), CHANGE_MS);
      assert.is(stateOf((await s.get('/v1/status')).body), 'findings');
      assert.is((await s.get('/healthz')).code, 503, 'error findings open: not healthy');
      await waitUntil('the MA1001 alert firing in Alertmanager', () => firing('MA1001'), CHANGE_MS);

      // 097: a container with mesh labels that no entry claims, started.
      runContainer(e, STRAY, ['--network', 'none', ...labels('old', 'old.server')], ['sleep', '3600']);
      await s.until(
        'MA2001 for the unclaimed container',
        '/v1/findings',
        (a) => has(a.body, 'MA2001', STRAY),
        CHANGE_MS,
      );

      // One container's event costs that container's inspect, not every container's: the others are as the last read
      // saw them (src/collect/read-cache.ts), and the image is not inspected again.
      const strayId = e.docker(['inspect', '--format', '{{.Id}}', STRAY]).trim();
      const mark = proxy.requests.length;
      e.docker(['restart', '-t', '0', STRAY]);
      const changedAt = new Date().toISOString();
      await s.until(
        'a read after the restart',
        '/v1/status',
        (a) => ((JSON.parse(a.body) as { lastRead: string | null }).lastRead ?? '') > changedAt,
        CHANGE_MS,
      );
      const inspected = proxy.requests
        .slice(mark)
        .flatMap((r) => /\/containers\/([0-9a-f]{12,64})\/json/.exec(r.path)?.[1] ?? []);
      assert.ok(inspected.length > 0, 'the restarted container was inspected again');
      assert.equal([...new Set(inspected)], [strayId], 'only the container the events named was inspected');
      assert.not.ok(
        proxy.requests.slice(mark).some((r) => /\/images\/[^/]+\/json/.test(r.path)),
        'no image inspected again',
      );
      // Podman answers /version by running dpkg, runc and conmon (seconds on a loaded machine): asked once, not per read.
      assert.not.ok(
        proxy.requests.slice(mark).some((r) => r.path.endsWith('/version')),
        "the engine's version not asked again",
      );

      // The ledger rewritten to claim it: re-evaluated, its MA2001 gone.
      host.ledger([...entries, { id: 'old.server', type: 'container', origin: 'declared', target: STRAY }]);
      await s.until(
        'the ledger re-read',
        '/v1/findings',
        (a) => a.code === 200 && !has(a.body, 'MA2001', STRAY),
        CHANGE_MS,
      );

      // The claimed, drifted container removed: its drift finding resolves.
      removeContainers(e, [APP]);
      await s.until('MA1001 resolved', '/v1/findings', (a) => a.code === 200 && !has(a.body, 'MA1001', APP), CHANGE_MS);
      await waitUntil('the MA1001 alert resolved in Alertmanager', async () => !(await firing('MA1001')), CHANGE_MS);
      const before = findingsOf((await s.get('/v1/findings')).body)
        .map((f) => `${f.ruleId} ${f.subject.id}`)
        .sort();

      // The engine gone (every request refused, the events stream cut): incomplete at once, never clean.
      proxy.setFaults([{ match: on.any(), fault: { kind: 'reset', when: 'request' } }]);
      assert.ok(proxy.cutOpenAnswers() >= 1, 'the events stream was open through the proxy');
      await s.until(
        'incomplete once the engine is gone',
        '/v1/status',
        (a) => a.code === 200 && stateOf(a.body) === 'incomplete',
        CHANGE_MS,
      );
      const gone = JSON.parse((await s.get('/v1/status')).body) as { notChecked: string[] };
      assert.ok(
        gone.notChecked.some((m) => m.includes('engine')),
        `the engine named as not checked: ${gone.notChecked.join('; ')}`,
      );
      // Back: the answer is current again, the same findings as before the engine went.
      proxy.setFaults([]);
      await s.until('current again', '/v1/status', (a) => a.code === 200 && stateOf(a.body) !== 'incomplete', 30_000);
      const after = findingsOf((await s.get('/v1/findings')).body)
        .map((f) => `${f.ruleId} ${f.subject.id}`)
        .sort();
      assert.equal(after, before);

      // A cut stream alone (the engine answers): incomplete, then current — the state changed twice, so `since` moved.
      const sinceOf = (body: string): string => (JSON.parse(body) as { since: string }).since;
      const sinceBefore = sinceOf((await s.get('/v1/status')).body);
      assert.ok(proxy.cutOpenAnswers() >= 1, 'the events stream was open again');
      await s.until(
        'current after a cut stream',
        '/v1/status',
        (a) => a.code === 200 && stateOf(a.body) !== 'incomplete' && sinceOf(a.body) > sinceBefore,
        30_000,
      );

      // The engine itself stopped, as `systemctl stop` does: incomplete within 5 s; started again: current within 30 s,
      // the same findings as a scan of the host now.
      stopOrStartEngine(e, 'stop');
      await s.until(
        'incomplete once the engine stopped',
        '/v1/status',
        (a) => a.code === 200 && stateOf(a.body) === 'incomplete',
        CHANGE_MS,
      );
      stopOrStartEngine(e, 'start');
      await s.until(
        'current once the engine is back',
        '/v1/status',
        (a) => a.code === 200 && stateOf(a.body) !== 'incomplete',
        30_000,
      );
      const scanOut = tempDir('ma-serve-scan-', '/tmp');
      const scan = spawnCli(host.scanArgs(e.dockerHost, `serve-${e.kind}`, scanOut, ['--exclude', 'listener:*']));
      assert.ok(scan.code === 0 || scan.code === 1, scan.stderr);
      const scanned = (JSON.parse(readFileSync(join(scanOut, 'mesh-audit.json'), 'utf8')) as { findings: Finding[] })
        .findings;
      const served = findingsOf((await s.get('/v1/findings')).body);
      const keys = (list: Finding[]) => list.map((f) => `${f.ruleId} ${f.subject.id}`).sort();
      assert.equal(keys(served), keys(scanned), 'serve answers what a scan of the host says now');

      assert.is(await s.stop(), 0, s.stderr());
      const methods = [...new Set(proxy.requests.map((r) => r.method))];
      assert.equal(methods, ['GET'], 'only GET reaches the engine');
      assert.ok(
        proxy.requests.some((r) => r.path.endsWith('/events')),
        'the events stream is asked for through the proxy',
      );
    } finally {
      await serve?.stop();
      await proxy.close();
      await am.stop();
      removeContainers(e, [APP, STRAY]);
    }
  });
}
