import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { engineProxy, type EngineProxy, type ProxiedRequest } from '../support/engine-proxy.js';
import { runClaimedFromEnvFile } from '../support/claimed-container.js';
import { startServe } from '../support/serve-child.js';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { engineState, runCliAsync, waitFor, type ChildRun, type ContainerState } from './faults-harness.js';
import { LiveHost, type LiveReport } from './live-host.js';

// Design §8, read-only: every CLI command that talks to Docker, with every collection option, runs
// through a recording proxy in front of a real engine that holds running, stopped, never-started and
// restarted containers. Only GET/HEAD requests on the allow-listed paths may reach the engine, and
// the engine's own account of its containers must be the same afterwards.
forEachEngine('readonly-api', (e, it) => {
  const host = new LiveHost();
  const tag = `${process.pid}`;
  const APP = `maro-app-${tag}`;
  const HOSTNET = `maro-hostnet-${tag}`;
  const STOPPED = `maro-stopped-${tag}`;
  const CREATED = `maro-created-${tag}`;
  const RESTARTED = `maro-restarted-${tag}`;
  const NAMES = [APP, HOSTNET, STOPPED, CREATED, RESTARTED];

  /**
   * The only requests a read-only scanner may make: ping, version, info, the container list, inspect (by
   * id), the image list (snapshot@2: which image each tag names now), image inspect (by id), and the network
   * and volume lists; for `serve`, the events stream (what tells it the host changed).
   */
  const ALLOWED_PATH =
    /^(?:\/v\d+\.\d+)?(?:\/_ping|\/version|\/info|\/containers\/json|\/containers\/[0-9a-f]{64}\/json|\/images\/json|\/images\/sha256:[0-9a-f]{64}\/json|\/networks|\/volumes|\/events)$/;
  const ALLOWED_METHOD = new Set(['GET', 'HEAD']);
  /** The commands run through the proxy below; the next test checks no other command can reach Docker. */
  const DOCKER_COMMANDS = ['scan', 'snapshot', 'premigrate', 'serve'];

  let proxy: EngineProxy | undefined;
  let before: ContainerState[] = [];
  let fixturesAtMs = 0;
  let startedAtMs = 0;
  /** Containers made after the read-only checks (the events witness's marker): removed at the end. */
  const removeAfter: string[] = [];
  const runs: { what: string; run: ChildRun }[] = [];

  /** Unix time for `docker events --since/--until`: seconds, then exactly nine digits of nanoseconds. */
  const eventsTime = (ms: number): string =>
    `${Math.floor(ms / 1000)}.${String((ms % 1000) * 1_000_000).padStart(9, '0')}`;

  const run = async (what: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildRun> => {
    const r = await runCliAsync(args, { workDir: host.dir, env });
    runs.push({ what, run: r });
    return r;
  };

  const report = (dir: string): LiveReport =>
    JSON.parse(readFileSync(join(dir, 'mesh-audit.json'), 'utf8')) as LiveReport;

  it('fixtures: running (none and host network), stopped, never started and restarted-by-policy containers', async () => {
    const eng = e;
    fixturesAtMs = Date.now();
    const appIni = host.write(host.path('app', 'app.ini'), '[server]\nport = 2999\n');
    host.write(host.path('stray.conf'), 'nobody claims me\n');
    const app = runClaimedFromEnvFile(eng, host, APP, {
      env: { APP_MODE: 'prod', APP_TOKEN: `tok-${tag}` },
      options: ['--init', '-v', `${appIni}:/etc/app/app.ini:ro`],
    });
    runContainer(eng, HOSTNET, ['--network', 'host', '--init', '--label', 'mesh.module=web'], ['sleep', '3600']);
    runContainer(eng, STOPPED, ['--network', 'none'], ['sh', '-c', 'exit 3']);
    eng.docker([
      'create',
      '--name',
      CREATED,
      '--label',
      `mesh-audit-test=${eng.run}`,
      ...eng.runOptions,
      '--network',
      'none',
      eng.image,
      'sleep',
      '3600',
    ]);
    runContainer(eng, RESTARTED, ['--network', 'none', '--restart', 'on-failure:2'], ['sh', '-c', 'exit 1']);
    // Everything settles before the scans: the stopped one has exited, the restarted one has used up its
    // two restarts and stays exited.
    await waitFor('the fixture containers to settle', () => {
      const s = engineState(eng);
      const by = (n: string) => s.find((c) => c.name === n);
      return (
        by(STOPPED)?.status === 'exited' && by(RESTARTED)?.status === 'exited' && by(RESTARTED)?.restartCount === 2
      );
    });
    host.ledger([
      app.claim,
      app.declared,
      { id: 'app.ini', type: 'file', origin: 'declared', target: appIni },
      { id: 'app.gone', type: 'file', origin: 'declared', target: host.path('app', 'gone.conf') },
    ]);
    before = engineState(eng);
    const mine = before.filter((c) => NAMES.includes(c.name));
    assert.equal(
      mine.map((c) => [c.name, c.status]).sort(),
      [
        [APP, 'running'],
        [CREATED, 'created'],
        [HOSTNET, 'running'],
        [RESTARTED, 'exited'],
        [STOPPED, 'exited'],
      ].sort(),
    );
    assert.ok(
      mine.some((c) => c.restartCount > 0),
      'one container has a non-zero RestartCount',
    );
    proxy = await engineProxy(eng.dockerHost);
    startedAtMs = Date.now();
  });

  it('every command that talks to Docker, with every collection option, through the recording proxy', async () => {
    const p = proxy!;
    const out = host.out;
    mkdirSync(out, { recursive: true, mode: 0o750 });
    const base = [
      '--ledger',
      host.ledgerPath,
      '--managed-root',
      host.managedRoot,
      '--managed-root',
      join(host.dir, 'etc', 'other'),
    ];
    mkdirSync(join(host.dir, 'etc', 'other'), { recursive: true });
    const formats = ['--format', 'text,json,sarif,jsonl,prom'];

    // scan: flag, every format, then again against its own history with a baseline.
    let r = await run('scan --docker-host, all formats', [
      'scan',
      '--docker-host',
      p.dockerHost,
      ...base,
      '--hostname',
      'ro-host',
      '--out',
      out,
      ...formats,
      '--keep',
      '5',
    ]);
    assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);
    assert.ok(report(out).summary.complete, r.stderr);
    for (const name of ['mesh-audit.json', 'mesh-audit.sarif', 'mesh-audit.jsonl', 'mesh-audit.prom'])
      assert.ok(readdirSync(out).includes(name), name);
    assert.match(r.stdout, 'ro-host');
    r = await run('scan --baseline auto --fail-on-new', [
      'scan',
      '--docker-host',
      p.dockerHost,
      ...base,
      '--hostname',
      'ro-host',
      '--out',
      out,
      ...formats,
      '--baseline',
      'auto',
      '--fail-on-new',
      '--profile',
      'nightly',
    ]);
    assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);

    // DOCKER_HOST instead of the flag.
    const out2 = join(host.dir, 'reports-env');
    mkdirSync(out2, { mode: 0o750 });
    r = await run(
      'scan with DOCKER_HOST',
      ['scan', ...base, '--hostname', 'ro-env', '--out', out2, '--format', 'json'],
      { DOCKER_HOST: p.dockerHost },
    );
    assert.ok(report(out2).summary.complete, r.stderr);

    // The flag wins over DOCKER_HOST naming another engine (here a tcp address nothing listens on).
    const out3 = join(host.dir, 'reports-flag');
    mkdirSync(out3, { mode: 0o750 });
    const seen = p.requests.length;
    r = await run(
      'scan --docker-host over a tcp DOCKER_HOST',
      ['scan', '--docker-host', p.dockerHost, ...base, '--hostname', 'ro-flag', '--out', out3, '--format', 'json'],
      { DOCKER_HOST: 'tcp://127.0.0.1:1' },
    );
    assert.ok(report(out3).summary.complete, `the --docker-host engine was read, not DOCKER_HOST's: ${r.stderr}`);
    assert.ok(p.requests.length > seen, 'the requests went to the --docker-host engine');

    // Everything from a config file (dockerHost, ledger, managedRoots, labels, hostname, keep, timeout).
    const config = host.write(
      join(host.dir, 'config.yaml'),
      [
        `dockerHost: ${p.dockerHost}`,
        `ledger: ${host.ledgerPath}`,
        `managedRoots: [${host.managedRoot}]`,
        'labels: { module: mesh.module, resource: mesh.resource, sources: mesh.sources, sourceDigests: mesh.source-digests }',
        'hostname: ro-config',
        'keep: 3',
        'dockerTimeoutSeconds: 20',
        '',
      ].join('\n'),
    );
    const out4 = join(host.dir, 'reports-config');
    mkdirSync(out4, { mode: 0o750 });
    r = await run('scan --config', ['scan', '--config', config, '--out', out4, '--format', 'json,sarif']);
    assert.ok(report(out4).summary.complete, r.stderr);

    // --root (the host mounted elsewhere) with an explicit --history folder; single formats to stdout.
    const root = join(host.dir, 'hostroot');
    mkdirSync(join(root, 'etc'), { recursive: true });
    writeFileSync(join(root, 'etc', 'hostname'), 'ro-rooted\n');
    for (const format of ['json', 'sarif', 'jsonl', 'prom', 'text']) {
      r = await run(`scan --root --history --out - --format ${format}`, [
        'scan',
        '--docker-host',
        p.dockerHost,
        '--root',
        root,
        '--ledger',
        host.ledgerPath,
        '--history',
        join(out, 'history'),
        '--out',
        '-',
        '--format',
        format,
      ]);
      assert.ok(r.code === 0 || r.code === 1 || r.code === 3, `exit ${r.code}: ${r.stderr}`);
      assert.ok(r.stdout.length > 0, format);
    }

    // snapshot -o with the collection options.
    const snap = join(host.dir, 'snapshots', 'host.json');
    mkdirSync(join(host.dir, 'snapshots'), { mode: 0o750 });
    r = await run('snapshot -o', [
      'snapshot',
      '-o',
      snap,
      '--docker-host',
      p.dockerHost,
      ...base,
      '--hostname',
      'ro-snap',
      '--config',
      config,
    ]);
    assert.is(r.code, 0, r.stderr);
    const taken = JSON.parse(readFileSync(snap, 'utf8')) as {
      containers: { name: string; state?: { status?: string } }[];
    };
    for (const name of NAMES)
      assert.ok(
        taken.containers.some((c) => c.name === name),
        `${name} in the snapshot`,
      );

    // premigrate reads the live host the same way (the adopted node's check).
    const out5 = join(host.dir, 'reports-premigrate');
    mkdirSync(out5, { mode: 0o750 });
    const beforePremigrate = p.requests.length;
    r = await run('premigrate', [
      'premigrate',
      '--docker-host',
      p.dockerHost,
      ...base,
      '--hostname',
      'ro-premigrate',
      '--out',
      out5,
    ]);
    assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);
    assert.ok(p.requests.length > beforePremigrate, 'premigrate read the engine through the proxy');

    // serve reads it the same way, then listens to its events: its first read ended, it is stopped.
    const beforeServe = p.requests.length;
    const serve = startServe(
      ['--docker-host', p.dockerHost, ...base, '--hostname', 'ro-serve'],
      join(host.dir, 'serve', 'serve.sock'),
    );
    await serve.until(
      'serve read the host',
      '/v1/status',
      (a) => a.code === 200 && (JSON.parse(a.body) as { lastFullRead: unknown }).lastFullRead !== null,
      60_000,
    );
    assert.is(await serve.stop(), 0, serve.stderr());
    assert.ok(
      p.requests.slice(beforeServe).some((q) => q.path.endsWith('/events')),
      'serve listened to the events through the proxy',
    );

    for (const { what, run: child } of runs)
      assert.ok(child.code !== null && !child.killed, `${what}: ${child.signal ?? ''}`);
  });

  it('this test runs every command that can reach Docker: the commands whose --help offers --docker-host', async () => {
    const help = await runCliAsync(['--help'], { workDir: host.dir });
    const commands = [
      ...help.stdout
        .split(/\n\s*Commands:\s*\n/)[1]!
        .split(/\n\s*\n/)[0]!
        .matchAll(/^\s+(\S+)/gm),
    ].map((m) => m[1]!);
    assert.ok(commands.includes('scan') && commands.includes('snapshot'), help.stdout);
    const reachDocker: string[] = [];
    for (const command of commands) {
      const own = await runCliAsync([command, '--help'], { workDir: host.dir });
      if (!own.stdout.includes('--docker-host')) continue;
      if (command === 'config') {
        // `config show` takes every setting a scan takes, --docker-host included, to show them merged;
        // it never talks to the engine: shown here through the proxy, which sees no request from it.
        const before = proxy!.requests.length;
        const shown = await runCliAsync(['config', 'show', '--docker-host', proxy!.dockerHost], { workDir: host.dir });
        assert.is(shown.code, 0, shown.stderr);
        assert.match(shown.stdout, proxy!.dockerHost);
        assert.is(proxy!.requests.length, before, 'config show sent nothing to the engine');
        continue;
      }
      reachDocker.push(command);
    }
    assert.equal(
      reachDocker.sort(),
      DOCKER_COMMANDS.slice().sort(),
      'a command that reads Docker must be run through the proxy above',
    );
  });

  it('only GET/HEAD requests on allow-listed paths reached the engine, and every container was read', () => {
    const p = proxy!;
    const show = (q: ProxiedRequest[]) =>
      q
        .slice(0, 10)
        .map((x) => `${x.method} ${x.url}${x.fault ? ` (${x.fault})` : ''}`)
        .join('\n') + (q.length > 10 ? `\n… ${q.length - 10} more` : '');
    assert.ok(p.requests.length > 0, 'the proxy saw the scans');
    const badMethod = p.requests.filter((q) => !ALLOWED_METHOD.has(q.method));
    assert.equal(badMethod, [], `requests other than GET/HEAD:\n${show(badMethod)}`);
    const badPath = p.requests.filter((q) => !ALLOWED_PATH.test(q.path));
    assert.equal(badPath, [], `requests outside the allow-list:\n${show(badPath)}`);
    const withBody = p.requests.filter((q) => q.bodyBytes > 0);
    assert.equal(withBody, [], `requests with a body:\n${show(withBody)}`);
    // The version prefix is the one the engine speaks, never a pinned old one.
    const engineApi = e.docker(['version', '--format', '{{.Server.APIVersion}}']).trim();
    const otherVersion = p.requests.filter((q) => /^\/v\d/.test(q.path) && !q.path.startsWith(`/v${engineApi}/`));
    assert.equal(
      otherVersion,
      [],
      `requests at another API version than the engine's ${engineApi}:\n${show(otherVersion)}`,
    );
    // Not vacuous: the proxy saw the list and an inspect of each fixture container.
    assert.ok(
      p.requests.some((q) => /\/containers\/json$/.test(q.path)),
      'a container list',
    );
    for (const c of before.filter((x) => NAMES.includes(x.name))) {
      assert.ok(
        p.requests.some((q) => q.path.endsWith(`/containers/${c.id}/json`)),
        `an inspect of ${c.name}`,
      );
    }
    // The fixture image, read for its own env: once per scan, not once per container.
    const imageId = e.docker(['image', 'inspect', '--format', '{{.Id}}', e.image]).trim();
    const imageReads = p.requests.filter((q) => q.path.endsWith(`/images/${imageId}/json`)).length;
    const scans = p.requests.filter((q) => /\/containers\/json$/.test(q.path)).length;
    assert.ok(imageReads > 0 && imageReads === scans, `${imageReads} inspects of the fixture image in ${scans} scans`);
    // The image list, the daemon's /info, the network and volume lists: once per scan each, never per container.
    for (const list of [/\/images\/json$/, /\/info$/, /\/networks$/, /\/volumes$/]) {
      const reads = p.requests.filter((q) => list.test(q.path)).length;
      assert.is(reads, scans, `${list.source}: ${reads} requests in ${scans} scans`);
    }
  });

  it("the engine's containers, their states, StartedAt, FinishedAt and RestartCount are unchanged; no engine event happened", async () => {
    const eng = e;
    const endedAtMs = Date.now();
    await proxy!.close();
    assert.equal(engineState(eng), before);
    // The engine's own event log is the second witness: `docker events`, answered by Docker's /events
    // or by Podman's compatible one (from its events file). Podman stops reading that file when the
    // wall clock reaches `--until`, so an `--until` in the past can return nothing at all: the query
    // ends in the future instead, and the events are sorted by their own times here. It is not
    // blind: it must show the set-up's containers being created before the scans, and a marker
    // container created after them (so the read reached past the scans' window).
    await waitFor("the clock to pass the scans' window", () => Date.now() > endedAtMs + 1000);
    const marker = `${APP}-after`;
    eng.docker([
      'create',
      '--name',
      marker,
      '--label',
      `mesh-audit-test=${eng.run}`,
      ...eng.runOptions,
      '--network',
      'none',
      eng.image,
      'true',
    ]);
    removeAfter.push(marker);
    const untilMs = Date.now() + 3000;
    const seen = eng
      .docker(['events', '--since', eventsTime(fixturesAtMs), '--until', eventsTime(untilMs), '--format', '{{json .}}'])
      .split('\n')
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as { Action?: string; timeNano: number; Actor?: { Attributes?: Record<string, string> } },
      );
    const created = (ev: (typeof seen)[number], name: string) =>
      ev.Action === 'create' && ev.Actor?.Attributes?.['name'] === name;
    const ms = (ev: (typeof seen)[number]) => ev.timeNano / 1e6;
    assert.ok(
      seen.some((ev) => created(ev, CREATED) && ms(ev) < startedAtMs),
      `the witness saw the set-up: ${JSON.stringify(seen.slice(0, 5))}`,
    );
    assert.ok(
      seen.some((ev) => created(ev, marker) && ms(ev) > endedAtMs),
      `the witness read past the scans: ${JSON.stringify(seen.slice(-5))}`,
    );
    const during = seen.filter((ev) => ms(ev) >= startedAtMs && ms(ev) <= endedAtMs + 1000);
    assert.equal(during, [], 'engine events while the scans ran');
  });

  it('commands that need no engine never call it (evaluate, scan --snapshot, premigrate --snapshot, diff, rules)', async () => {
    const eng = e;
    const quiet = await engineProxy(eng.dockerHost);
    try {
      const env = { DOCKER_HOST: quiet.dockerHost };
      const snap = join(PACKAGE_ROOT, 'examples', 'demo', 'snapshot.json');
      const evaluated = join(host.dir, 'reports-evaluate');
      mkdirSync(evaluated, { mode: 0o750 });
      const outs = [
        await runCliAsync(
          [
            'evaluate',
            snap,
            '--history',
            join(PACKAGE_ROOT, 'examples', 'demo', 'history'),
            '--format',
            'json,sarif',
            '--out',
            evaluated,
          ],
          { workDir: host.dir, env },
        ),
        await runCliAsync(['scan', '--snapshot', snap, '--format', 'json', '--out', '-'], { workDir: host.dir, env }),
        await runCliAsync(
          ['diff', join(evaluated, 'mesh-audit.json'), join(PACKAGE_ROOT, 'examples', 'demo', 'expected.json')],
          { workDir: host.dir, env },
        ),
        await runCliAsync(['rules', 'list'], { workDir: host.dir, env }),
        await runCliAsync(
          ['premigrate', '--snapshot', snap, '--format', 'json', '--out', join(host.dir, 'reports-premigrate-saved')],
          { workDir: host.dir, env },
        ),
      ];
      for (const o of outs) assert.ok(o.code === 0 || o.code === 1, `exit ${o.code}: ${o.stderr}`);
      assert.equal(quiet.requests, []);
    } finally {
      await quiet.close();
    }
  });

  it('clean-up: remove the containers this test made', () => {
    removeContainers(e, [...NAMES, ...removeAfter]);
  });
});
