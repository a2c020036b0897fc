import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { collectDocker } from '../../src/collect/docker.js';
import { ReadOnlyDocker } from '../../src/collect/docker-api.js';
import { resolveEndpoint } from '../../src/collect/docker-endpoint.js';
import { createSafeValueMaker } from '../../src/secret/value.js';
import { engineProxy, on, type EngineProxy, type FaultRule } from '../support/engine-proxy.js';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { runCliAsync, type ChildRun } from './faults-harness.js';
import { LiveHost, type LiveFinding, type LiveReport } from './live-host.js';

// A real engine behind a proxy that misbehaves on cue: slow, hung, dripping, failing, resetting,
// racing (404), truncated, not JSON, huge; no socket at all, or one we may not open. Each scan runs
// as a child process with `dockerTimeoutSeconds: 3` (8 on Podman) and must end in bounded time and memory, write
// its reports with what it did read (files, ledger, the other containers), mark itself incomplete
// and exit 3 — except a container gone between list and inspect, which is no error at all.
forEachEngine('faults', (e, it) => {
  // Podman answers /version in about a second on these machines (0.8-1.3 s measured on an idle one),
  // Docker in milliseconds. Each engine's limits leave its healthy answers room on a busy two-CPU
  // machine, so that only the faults below, never the engine's own pace, end a request or a scan.
  const DEADLINE_S = e.kind === 'podman' ? 8 : 3;
  /** The collector's per-request limit in the test of that limit alone (the CLI's is 10 s). */
  const REQUEST_LIMIT_MS = e.kind === 'podman' ? 4000 : 1000;
  /** Node start, ledger, files and reports around the Docker deadline, on a busy two-CPU machine. */
  const MARGIN_S = 7;
  const MAX_RSS_MB = 300;
  const NOBODY = 65534;

  const host = new LiveHost();
  const tag = `${process.pid}`;
  const A = `mafault-a-${tag}`;
  const B = `mafault-b-${tag}`;
  const C = `mafault-c-${tag}`;
  const ids: Record<string, string> = {};
  const CANARY = `canary-fault-${tag}-5e1d`;

  let proxy: EngineProxy | undefined;
  let config = '';
  let baseline: { code: number; report: LiveReport } | undefined;
  let scans = 0;

  interface Scan {
    run: ChildRun;
    report: LiveReport;
  }

  interface ScanOptions {
    workDir?: string;
    ledger?: string;
    managedRoot?: string;
    config?: string;
    uid?: number;
    env?: NodeJS.ProcessEnv;
  }

  async function scan(dockerHost: string, options: ScanOptions = {}): Promise<Scan> {
    const n = ++scans;
    const workDir = options.workDir ?? host.dir;
    const out = join(workDir, `out-${n}`);
    mkdirSync(out, { mode: 0o750 });
    if (options.uid !== undefined) chownSync(out, options.uid, options.uid);
    const run = await runCliAsync(
      [
        'scan',
        '--docker-host',
        dockerHost,
        '--ledger',
        options.ledger ?? host.ledgerPath,
        '--managed-root',
        options.managedRoot ?? host.managedRoot,
        '--hostname',
        'faults',
        '--config',
        options.config ?? config,
        '--out',
        out,
        '--format',
        'json,text',
      ],
      {
        workDir,
        env: { HOME: workDir, ...options.env },
        ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
      },
    );
    let report: LiveReport;
    try {
      report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as LiveReport;
    } catch {
      throw new Error(
        `scan wrote no report (exit ${run.code}, ${run.seconds.toFixed(1)} s, killed ${run.killed}):\n${run.stderr}`,
      );
    }
    return { run, report };
  }

  /** Findings that do not come from Docker: the ledger's and the files'. */
  const notDocker = (fs: LiveFinding[]) =>
    fs
      .filter((f) => f.subject.kind !== 'container')
      .map((f) => f.fingerprint)
      .sort();
  const aboutContainer = (fs: LiveFinding[], name: string) =>
    fs
      .filter((f) => f.subject.kind === 'container' && f.subject.id === name)
      .map((f) => f.fingerprint)
      .sort();

  /** What every faulted scan must show: bounded, reported, incomplete, exit 3, the rest kept. */
  function assertIncomplete(
    s: Scan,
    expect: { problem: RegExp; lost: 'engine' | 'list' | 'one'; maxRssMb?: number },
  ): void {
    const base = baseline!;
    const why = `exit ${s.run.code} in ${s.run.seconds.toFixed(1)} s, ${s.run.maxRssMb?.toFixed(0)} MB\n${s.run.stderr}`;
    assert.not.ok(s.run.killed, `killed by the safety limit: ${why}`);
    assert.ok(s.run.seconds < DEADLINE_S + MARGIN_S, `took ${s.run.seconds.toFixed(1)} s: ${why}`);
    assert.ok(
      s.run.maxRssMb !== null && s.run.maxRssMb < (expect.maxRssMb ?? MAX_RSS_MB),
      `peak memory ${s.run.maxRssMb} MB: ${why}`,
    );
    assert.is(s.run.code, 3, why);
    assert.is(s.report.summary.complete, false, why);
    const errors = s.report.notifications.filter((n) => n.level === 'error').map((n) => n.message);
    assert.ok(
      errors.some((m) => expect.problem.test(m)),
      `a notification saying ${expect.problem}: ${JSON.stringify(s.report.notifications)}`,
    );
    assert.ok(
      s.run.stderr.split('\n').some((l) => l.startsWith('mesh-audit: ') && expect.problem.test(l)),
      `one clear line on stderr: ${why}`,
    );
    assert.not.ok(s.run.stderr.includes(CANARY) || s.run.stdout.includes(CANARY), 'no response body printed');
    assert.not.ok(JSON.stringify(s.report).includes(CANARY), 'no response body in the report');
    // What was read is still reported: ledger and file findings exactly as in the clean scan.
    assert.equal(notDocker(s.report.findings), notDocker(base.report.findings), 'ledger and file findings kept');
    assert.ok(notDocker(s.report.findings).length >= 3);
    if (expect.lost === 'one') {
      assert.equal(aboutContainer(s.report.findings, A), [], `nothing claimed about ${A}, which was not read`);
      for (const other of [B, C])
        assert.equal(
          aboutContainer(s.report.findings, other),
          aboutContainer(base.report.findings, other),
          `${other} kept`,
        );
    } else {
      for (const name of [A, B, C])
        assert.equal(aboutContainer(s.report.findings, name), [], `no container read: ${name}`);
    }
  }

  /** Runs one scan with `rules` on the proxy and checks the proxy really applied a fault. */
  async function faulted(rules: FaultRule[]): Promise<Scan> {
    const p = proxy!;
    p.setFaults(rules);
    p.clearRecord();
    try {
      const s = await scan(p.dockerHost);
      assert.ok(
        p.requests.some((q) => q.fault !== null),
        `the fault was applied: ${p.requests.map((q) => `${q.method} ${q.url}`).join(', ')}`,
      );
      return s;
    } finally {
      p.setFaults([]);
    }
  }

  const big500 = () => JSON.stringify({ message: `internal error: DATABASE_URL=postgresql://u:${CANARY}@db/x` });

  it('fixtures: three containers (running, host network, stopped), a ledger with findings, managed files', async () => {
    const eng = e;
    const labels = (m: string) => ['--label', `mesh.module=${m}`, '--label', `mesh.resource=${m}.server`];
    ids[A] = runContainer(eng, A, ['--network', 'none', '--init', ...labels('fa')], ['sleep', '3600']);
    ids[B] = runContainer(eng, B, ['--network', 'host', '--init', ...labels('fb')], ['sleep', '3600']);
    ids[C] = runContainer(eng, C, ['--network', 'none', ...labels('fc')], ['sh', '-c', 'exit 3']);
    host.write(host.path('stray.conf'), 'nobody claims me\n');
    const kept = host.write(host.path('kept.conf'), 'claimed\n');
    host.ledger([
      { id: 'kept.conf', type: 'file', origin: 'declared', target: kept },
      { id: 'gone.conf', type: 'file', origin: 'declared', target: host.path('gone.conf') },
      { id: 7, type: 'nonsense' },
    ]);
    config = host.write(join(host.dir, 'config.yaml'), `dockerTimeoutSeconds: ${DEADLINE_S}\n`);
    proxy = await engineProxy(eng.dockerHost);
  });

  it('baseline through the proxy: complete, a finding for each container, ledger and file findings', async () => {
    const s = await scan(proxy!.dockerHost);
    assert.ok(s.report.summary.complete, s.run.stderr);
    assert.ok(s.run.code === 0 || s.run.code === 1, s.run.stderr);
    for (const name of [A, B, C])
      assert.ok(
        aboutContainer(s.report.findings, name).length > 0,
        `a finding about ${name}: ${JSON.stringify(s.report.findings)}`,
      );
    assert.ok(notDocker(s.report.findings).length >= 3, JSON.stringify(s.report.findings));
    assert.ok(s.run.maxRssMb !== null && s.run.maxRssMb < MAX_RSS_MB);
    baseline = { code: s.run.code, report: s.report };
  });

  it('a container gone between list and inspect (404): a note, complete, exit as the findings say', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'not-found' } }]);
    assert.ok(s.report.summary.complete, s.run.stderr);
    assert.ok(
      s.report.notifications.some(
        (n) => n.level === 'note' && n.message.includes(`${A} went away between list and inspect`),
      ),
      JSON.stringify(s.report.notifications),
    );
    assert.equal(
      s.report.findings.map((f) => f.fingerprint).sort(),
      baseline!.report.findings
        .filter((f) => f.subject.id !== A)
        .map((f) => f.fingerprint)
        .sort(),
    );
    assert.is(s.run.code, baseline!.code, s.run.stderr);
  });

  it('latency past every limit on one inspect: the deadline ends it; the other containers are kept', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'latency', ms: 60_000 } }]);
    assertIncomplete(s, { problem: new RegExp(`cannot inspect container ${A}: .*no answer in time`), lost: 'one' });
  });

  it('an answer that hangs after its headers (the list): ended by the deadline', async () => {
    const s = await faulted([{ match: on.list(), fault: { kind: 'hang' } }]);
    assertIncomplete(s, { problem: /cannot list containers: .*no answer in time/, lost: 'list' });
  });

  it('a slow drip, one byte every 100 ms (an inactivity timeout never fires): ended by the deadline', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'drip', everyMs: 100 } }]);
    assertIncomplete(s, { problem: new RegExp(`cannot inspect container ${A}: .*no answer in time`), lost: 'one' });
  });

  it('HTTP 500 on the list: one problem, the body never shown', async () => {
    const s = await faulted([{ match: on.list(), fault: { kind: 'status', status: 500, body: big500() } }]);
    assertIncomplete(s, { problem: /cannot list containers: .*HTTP 500/, lost: 'list' });
  });

  it('HTTP 500 on one inspect: that container is a problem, the others are kept', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'status', status: 500, body: big500() } }]);
    assertIncomplete(s, { problem: new RegExp(`cannot inspect container ${A}: .*HTTP 500`), lost: 'one' });
  });

  it('HTTP 500 on /_ping: the engine cannot be reached', async () => {
    const s = await faulted([{ match: on.ping(), fault: { kind: 'status', status: 500, body: big500() } }]);
    assertIncomplete(s, { problem: /cannot reach the Docker engine at .*HTTP 500/, lost: 'engine' });
  });

  it('connection reset on one inspect, before any answer', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'reset' } }]);
    assertIncomplete(s, {
      problem: new RegExp(`cannot inspect container ${A}: .*closed the connection.*ECONNRESET`),
      lost: 'one',
    });
  });

  it('connection reset in the middle of the list', async () => {
    const s = await faulted([{ match: on.list(), fault: { kind: 'reset', when: 'mid-body' } }]);
    assertIncomplete(s, { problem: /cannot list containers: .*closed the connection.*ECONNRESET/, lost: 'list' });
    // A cut connection fails at once: what ended the list is the reset, never a timer (the deadline or
    // the per-request limit would have said "no answer in time"). No wall-clock bound: a busy machine
    // once took 4.7 s here, past the 3 s deadline, and the reset was still what ended it.
    const errors = s.report.notifications.filter((n) => n.level === 'error').map((n) => n.message);
    assert.not.ok(
      errors.some((m) => m.includes('no answer in time')),
      `a timer ended the list, not the reset: ${JSON.stringify(errors)}`,
    );
  });

  it('truncated JSON (a clean, short reply) for one inspect', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'truncate' } }]);
    assertIncomplete(s, { problem: new RegExp(`cannot inspect container ${A}: .*not .*JSON`), lost: 'one' });
  });

  it('truncated JSON for the list', async () => {
    const s = await faulted([{ match: on.list(), fault: { kind: 'truncate' } }]);
    assertIncomplete(s, { problem: /cannot list containers: .*not .*JSON/, lost: 'list' });
  });

  it('a 200 that is not JSON for the list', async () => {
    const s = await faulted([{ match: on.list(), fault: { kind: 'not-json', body: `<html>${CANARY}</html>` } }]);
    assertIncomplete(s, { problem: /cannot list containers: .*not .*JSON/, lost: 'list' });
  });

  it('a 200 that is not JSON for one inspect', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'not-json' } }]);
    assertIncomplete(s, { problem: new RegExp(`cannot inspect container ${A}: .*not .*JSON`), lost: 'one' });
  });

  it('a 200 that is not JSON for /version: the engine cannot be used', async () => {
    const s = await faulted([{ match: on.version(), fault: { kind: 'not-json' } }]);
    assertIncomplete(s, { problem: /cannot reach the Docker engine at .*not .*JSON/, lost: 'engine' });
  });

  it('a 50 MB inspect (valid JSON, chunked): refused by size, memory bounded', async () => {
    const s = await faulted([{ match: on.inspect(ids[A]!), fault: { kind: 'huge', bytes: 50 * 1024 * 1024 } }]);
    assertIncomplete(s, { problem: new RegExp(`cannot inspect container ${A}: .*too large`), lost: 'one' });
  });

  it('a 50 MB list (valid JSON, Content-Length declared): refused by size, memory bounded', async () => {
    const s = await faulted([
      { match: on.list(), fault: { kind: 'huge', bytes: 50 * 1024 * 1024, declareLength: true } },
    ]);
    assertIncomplete(s, { problem: /cannot list containers: .*too large/, lost: 'list' });
  });

  it('no socket at the given path (ENOENT)', async () => {
    const s = await scan(`unix://${join(proxy!.dir, 'missing.sock')}`);
    assertIncomplete(s, { problem: /cannot reach the Docker engine at .*ENOENT/, lost: 'engine' });
  });

  it('permission denied on the socket (EACCES): root:root 0660, as for a user outside the docker group', async () => {
    // Root ignores a socket's mode bits (connect() only checks write permission for others), so as root
    // the scan runs as nobody (uid 65534) with a host tree of its own, against a socket made like
    // /var/run/docker.sock for a user outside the docker group. A control run with the socket opened to
    // everyone shows that the mode, and nothing else, is what stops it. Not root: mode 000 does it.
    const p = proxy!;
    const asRoot = process.getuid?.() === 0;
    const uid = asRoot ? NOBODY : undefined;
    // nobody runs its own readable copy of the CLI (faults-harness.ts), wherever this checkout lives.
    const own = mkdtempSync('/tmp/ma-faults-own-');
    try {
      chmodSync(own, 0o700);
      const managed = join(own, 'etc', 'mesh');
      mkdirSync(managed, { recursive: true });
      writeFileSync(join(managed, 'stray.conf'), 'nobody claims me\n');
      writeFileSync(join(managed, 'kept.conf'), 'claimed\n');
      const ledger = join(own, 'ledger.json');
      writeFileSync(
        ledger,
        JSON.stringify([
          { id: 'kept.conf', type: 'file', origin: 'declared', target: join(managed, 'kept.conf') },
          { id: 'gone.conf', type: 'file', origin: 'declared', target: join(managed, 'gone.conf') },
          { id: 7, type: 'nonsense' },
        ]),
      );
      const ownConfig = join(own, 'config.yaml');
      writeFileSync(ownConfig, `dockerTimeoutSeconds: ${DEADLINE_S}\n`);
      if (uid !== undefined) {
        for (const path of [
          own,
          join(own, 'etc'),
          managed,
          join(managed, 'stray.conf'),
          join(managed, 'kept.conf'),
          ledger,
          ownConfig,
        ])
          chownSync(path, uid, uid);
        chmodSync(p.dir, 0o711);
        chownSync(p.socketPath, 0, 0);
      }
      const options = {
        workDir: own,
        ledger,
        managedRoot: managed,
        config: ownConfig,
        ...(uid !== undefined ? { uid } : {}),
      };

      chmodSync(p.socketPath, 0o666);
      p.clearRecord();
      const control = await scan(p.dockerHost, options);
      assert.ok(p.requests.length > 0, `with the socket open to all, the engine is reached: ${control.run.stderr}`);
      assert.ok(
        !control.report.notifications.some((n) => n.level === 'error' && n.message.includes('Docker engine')),
        JSON.stringify(control.report.notifications),
      );

      chmodSync(p.socketPath, asRoot ? 0o660 : 0o000);
      p.clearRecord();
      const s = await scan(p.dockerHost, options);
      assert.equal(p.requests, [], 'not one request got through');
      const why = `exit ${s.run.code} in ${s.run.seconds.toFixed(1)} s\n${s.run.stderr}`;
      assert.is(s.run.code, 3, why);
      assert.is(s.report.summary.complete, false);
      assert.ok(s.run.seconds < DEADLINE_S + MARGIN_S, why);
      assert.ok(s.run.maxRssMb !== null && s.run.maxRssMb < MAX_RSS_MB, why);
      assert.match(
        s.run.stderr,
        /cannot reach the Docker engine at .*permission denied on the engine socket \(EACCES\)/,
      );
      // The findings are about this test's own tree here, so compare their rules rather than fingerprints.
      const rules = (fs: LiveFinding[]) =>
        fs
          .filter((f) => f.subject.kind !== 'container')
          .map((f) => f.ruleId)
          .sort();
      assert.equal(rules(s.report.findings), rules(baseline!.report.findings), 'ledger and file findings kept');
      assert.equal(
        s.report.findings.filter((f) => f.subject.kind === 'container'),
        [],
      );
    } finally {
      chmodSync(p.dir, 0o700);
      chmodSync(p.socketPath, 0o600);
      rmSync(own, { recursive: true, force: true });
    }
  });

  it(`the per-request limit (10 s in the CLI) ends one slow request while the deadline is far off (collector, ${REQUEST_LIMIT_MS / 1000} s limit)`, async () => {
    // The CLI's per-request limit is 10 s, above the deadline of these tests; here the collector
    // itself is given a short limit and a 30 s deadline, so only the per-request limit can end the wait.
    const p = proxy!;
    const COLLECTOR_DEADLINE_MS = 30_000;
    for (const fault of [{ kind: 'latency', ms: 60_000 }, { kind: 'drip', everyMs: 100 }, { kind: 'hang' }] as const) {
      p.setFaults([{ match: on.inspect(ids[A]!), fault }]);
      p.clearRecord();
      const started = Date.now();
      const r = await collectDocker({
        endpoint: resolveEndpoint(p.dockerHost),
        safe: createSafeValueMaker(),
        requestTimeoutMs: REQUEST_LIMIT_MS,
        deadlineMs: COLLECTOR_DEADLINE_MS,
      });
      const seconds = (Date.now() - started) / 1000;
      p.setFaults([]);
      assert.ok(
        seconds < COLLECTOR_DEADLINE_MS / 2000,
        `${fault.kind}: took ${seconds} s, so the deadline, not the per-request limit, ended it`,
      );
      assert.equal(
        r.problems.map((x) => x.subject),
        [A],
        `${fault.kind}: ${JSON.stringify(r.problems)}`,
      );
      assert.match(r.problems[0]!.message, 'no answer in time');
      for (const name of [B, C])
        assert.ok(
          r.containers.some((c) => c.name === name),
          `${fault.kind}: ${name} kept`,
        );
      assert.ok(p.requests.some((q) => q.fault === fault.kind));
    }
  });

  it('connections are kept for the next request, and the size limit still counts each answer on its own', async () => {
    const p = proxy!;
    p.setFaults([]);
    const limits = { requestTimeoutMs: 5000, deadline: AbortSignal.timeout(30_000) };
    const sizes = await (async () => {
      const api = await ReadOnlyDocker.connect(resolveEndpoint(p.dockerHost), limits);
      try {
        return await Promise.all(
          [A, B, C].map(async (name) => JSON.stringify(await api.inspectContainer(ids[name]!)).length),
        );
      } finally {
        api.close();
      }
    })();
    // Room for the largest answer (with its headers), far less than the 30 answers below together.
    const limit = Math.max(...sizes) + 4096;
    const api = await ReadOnlyDocker.connect(resolveEndpoint(p.dockerHost), { ...limits, maxResponseBytes: limit });
    try {
      p.clearRecord();
      for (let round = 0; round < 10; round++) {
        for (const name of [A, B, C])
          assert.is((await api.inspectContainer(ids[name]!)).Id, ids[name], `round ${round}: ${name}`);
      }
      assert.is(p.requests.length, 30);
      assert.is(
        new Set(p.requests.map((r) => r.connection)).size,
        1,
        'one after the other, the 30 requests share one connection',
      );
      assert.ok(30 * Math.min(...sizes) > limit, 'together the answers pass the limit many times');
    } finally {
      api.close();
    }
    const tooSmall = await ReadOnlyDocker.connect(resolveEndpoint(p.dockerHost), {
      ...limits,
      maxResponseBytes: Math.min(...sizes) - 1,
    });
    try {
      await tooSmall.inspectContainer(ids[A]!).then(
        () => assert.unreachable('an answer larger than the limit was read'),
        (err: unknown) => assert.match((err as Error).message, "the engine's answer is too large"),
      );
    } finally {
      tooSmall.close();
    }
  });

  it('clean-up: close the proxy, remove the containers this test made', async () => {
    await proxy?.close();
    removeContainers(e, [A, B, C]);
  });
});
