import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { bareImage, forEachEngine, removeContainers, runContainer } from './engine.js';
import { envText, LiveHost, type LiveReport } from './live-host.js';

// Issue 18 on a real engine: a host that also runs another labelled system's containers is scoped
// by one selector (they are counted, not dropped), and what a host-network listener really exposes
// decides MA2001: loopback only is reachable from this host alone; 0.0.0.0 is exposed.
forEachEngine('scan-scope', (e, it, index) => {
  const host = new LiveHost();
  const pid = process.pid;
  const OURS = `ma18-forge-${pid}`;
  const CI_A = `ma18-ci-runner-a-${pid}`;
  const CI_B = `ma18-ci-runner-b-${pid}`;
  const LOOPBACK = `ma18-lo-${pid}`;
  const WILDCARD = `ma18-wild-${pid}`;
  // High ports derived from the pid and the engine, so parallel runs on one machine do not collide.
  const LO_PORT = 40000 + ((pid * 2 + index) % 10000);
  const WILD_PORT = LO_PORT + 10000 > 65000 ? LO_PORT - 20000 : LO_PORT + 10000;

  /** Waits until the host's TCP table shows a listener on the port (the container has started), not for a time. */
  function waitForListener(port: number): void {
    const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
    for (let i = 0; i < 2000; i++) {
      const table = readFileSync('/proc/net/tcp', 'utf8');
      if (table.split('\n').some((l) => l.includes(hex) && / 0A /.test(l))) return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
    throw new Error(`nothing came to listen on port ${port}`);
  }

  let scoped: ReturnType<LiveHost['scan']> | undefined;

  it('set-up: our container, two of another labelled system, a loopback-only and a 0.0.0.0 listener on the host network', () => {
    const eng = e;
    const ci = ['--label', 'com.example.system=ci', '--label', 'mesh.module=ci', '--network', 'none'];
    // Ours is made from its current env file and an image that sets no env: clean on either engine (issue 30).
    const oursEnv = host.write(host.path('forge', 'forge.env'), envText({ FORGE_MODE: 'prod' }));
    runContainer(
      eng,
      OURS,
      [
        '--network',
        'none',
        '--label',
        'mesh.module=forge',
        '--label',
        'mesh.resource=forge.server',
        '--env-file',
        oursEnv,
        '--label',
        `mesh.sources=${oursEnv}`,
      ],
      ['sleep', '3600'],
      bareImage(eng),
    );
    runContainer(eng, CI_A, ci, ['sleep', '3600']);
    runContainer(eng, CI_B, ci, ['sleep', '3600']);
    const leftover = ['--network', 'host', '--label', 'mesh.module=forge', '--label', 'mesh.resource=forge.old'];
    runContainer(eng, LOOPBACK, leftover, ['httpd', '-f', '-p', `127.0.0.1:${LO_PORT}`, '-h', '/www']);
    runContainer(eng, WILDCARD, leftover, ['httpd', '-f', '-p', `0.0.0.0:${WILD_PORT}`, '-h', '/www']);
    waitForListener(LO_PORT);
    waitForListener(WILD_PORT);
    host.ledger([
      { id: 'forge.server', type: 'container', module: 'forge', origin: 'declared', target: OURS, sources: [oursEnv] },
    ]);
  });

  it("without a scope the other system's containers are findings", () => {
    const run = host.scan(e.dockerHost, 'live-18');
    const about = (id: string) =>
      run.report.findings.filter((f) => f.subject.id === id && f.ruleName === 'no-unclaimed-container');
    assert.is(about(CI_A).length, 1, run.stderr);
    assert.is(about(CI_B).length, 1);
    // Only what the test runner leaves out on every live scan (this machine's own sockets: test/uvu-each.mjs).
    const excluded = (run.report.summary as { excluded?: { containers: number; files: number; ledger: number } })
      .excluded;
    assert.equal([excluded?.containers ?? 0, excluded?.files ?? 0, excluded?.ledger ?? 0], [0, 0, 0]);
    assert.equal(
      run.report.findings.filter((f) => f.subject.id === OURS),
      [],
      'our claimed container has no finding',
    );
  });

  it('one --exclude selector leaves the other system out, and the summary counts both containers', () => {
    scoped = host.scan(e.dockerHost, 'live-18', ['--exclude', 'label:com.example.system=ci']);
    const report = scoped.report as LiveReport & { summary: { excluded?: { containers: number; total: number } } };
    assert.ok(report.summary.complete, scoped.stderr);
    assert.equal(
      report.findings.filter((f) => f.subject.id === CI_A || f.subject.id === CI_B),
      [],
    );
    // Our own test containers of other runs may share the engine only if it is a shared one: count ours exactly.
    assert.ok(report.summary.excluded, JSON.stringify(report.summary));
    const listed = e
      .docker(['ps', '-a', '--filter', 'label=com.example.system=ci', '--format', '{{.Names}}'])
      .split('\n')
      .filter(Boolean);
    assert.is(report.summary.excluded.containers, listed.length);
    assert.ok(listed.includes(CI_A) && listed.includes(CI_B));
    assert.equal(
      report.findings.filter((f) => f.subject.id === OURS),
      [],
      'our claimed container is still checked and clean',
    );
  });

  it('a loopback-only listener on the host network is not reported as exposed; a 0.0.0.0 listener still is', () => {
    assert.ok(scoped);
    const unclaimed = (id: string) =>
      scoped!.report.findings.find((f) => f.subject.id === id && f.ruleName === 'no-unclaimed-container');
    const lo = unclaimed(LOOPBACK);
    assert.ok(lo, JSON.stringify(scoped.report.findings));
    assert.is(lo.severity, 'warning', 'mesh-written and lost, but reachable from this host alone: not raised to error');
    assert.match(
      lo.message,
      `not exposed: listening on loopback only (127.0.0.1:${LO_PORT}/tcp), reachable from this host alone`,
    );
    assert.not.match(lo.message, 'exposed on the host network');
    const wild = unclaimed(WILDCARD);
    assert.ok(wild);
    assert.is(wild.severity, 'error');
    assert.match(wild.message, `exposed on the host network, listening on 0.0.0.0:${WILD_PORT}/tcp`);
  });

  it('clean-up: remove the containers this test made', () => {
    removeContainers(e, [OURS, CI_A, CI_B, LOOPBACK, WILDCARD]);
  });

  // Issue 31, item 8: scope is honoured when reading. Another system's container names a source file
  // mesh-audit cannot read (behind a symlinked folder, never followed): unscoped, the run is incomplete
  // (exit 3); with that container excluded (by the config here), the file is not read at all, the run is
  // complete, and the container is still counted as excluded.
  it("an excluded container's unreadable source file is not read: the run is complete, the container counted", () => {
    const other = new LiveHost();
    const name = `ma31-other-${pid}`;
    const real = join(other.dir, 'other-system');
    mkdirSync(real, { recursive: true });
    other.write(join(real, 'app.env'), 'TOKEN=x\n');
    symlinkSync(real, join(other.dir, 'other-link'));
    const source = join(other.dir, 'other-link', 'app.env');
    try {
      runContainer(
        e,
        name,
        ['--network', 'none', '--label', 'com.example.system=other', '--label', `mesh.sources=${source}`],
        ['sleep', '3600'],
      );
      other.ledger([]);
      const unscoped = other.scan(e.dockerHost, 'live-31');
      assert.is(unscoped.code, 3, `the unreadable source makes an unscoped run incomplete: ${unscoped.stderr}`);
      assert.ok(
        unscoped.report.notifications.some((n) => n.level === 'error' && n.message.includes(source)),
        JSON.stringify(unscoped.report.notifications),
      );

      const config = other.write(join(other.dir, 'config.yaml'), 'exclude: [label:com.example.system=other]\n');
      const scoped = other.scan(e.dockerHost, 'live-31', ['--config', config]);
      const report = scoped.report as LiveReport & { summary: { excluded?: { containers: number } } };
      assert.ok(scoped.code === 0 || scoped.code === 1, `exit ${scoped.code}: ${scoped.stderr}`);
      assert.ok(report.summary.complete, JSON.stringify(report.notifications));
      assert.not.ok(
        JSON.stringify(report).includes(source),
        "the excluded container's source was not read, so it is nowhere in the report",
      );
      const listed = e
        .docker(['ps', '-a', '--filter', 'label=com.example.system=other', '--format', '{{.Names}}'])
        .split('\n')
        .filter(Boolean);
      assert.ok(listed.includes(name));
      assert.is(report.summary.excluded?.containers, listed.length, 'the excluded container is still counted');
    } finally {
      removeContainers(e, [name]);
    }
  });
});
