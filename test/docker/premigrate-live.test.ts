import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnCli } from '../support/cli.js';
import { engine, removeContainers, runContainer } from './engine.js';
import { LiveHost } from './live-host.js';

// The pre-migration check on a real engine: a container the mesh wrote but no entry claims, and one
// nothing records at all, beside a declared one and a found one.
const e = engine();
const it = e ? test : test.skip;

it('premigrate on a live node: written-but-unclaimed and unknown-origin containers block the migration', () => {
  const eng = e!;
  const host = new LiveHost();
  const tag = process.pid;
  const names = { declared: `ma-pm-web-${tag}`, found: `ma-pm-legacy-${tag}`, unclaimed: `ma-pm-metrics-${tag}`, unknown: `ma-pm-adhoc-${tag}` };
  try {
    runContainer(eng, names.declared, ['--network', 'none', '--label', 'mesh.module=web'], ['sleep', '3600']);
    runContainer(eng, names.found, ['--network', 'none'], ['sleep', '3600']);
    runContainer(eng, names.unclaimed, ['--network', 'none', '--label', 'mesh.module=metrics', '--label', 'mesh.resource=metrics.agent'], ['sleep', '3600']);
    runContainer(eng, names.unknown, ['--network', 'none'], ['sleep', '3600']);
    host.write(host.path('web.conf'), 'x\n');
    host.ledger([
      { id: 'web.server', type: 'container', origin: 'declared', target: names.declared },
      { id: 'web.conf', type: 'file', origin: 'declared', target: host.path('web.conf') },
      { id: 'legacy.app', type: 'container', origin: 'found', target: names.found },
    ]);
    const r = spawnCli(['premigrate', '--docker-host', eng.dockerHost, '--ledger', host.ledgerPath, '--managed-root', host.managedRoot, '--hostname', 'pm-live', '--out', host.out, '--format', 'text,json']);
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
    assert.is(node.ready, false);
    assert.is(r.code, 1);
    assert.match(r.stdout, 'Verdict: not ready');
  } finally {
    removeContainers(eng, Object.values(names));
  }
});

test.run();
