import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnCli } from '../support/cli.js';
import { planSchemaErrors, type PlanNode } from '../support/plan-schema.js';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { LiveHost, envText, sha256 } from './live-host.js';

// The pre-migration check on a real engine: a container the mesh wrote but no entry claims, and one
// nothing records at all, beside a declared one and a found one; with them (issue 25) a declared network and
// volume, a mesh-labelled network and volume no entry claims, and the claimed container's anonymous volume.
// Networks are created --internal and never joined: no bridge comes up.
forEachEngine('premigrate-live', (e, it, index) => {
  it('premigrate on a live node: written-but-unclaimed and unknown-origin containers block the migration', () => {
    const eng = e;
    const host = new LiveHost();
    const tag = process.pid;
    const names = {
      declared: `ma-pm-web-${tag}`,
      found: `ma-pm-legacy-${tag}`,
      unclaimed: `ma-pm-metrics-${tag}`,
      unknown: `ma-pm-adhoc-${tag}`,
    };
    const objects = {
      webNet: `ma-pm-web-net-${tag}`,
      webData: `ma-pm-web-data-${tag}`,
      strayNet: `ma-pm-stray-net-${tag}`,
      strayData: `ma-pm-stray-data-${tag}`,
    };
    const mesh = (module: string, resource: string) => [
      '--label',
      `mesh.module=${module}`,
      '--label',
      `mesh.resource=${resource}`,
    ];
    try {
      eng.docker(['network', 'create', '--internal', ...mesh('web', 'web.net'), objects.webNet]);
      eng.docker(['network', 'create', '--internal', ...mesh('stray', 'stray.net'), objects.strayNet]);
      eng.docker(['volume', 'create', ...mesh('web', 'web.data'), objects.webData]);
      eng.docker(['volume', 'create', ...mesh('stray', 'stray.data'), objects.strayData]);
      runContainer(
        eng,
        names.declared,
        ['--network', 'none', '--label', 'mesh.module=web', '-v', `${objects.webData}:/data`, '-v', '/scratch'],
        ['sleep', '3600'],
      );
      runContainer(eng, names.found, ['--network', 'none'], ['sleep', '3600']);
      runContainer(
        eng,
        names.unclaimed,
        ['--network', 'none', '--label', 'mesh.module=metrics', '--label', 'mesh.resource=metrics.agent'],
        ['sleep', '3600'],
      );
      runContainer(eng, names.unknown, ['--network', 'none'], ['sleep', '3600']);
      host.write(host.path('web.conf'), 'x\n');
      host.ledger([
        { id: 'web.server', type: 'container', origin: 'declared', target: names.declared },
        { id: 'web.conf', type: 'file', origin: 'declared', target: host.path('web.conf') },
        { id: 'legacy.app', type: 'container', origin: 'found', target: names.found },
        { id: 'web.net', type: 'network', origin: 'declared', target: objects.webNet },
        { id: 'web.data', type: 'volume', origin: 'declared', target: objects.webData },
      ]);
      const r = spawnCli([
        'premigrate',
        '--docker-host',
        eng.dockerHost,
        '--ledger',
        host.ledgerPath,
        '--managed-root',
        host.managedRoot,
        '--hostname',
        'pm-live',
        '--out',
        host.out,
        '--format',
        'text,json',
        '--plan',
        'plan.json',
      ]);
      const doc = JSON.parse(readFileSync(join(host.out, 'premigration.json'), 'utf8')) as {
        nodes: { complete: boolean; ready: boolean; inventory: { kind: string; id: string; standing: string }[] }[];
      };
      const node = doc.nodes[0]!;
      assert.ok(node.complete, r.stderr);
      const standingOf = (id: string) => node.inventory.find((row) => row.id === id)?.standing;
      assert.is(standingOf(names.declared), 'declared-present');
      assert.is(standingOf(names.found), 'found-recorded');
      assert.is(standingOf(names.unclaimed), 'mesh-unclaimed');
      assert.is(standingOf(names.unknown), 'unknown-unrecorded');
      assert.is(standingOf(objects.webNet), 'declared-present');
      assert.is(standingOf(objects.webData), 'declared-present');
      assert.is(standingOf(objects.strayNet), 'mesh-unclaimed');
      assert.is(standingOf(objects.strayData), 'mesh-unclaimed');
      const engineOwn = node.inventory.filter(
        (row) =>
          (row.kind === 'network' && ['bridge', 'host', 'none', 'podman'].includes(row.id)) ||
          (row.kind === 'volume' && /^[0-9a-f]{64}$/.test(row.id)),
      );
      assert.equal(engineOwn, [], "the engine's default networks and the anonymous volume are never listed");
      assert.is(node.ready, false);
      assert.is(r.code, 1);
      assert.match(r.stdout, 'Verdict: not ready');
      const plan = JSON.parse(readFileSync(join(host.out, 'plan.json'), 'utf8')) as { nodes: PlanNode[] };
      assert.equal(planSchemaErrors(plan), []);
      const steps = plan.nodes[0]!;
      const ours = (text: string) => text.includes(`-${tag}`);
      assert.equal(
        steps.remove.filter((x) => x.kind === 'network').map((x) => x.command),
        [`docker network rm ${objects.strayNet}`],
      );
      assert.not.ok(
        steps.remove.some((x) => x.command.includes('volume')),
        'a volume holds data: never a removal step',
      );
      const reviewed = (steps.review as { ruleId: string; subject: string; advice?: string }[]).filter((x) =>
        ours(x.subject),
      );
      assert.equal(
        reviewed.map((x) => [x.ruleId, x.subject]),
        [['MA2007', `volume ${objects.strayData}`]],
      );
      assert.match(reviewed[0]!.advice ?? '', 'a volume holds data');
      assert.ok(
        eng.docker(['volume', 'ls', '--format', '{{.Name}}']).includes(objects.strayData),
        'premigrate removed nothing itself',
      );
    } finally {
      removeContainers(eng, Object.values(names));
      // Best effort: the private engine and its objects go with this process anyway.
      const cleanup = (args: string[]) => {
        try {
          eng.docker(args);
        } catch {
          /* not created, or already gone */
        }
      };
      for (const n of [objects.webNet, objects.strayNet]) cleanup(['network', 'rm', n]);
      for (const v of [objects.webData, objects.strayData]) cleanup(['volume', 'rm', '-f', v]);
    }
  });

  // The round trip an operator makes on an adopted node: premigrate --plan says not ready; they merge
  // `record` into the ledger, run the `remove` commands, recreate the drifted container; premigrate then
  // says ready. Every container and file here is this test's own, on its private engine and temp folder.
  it('round trip: the plan of a node that is not ready, carried out as an operator would, makes it ready (exit 0)', () => {
    const eng = e;
    const host = new LiveHost();
    const tag = process.pid;
    const port = 40000 + ((tag * 2 + index) % 20000);
    const names = {
      old: `ma-rt-web-web.server-${tag}`, // the implicit name the web module's container had before it moved
      web: `ma-rt-web-${tag}`,
      app: `ma-rt-app-${tag}`, // built from app.env, which is rewritten afterwards: drifted
      metrics: `ma-rt-metrics-${tag}`, // written by the mesh, claimed by nothing
      adhoc: `ma-rt-adhoc-${tag}`, // unknown origin
      adhocWeb: `ma-rt-adhoc-web-${tag}`, // unknown origin, on the host network, listening on a loopback port
    };
    const premigrate = (extra: string[] = []) =>
      spawnCli([
        'premigrate',
        '--docker-host',
        eng.dockerHost,
        '--ledger',
        host.ledgerPath,
        '--managed-root',
        host.managedRoot,
        '--hostname',
        'pm-roundtrip',
        '--out',
        host.out,
        '--format',
        'text,json',
        ...extra,
      ]);
    const webLabels = ['--label', 'mesh.module=web', '--label', 'mesh.resource=web.server'];
    const appLabels = (envFile: string) => [
      '--label',
      'mesh.module=app',
      '--label',
      'mesh.resource=app.server',
      '--label',
      `mesh.sources=${envFile}`,
      '--label',
      `mesh.source-digests=${sha256(readFileSync(envFile, 'utf8'))}`,
    ];
    try {
      // Before: the web module's container and config at their first targets; app built from its env file.
      const oldConf = host.write(host.path('web', 'old.conf'), 'listen 8080\n');
      const appEnv = host.write(
        host.path('app', 'app.env'),
        envText({ DATABASE_URL: 'postgresql://app:pw@:20000/app', APP_MODE: 'prod' }),
      );
      runContainer(eng, names.old, ['--network', 'none', ...webLabels], ['sleep', '3600']);
      runContainer(
        eng,
        names.app,
        ['--network', 'none', '--env-file', appEnv, ...appLabels(appEnv)],
        ['sleep', '3600'],
      );
      const appEntries = [
        {
          id: 'app.server',
          type: 'container',
          module: 'app',
          origin: 'declared',
          target: names.app,
          sources: [appEnv],
        },
        { id: 'app.env', type: 'file', module: 'app', origin: 'declared', target: appEnv },
      ];
      host.ledger([
        { id: 'web.server', type: 'container', module: 'web', origin: 'declared', target: names.old },
        { id: 'web.conf', type: 'file', module: 'web', origin: 'declared', target: oldConf },
        ...appEntries,
      ]);
      const first = premigrate();
      assert.is(first.code, 0, `the node starts ready: ${first.stdout}${first.stderr}`);

      // The web module's targets move and the host leaves the old ones; the database address becomes
      // known and app.env is rewritten; things nobody recorded appear.
      const webConf = host.write(host.path('web', 'web.conf'), 'listen 8080\n');
      runContainer(eng, names.web, ['--network', 'none', ...webLabels], ['sleep', '3600']);
      const ledgerNow = [
        { id: 'web.server', type: 'container', module: 'web', origin: 'declared', target: names.web },
        { id: 'web.conf', type: 'file', module: 'web', origin: 'declared', target: webConf },
        ...appEntries,
      ];
      host.ledger(ledgerNow);
      host.replaceByRename(
        appEnv,
        envText({ DATABASE_URL: 'postgresql://app:pw@db.mesh.internal:20000/app', APP_MODE: 'prod' }),
      );
      runContainer(
        eng,
        names.metrics,
        ['--network', 'none', '--label', 'mesh.module=metrics', '--label', 'mesh.resource=metrics.agent'],
        ['sleep', '3600'],
      );
      runContainer(eng, names.adhoc, ['--network', 'none'], ['sleep', '3600']);
      runContainer(
        eng,
        names.adhocWeb,
        ['--network', 'host'],
        ['httpd', '-f', '-p', `127.0.0.1:${port}`, '-h', '/www'],
      );
      const notes = host.write(host.path('notes.txt'), 'written by hand\n');

      const planFile = join(host.out, 'adoption-plan.json');
      const before = premigrate(['--plan', 'adoption-plan.json']);
      assert.is(before.code, 1, before.stdout + before.stderr);
      assert.match(before.stdout, 'Verdict: not ready');
      const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { nodes: PlanNode[] };
      assert.equal(planSchemaErrors(plan), []);
      const node = plan.nodes[0]!;
      assert.is(node.ready, false);
      assert.equal(
        node.record.map(({ entry: x }) => [x.type, x.target, x.origin, x.holds ?? null, x.applied_at]).sort(),
        [
          ['container', names.adhoc, 'found', [], null],
          ['container', names.adhocWeb, 'found', [port], null],
          ['file', notes, 'found', null, null],
        ].sort(),
        'record: the unknown-origin containers and file, with the ports they really listen on',
      );
      const loopbackOnly = node.record.find((x) => x.entry.target === names.adhocWeb)!;
      assert.equal(
        [loopbackOnly.exposure, loopbackOnly.warning],
        ['loopback', null],
        'listening on 127.0.0.1 only: offered without a warning',
      );
      assert.equal(
        node.remove.map((x) => x.command).sort(),
        [`docker rm -f ${names.metrics}`, `docker rm -f ${names.old}`, `rm ${oldConf}`].sort(),
      );
      const stale = node.remove.find((x) => x.target === names.old)!;
      assert.is(stale.standing, 'stale-former-target');
      assert.ok(
        stale.reason.some((why) => why.includes(`web.server moved from ${names.old} to ${names.web}`)),
        JSON.stringify(stale),
      );
      assert.equal(
        node.recreate.map((x) => [x.container, x.module, x.entries]),
        [[names.app, 'app', ['app.server']]],
      );
      assert.equal(node.resolve, []);
      assert.equal(node.review, []);
      assert.ok(existsSync(oldConf), 'premigrate removed nothing itself');
      assert.match(eng.docker(['ps', '-a', '--format', '{{.Names}}']), names.old, 'premigrate removed nothing itself');

      // The operator: merge `record` into the ledger ...
      host.ledger([...ledgerNow, ...node.record.map((x) => x.entry)]);
      // ... run the `remove` commands (each checked to be about this test's own container or temp folder) ...
      const ours = new Set(Object.values(names).map((n) => `docker rm -f ${n}`));
      for (const { command } of node.remove) {
        assert.ok(
          ours.has(command) || (command.startsWith(`rm ${host.dir}/`) && !command.includes('..')),
          `not this test's to run: ${command}`,
        );
        const run = spawnSync('sh', ['-c', command], {
          encoding: 'utf8',
          env: { ...process.env, DOCKER_HOST: eng.dockerHost },
          timeout: 60_000,
        });
        assert.is(run.status, 0, `${command}: ${run.stderr}`);
      }
      // ... and recreate the drifted container from the file as it is now (what re-applying its module does).
      eng.docker(['rm', '-f', names.app]);
      runContainer(
        eng,
        names.app,
        ['--network', 'none', '--env-file', appEnv, ...appLabels(appEnv)],
        ['sleep', '3600'],
      );

      const after = premigrate(['--plan', 'adoption-plan.json']);
      assert.is(after.code, 0, after.stdout + after.stderr);
      assert.match(after.stdout, 'Verdict: ready');
      const done = JSON.parse(readFileSync(planFile, 'utf8')) as { nodes: PlanNode[] };
      assert.equal(planSchemaErrors(done), []);
      const left = done.nodes[0]!;
      assert.equal(
        [left.record, left.remove, left.recreate, left.resolve, left.review],
        [[], [], [], [], []],
        'nothing left to do',
      );
      const report = JSON.parse(readFileSync(join(host.out, 'premigration.json'), 'utf8')) as {
        nodes: { inventory: { id: string; standing: string }[] }[];
      };
      const standingOf = (id: string) => report.nodes[0]!.inventory.find((row) => row.id === id)?.standing;
      assert.is(standingOf(names.adhocWeb), 'found-recorded');
      assert.is(standingOf(notes), 'found-recorded');
      assert.is(standingOf(names.app), 'declared-present');
    } finally {
      removeContainers(eng, Object.values(names));
    }
  });

  // Issue 28, item 3: the config's `exclude:` scopes premigrate as it scopes scan, and a command-line
  // --exclude adds to it. The plan never tells the operator to remove (or record) another system's containers.
  it("premigrate --plan honours the config's exclude, and a command-line --exclude adds to it", () => {
    const eng = e;
    const host = new LiveHost();
    const tag = process.pid;
    const names = { web: `ma-sc-web-${tag}`, ci: `ma-sc-ci-runner-${tag}`, scratch: `ma-sc-scratch-${tag}` };
    const config = host.write(join(host.dir, 'config.yaml'), 'exclude:\n  - label:com.example.system=ci\n');
    const premigrate = (plan: string, extra: string[]) =>
      spawnCli(
        [
          'premigrate',
          '--docker-host',
          eng.dockerHost,
          '--ledger',
          host.ledgerPath,
          '--managed-root',
          host.managedRoot,
          '--hostname',
          'pm-scope',
          '--out',
          host.out,
          '--format',
          'json',
          '--plan',
          plan,
          ...extra,
        ],
        { MESH_AUDIT_CONFIG: '' },
      );
    const planOf = (plan: string) => JSON.parse(readFileSync(join(host.out, plan), 'utf8')) as { nodes: PlanNode[] };
    const premigrationOf = () =>
      JSON.parse(readFileSync(join(host.out, 'premigration.json'), 'utf8')) as {
        nodes: { complete: boolean; excluded?: { containers: number }; inventory: { id: string }[] }[];
      };
    try {
      runContainer(
        eng,
        names.web,
        ['--network', 'none', '--label', 'mesh.module=web', '--label', 'mesh.resource=web.server'],
        ['sleep', '3600'],
      );
      // Another system's runner carries mesh labels (the plan would say `docker rm -f` it); the scratch one none (the plan would record it).
      runContainer(
        eng,
        names.ci,
        [
          '--network',
          'none',
          '--label',
          'com.example.system=ci',
          '--label',
          'mesh.module=ci',
          '--label',
          'mesh.resource=ci.runner',
        ],
        ['sleep', '3600'],
      );
      runContainer(eng, names.scratch, ['--network', 'none'], ['sleep', '3600']);
      host.ledger([{ id: 'web.server', type: 'container', module: 'web', origin: 'declared', target: names.web }]);

      // Without the config: both are in the plan (the assertions below can fail).
      const unscoped = premigrate('plan-unscoped.json', []);
      const all = JSON.stringify(planOf('plan-unscoped.json'));
      assert.ok(all.includes(names.ci) && all.includes(names.scratch), `exit ${unscoped.code}: ${unscoped.stderr}`);
      assert.match(all, `docker rm -f ${names.ci}`);

      // The config's exclude: the ci runner is neither in the plan nor in the inventory; the scratch one still is.
      const byConfig = premigrate('plan-config.json', ['--config', config]);
      const configPlan = planOf('plan-config.json');
      assert.equal(planSchemaErrors(configPlan), []);
      const configText = JSON.stringify(configPlan);
      assert.not.ok(
        configText.includes(names.ci),
        `the config's exclude leaves the ci runner out of the plan (exit ${byConfig.code}: ${byConfig.stderr})`,
      );
      assert.ok(configText.includes(names.scratch));
      const configNode = premigrationOf().nodes[0]!;
      assert.ok(configNode.complete, byConfig.stderr);
      assert.not.ok(configNode.inventory.some((r) => r.id === names.ci));
      assert.is(configNode.excluded?.containers, 1);

      // A command-line --exclude adds to the config's list: neither is in the plan, both are counted.
      const both = premigrate('plan-both.json', ['--config', config, '--exclude', `name:ma-sc-scratch-${tag}`]);
      const bothPlan = planOf('plan-both.json');
      assert.equal(planSchemaErrors(bothPlan), []);
      const bothText = JSON.stringify(bothPlan);
      assert.not.ok(bothText.includes(names.ci), both.stderr);
      assert.not.ok(bothText.includes(names.scratch), both.stderr);
      const node = premigrationOf().nodes[0]!;
      assert.is(node.excluded?.containers, 2);
      assert.not.ok(node.inventory.some((r) => r.id === names.ci || r.id === names.scratch));
      assert.match(bothText, 'out of scope, so not in this plan: 2 containers');
      assert.is(
        both.code,
        0,
        `only our declared container is left, and it is present: ready (${both.stdout}${both.stderr})`,
      );
    } finally {
      removeContainers(eng, Object.values(names));
    }
  });
});
