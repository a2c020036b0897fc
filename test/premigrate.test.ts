import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, runCli, tempDir } from './support/cli.js';
import { multitoolErrors } from './support/multitool.js';

const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

function golden(file: string, text: string): void {
  if (UPDATE) writeFileSync(file, text);
  assert.ok(existsSync(file), `${file} is missing: run \`npm run golden\``);
  assert.fixture(text, readFileSync(file, 'utf8'), `${file} differs (after a deliberate change: npm run golden)`);
}

test('the adopted node: every standing with the right resources, the ports, and "not ready" (exit 1)', async () => {
  const out = tempDir();
  const r = await runCli(['premigrate', '--snapshot', example('adopted-node', 'snapshot.json'), '--out', out]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, 'using the history beside the snapshot');
  const expect: [string, string][] = [
    ['declared and present (2)', 'container web '],
    ['declared and missing (1)', 'container cache  [cache.server]'],
    ['found and recorded (2)', 'container legacy-db '],
    ['written by the mesh but unclaimed (1)', 'container metrics-agent'],
    ['unknown origin and unrecorded (2)', 'container adhoc-debug '],
    ['stale at a former target (2)', 'container web-web.server '],
    ['claimed by two entries (1)', 'container proxy  [proxy.server, edge.proxy]'],
  ];
  for (const [heading, resource] of expect) {
    const section = r.stdout.split(heading)[1]?.split(/\n[✓✗]/)[0] ?? '';
    assert.ok(section.includes(resource), `${heading} lists ${resource}:\n${r.stdout}`);
  }
  assert.match(r.stdout, 'web: holds 8080, 8443; open 8080; also bound: 8443 by web-web.server');
  assert.match(r.stdout, 'Verdict: not ready: 1 declared-missing, 1 mesh-unclaimed, 2 unknown-unrecorded, 2 stale-former-target, 1 double-claimed');
  golden(example('adopted-node', 'expected.txt'), r.stdout);
  golden(example('adopted-node', 'expected.md'), readFileSync(join(out, 'premigration.md'), 'utf8'));
  const json = readFileSync(join(out, 'premigration.json'), 'utf8').replace(/"generatedAt": "[^"]+"/, '"generatedAt": "TIME"');
  golden(example('adopted-node', 'expected.json'), json);
  const doc = JSON.parse(json) as { nodes: { ready: boolean; blocking: Record<string, number> }[] };
  assert.is(doc.nodes[0]!.ready, false);
  assert.equal(doc.nodes[0]!.blocking, { 'declared-missing': 1, 'mesh-unclaimed': 1, 'unknown-unrecorded': 2, 'stale-former-target': 2, 'double-claimed': 1 });
  assert.equal(multitoolErrors(join(out, 'premigration.sarif')), []);
  const md = readFileSync(join(out, 'premigration.md'), 'utf8');
  assert.match(md, '**Verdict: not ready');
  assert.match(md, '| unknown-unrecorded | container `adhoc-debug` |');
});

test('the same node with its problems resolved: "ready", exit 0', async () => {
  const r = await runCli(['premigrate', '--snapshot', example('adopted-node', 'resolved', 'snapshot.json'), '--format', 'text']);
  assert.is(r.code, 0, r.stdout);
  assert.match(r.stdout, 'Verdict: ready');
  golden(example('adopted-node', 'resolved', 'expected.txt'), r.stdout);
});

test('an incomplete snapshot gives no verdict: exit 3', async () => {
  const dir = tempDir();
  const snap = JSON.parse(readFileSync(example('adopted-node', 'resolved', 'snapshot.json'), 'utf8'));
  snap.problems = [{ source: 'docker', message: 'cannot reach the Docker engine' }];
  writeFileSync(join(dir, 's.json'), JSON.stringify(snap));
  const r = await runCli(['premigrate', '--snapshot', join(dir, 's.json'), '--format', 'text']);
  assert.is(r.code, 3);
  assert.match(r.stdout, 'Verdict: INCOMPLETE');
});

test.run();
