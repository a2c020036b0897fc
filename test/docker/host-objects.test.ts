import type { ChildProcess } from 'node:child_process';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { hostHttpd } from './host-httpd.js';
import { forEachEngine, removeContainers, runContainer, type Engine } from './engine.js';
import { fingerprintsOf, LiveHost, type LiveReport } from './live-host.js';

/*
 * What the mesh leaves on a host besides containers and files (issue 25), on each real engine: a module
 * renamed leaves its mesh-labelled network and named volume behind, a module unassigned leaves both of
 * its own, a network and a volume with mesh labels were never recorded; a host process (busybox httpd,
 * not a container) listens on every interface, another on loopback only, a third is declared by a
 * `service` entry. Networks are created `--internal` and never joined (no bridge comes up, no traffic);
 * containers run with `--network none`; nothing connects to the listeners.
 */
forEachEngine('networks, volumes and host listeners', scenario);

function scenario(e: Engine, it: Test, index: number): void {
  const host = new LiveHost();
  const tag = `${e.kind}-${process.pid}`;
  const name = (what: string) => `ma-${what}-${tag}`;
  const forgeOldNet = name('forge-net');
  const forgeNewNet = name('forge-net-v2');
  const forgeOldVol = name('forge-data');
  const forgeNewVol = name('forge-data-v2');
  const wikiNet = name('wiki-net');
  const wikiVol = name('wiki-data');
  const strayNet = name('stray-net');
  const strayVol = name('stray-data');
  const appVol = name('app-data');
  const app = name('app');
  // High ports from the pid, apart for the two engines: one on every interface, one on loopback, one declared.
  const base = 30000 + ((process.pid * 6 + index * 3) % 20000);
  const [OPEN, LOCAL, DECLARED] = [base, base + 1, base + 2];
  const processes: ChildProcess[] = [];
  const labels = (module: string, resource: string) => [
    '--label',
    `mesh.module=${module}`,
    '--label',
    `mesh.resource=${resource}`,
  ];
  const network = (n: string, extra: string[] = []) => e.docker(['network', 'create', '--internal', ...extra, n]);
  const volume = (n: string, extra: string[] = []) => e.docker(['volume', 'create', ...extra, n]);
  const ledgerBefore = [
    { id: 'app.server', type: 'container', module: 'app', target: app },
    { id: 'app.data', type: 'volume', module: 'app', target: appVol },
    { id: 'forge.net', type: 'network', module: 'forge', target: forgeOldNet },
    { id: 'forge.data', type: 'volume', module: 'forge', target: forgeOldVol },
    { id: 'wiki.net', type: 'network', module: 'wiki', target: wikiNet },
    { id: 'wiki.data', type: 'volume', module: 'wiki', target: wikiVol },
    { id: 'edge.httpd', type: 'service', module: 'edge', target: 'httpd', holds: [DECLARED] },
  ];
  let after: LiveReport | undefined;

  const about = (report: LiveReport, id: string) => report.findings.filter((f) => f.subject.id === id);
  const ours = (report: LiveReport) =>
    report.findings.filter(
      (f) => f.subject.id.includes(tag) || [OPEN, LOCAL, DECLARED].some((p) => f.subject.id.includes(`:${p}/`)),
    );

  it('before: every network and volume is claimed, the declared and loopback listeners are quiet, the open one is an error', () => {
    network(forgeOldNet, labels('forge', 'forge.net'));
    network(wikiNet, labels('wiki', 'wiki.net'));
    volume(forgeOldVol, labels('forge', 'forge.data'));
    volume(wikiVol, labels('wiki', 'wiki.data'));
    volume(appVol, labels('app', 'app.data'));
    // A claimed container with its named volume and an anonymous one, on no network.
    runContainer(e, app, ['--network', 'none', '-v', `${appVol}:/data`, '-v', '/scratch'], ['sleep', '3600']);
    processes.push(hostHttpd('0.0.0.0', OPEN), hostHttpd('127.0.0.1', LOCAL), hostHttpd('0.0.0.0', DECLARED));
    host.ledger(ledgerBefore);
    const run = host.scan(e.dockerHost, `live-objects-${e.kind}`);
    assert.ok(run.report.summary.complete, run.stderr);
    const found = ours(run.report);
    assert.equal(
      found.map((f) => `${f.ruleId} ${f.subject.id}`),
      [`MA2009 0.0.0.0:${OPEN}/tcp`],
      JSON.stringify(found, null, 1),
    );
    assert.is(found[0]!.severity, 'error', 'on every interface: an error');
    assert.match(found[0]!.message, 'held by host process httpd (/');
    assert.match(found[0]!.message, 'no service entry declares it');
  });

  it('after a rename and an unassignment: each object left behind is found with its rule; claimed, declared and default ones are not', () => {
    network(forgeNewNet, labels('forge', 'forge.net'));
    volume(forgeNewVol, labels('forge', 'forge.data'));
    network(strayNet, labels('stray', 'stray.net'));
    volume(strayVol, labels('stray', 'stray.data'));
    host.ledger([
      ...ledgerBefore.filter((x) => !x.id.startsWith('wiki.') && !x.id.startsWith('forge.')),
      { id: 'forge.net', type: 'network', module: 'forge', target: forgeNewNet },
      { id: 'forge.data', type: 'volume', module: 'forge', target: forgeNewVol },
    ]);
    const run = host.scan(e.dockerHost, `live-objects-${e.kind}`);
    after = run.report;
    assert.ok(run.report.summary.complete, run.stderr);
    assert.is(run.code, 1);
    const one = (id: string, rule: string) => {
      const list = about(run.report, id);
      assert.equal(
        list.map((f) => f.ruleId),
        [rule],
        `${id}: ${JSON.stringify(list)}`,
      );
      return list[0]!;
    };
    const renamedNet = one(forgeOldNet, 'MA2006');
    assert.is(renamedNet.severity, 'warning');
    assert.match(renamedNet.message, `forge.net moved from ${forgeOldNet} to ${forgeNewNet}`);
    const renamedVol = one(forgeOldVol, 'MA2008');
    assert.is(renamedVol.severity, 'warning');
    assert.match(renamedVol.message, `forge.data moved from ${forgeOldVol} to ${forgeNewVol}`);
    assert.match(renamedVol.message, 'with its data at /');
    assert.match(one(wikiNet, 'MA2006').message, 'wiki.net left the ledger');
    assert.match(one(wikiVol, 'MA2008').message, 'wiki.data left the ledger');
    const strayN = one(strayNet, 'MA2005');
    assert.is(strayN.severity, 'warning');
    assert.match(strayN.message, 'module stray, resource stray.net');
    assert.match(one(strayVol, 'MA2007').message, 'mounted by no container');
    const open = one(`0.0.0.0:${OPEN}/tcp`, 'MA2009');
    assert.is(open.severity, 'error');
    for (const quiet of [forgeNewNet, forgeNewVol, appVol, app, 'bridge', 'host', 'none', 'podman'])
      assert.equal(about(run.report, quiet), [], `${quiet} gives no finding`);
    assert.equal(about(run.report, `127.0.0.1:${LOCAL}/tcp`), [], 'loopback only: no finding');
    assert.equal(about(run.report, `0.0.0.0:${DECLARED}/tcp`), [], 'declared by a service entry: no finding');
    // The claimed container's anonymous volume is never a finding.
    const anonymous = run.report.findings.filter(
      (f) => f.subject.kind === 'volume' && /^[0-9a-f]{64}$/.test(f.subject.id),
    );
    assert.equal(anonymous, []);
  });

  it('snapshot -o then evaluate gives the fingerprints the scan gave', () => {
    assert.ok(after);
    const saved = host.snapshotThenEvaluate(e.dockerHost, `live-objects-${e.kind}`);
    assert.is(saved.snapshot.code, 0, saved.snapshot.stderr);
    assert.equal(
      fingerprintsOf({ ...saved.report, findings: ours(saved.report) }),
      fingerprintsOf({ ...after, findings: ours(after) }),
    );
    assert.ok(ours(saved.report).length >= 7, JSON.stringify(ours(saved.report)));
  });

  it('cleanup', () => {
    for (const p of processes) p.kill('SIGKILL');
    removeContainers(e, [app]);
    for (const n of [forgeOldNet, forgeNewNet, wikiNet, strayNet]) e.docker(['network', 'rm', n]);
    for (const v of [forgeOldVol, forgeNewVol, wikiVol, strayVol, appVol]) e.docker(['volume', 'rm', '-f', v]);
  });
}
