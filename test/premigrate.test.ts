import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { ledgerRecord } from '../src/collect/ledger-entries.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { createSafeValueMaker } from '../src/secret/value.js';
import { example, runCli, tempDir } from './support/cli.js';
import { planSchemaErrors, type PlanNode } from './support/plan-schema.js';
import { multitoolErrors } from './support/multitool.js';
import { HostModel } from './support/host-model.js';

const UPDATE = process.env['UPDATE_GOLDEN'] === '1';
/** A copy of the resolved node's snapshot, changed by `edit`, written to a temp file. */
function resolvedVariant(edit: (snap: { ledger: { entries: unknown[] } } & Record<string, unknown>) => void): string {
  const dir = tempDir();
  const snap = JSON.parse(readFileSync(example('adopted-node', 'resolved', 'snapshot.json'), 'utf8'));
  edit(snap);
  writeFileSync(join(dir, 's.json'), JSON.stringify(snap));
  return join(dir, 's.json');
}

const SITE_PACK = `schema: mesh-audit/policy@1
pack: {id: site, name: site rules, version: 1.0.0}
rules:
  - id: SITE001
    name: no-host-network-on-adopted-node
    title: No container runs on the host network
    severity: error
    subject: containers
    assert: {"!": {"var": "host_network"}}
    message: "{name} runs on the host network"
    help: "A site's own rule."
    remediation: Fix it.
    tags: [site]
    profiles: [premigration]
`;

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
  assert.match(
    r.stdout,
    'Verdict: not ready: 1 declared-missing, 1 mesh-unclaimed, 2 unknown-unrecorded, 2 stale-former-target, 1 double-claimed',
  );
  golden(example('adopted-node', 'expected.txt'), r.stdout);
  golden(example('adopted-node', 'expected.md'), readFileSync(join(out, 'premigration.md'), 'utf8'));
  const json = readFileSync(join(out, 'premigration.json'), 'utf8').replace(
    /"generatedAt": "[^"]+"/,
    '"generatedAt": "TIME"',
  );
  golden(example('adopted-node', 'expected.json'), json);
  const doc = JSON.parse(json) as { nodes: { ready: boolean; blocking: Record<string, number> }[] };
  assert.is(doc.nodes[0]!.ready, false);
  assert.equal(doc.nodes[0]!.blocking, {
    'declared-missing': 1,
    'mesh-unclaimed': 1,
    'unknown-unrecorded': 2,
    'stale-former-target': 2,
    'double-claimed': 1,
  });
  assert.equal(multitoolErrors(join(out, 'premigration.sarif')), []);
  const md = readFileSync(join(out, 'premigration.md'), 'utf8');
  assert.match(md, '**Verdict: not ready');
  assert.match(md, '| unknown-unrecorded | container `adhoc-debug` |');
  assert.match(md, '### Adoption plan');
  assert.match(md, '| `docker rm -f web-web.server` | stale-former-target |');
});

test("the adopted node's adoption plan: record, remove, resolve, review; valid against the shipped schema; golden", async () => {
  const out = tempDir();
  const planFile = join(out, 'adoption-plan.json');
  const r = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'json',
    '--out',
    out,
    '--plan',
    'adoption-plan.json',
  ]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, `wrote ${planFile}`);
  const text = readFileSync(planFile, 'utf8');
  const plan = JSON.parse(text) as { schemaVersion: string; nodes: PlanNode[] };
  assert.equal(planSchemaErrors(plan), []);
  assert.is(plan.schemaVersion, 'mesh-audit/adoption-plan@3');
  const node = plan.nodes[0]!;
  assert.is(node.ready, false);
  assert.equal(
    node.record.map(({ entry: e }) => [e.id, e.type, e.target, e.origin, e.applied_at]),
    [
      ['found.adhoc-debug', 'container', 'adhoc-debug', 'found', null],
      ['found.notes.txt', 'file', '/etc/mesh/notes.txt', 'found', null],
    ],
  );
  assert.equal(node.record[0]!.entry.holds, [], 'adhoc-debug listens on no host port');
  assert.equal(
    node.record.map((r) => [r.severity, r.exposure, r.warning]),
    [
      ['note', 'none', null],
      ['warning', null, null],
    ],
    "each with its finding's severity and its exposure",
  );
  assert.equal(
    node.remove.map((x) => x.command),
    ['docker rm -f metrics-agent', 'docker rm -f web-web.server', 'rm /etc/mesh/web/old.conf'],
  );
  assert.ok(
    node.remove[1]!.reason.some((why) => why.startsWith('MA2003: web.server moved from web-web.server to web')),
    JSON.stringify(node.remove[1]),
  );
  assert.equal(
    node.resolve.map((x) => [x.target, [...x.entries].sort()]),
    [['proxy', ['edge.proxy', 'proxy.server']]],
  );
  assert.equal(
    node.review.map((x) => [x.ruleId, x.subject]),
    [['MA3001', 'ledger-entry cache.server']],
  );
  golden(
    example('adopted-node', 'expected-plan.json'),
    text.replace(/"generatedAt": "[^"]+"/, '"generatedAt": "TIME"'),
  );
});

test('the terminal view puts the verdict and the counts first, and shows each finding once', async () => {
  const out = tempDir();
  const r = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'text,json',
    '--out',
    out,
  ]);
  assert.is(r.code, 1, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0]!, /^adopted-7 {2}pre-migration check/);
  assert.match(lines[1]!, /^Verdict: not ready: /, 'the verdict on the line under the host, before anything else');
  assert.is(lines[2], '  11 resources: 4 in order, 7 blocking; 9 blocking findings (6 errors, 2 warnings, 1 note)');
  assert.is(lines[3], '  plan: record 2, remove 3, resolve 1, review 1');
  assert.ok(lines.findIndex((l) => l.startsWith('✓ declared and present')) > 3);
  const { findings } = JSON.parse(readFileSync(join(out, 'premigration.json'), 'utf8')) as {
    findings: { message: string }[];
  };
  assert.is(findings.length, 10, '9 blocking and one warning about a resource in order');
  for (const f of new Set(findings.map((x) => x.message))) {
    const times = r.stdout.split(f).length - 1;
    assert.is(times, findings.filter((x) => x.message === f).length, `shown once: ${f}`);
  }
  // The plan names the findings behind a step by rule; their messages are above.
  assert.match(r.stdout, /docker rm -f web-web\.server +\(MA2001, MA2003\)\n/);
});

test('an exposed container of unknown origin is offered for recording only with its severity, its exposure and a warning', async () => {
  const dir = tempDir();
  const snap = JSON.parse(readFileSync(example('adopted-node', 'snapshot.json'), 'utf8'));
  const adhoc = snap.containers.find((c: { name: string }) => c.name === 'adhoc-debug');
  adhoc.networkMode = 'host';
  adhoc.proc.listening = [{ protocol: 'tcp', address: '0.0.0.0', port: 9000 }];
  writeFileSync(join(dir, 's.json'), JSON.stringify(snap));
  mkdirSync(join(dir, 'history'));
  writeFileSync(
    join(dir, 'history', 'before.json'),
    readFileSync(example('adopted-node', 'history', '2026-10-01T03-00-00Z.json')),
  );
  const r = await runCli([
    'premigrate',
    '--snapshot',
    join(dir, 's.json'),
    '--out',
    join(dir, 'out'),
    '--plan',
    'plan.json',
  ]);
  assert.is(r.code, 1, r.stderr);
  const plan = JSON.parse(readFileSync(join(dir, 'out', 'plan.json'), 'utf8')) as { nodes: PlanNode[] };
  assert.equal(planSchemaErrors(plan), []);
  const step = plan.nodes[0]!.record.find((x) => x.entry.target === 'adhoc-debug');
  assert.ok(step, JSON.stringify(plan.nodes[0]!.record));
  assert.equal(
    [step.severity, step.exposure, step.exposedEndpoints, step.findings],
    ['error', 'all-interfaces', ['0.0.0.0:9000/tcp'], [{ ruleId: 'MA2001', severity: 'error' }]],
  );
  assert.match(
    step.warning ?? '',
    'exposed on all interfaces (0.0.0.0:9000/tcp); recorded as found it is held for ever',
  );
  assert.equal(step.entry.holds, [9000], "the entry itself is still the ledger's own format");
  // The terminal: the step says error and exposed, and the warning is the next line.
  const lines = r.stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith('    container adhoc-debug as found.adhoc-debug:'));
  assert.ok(at > 0, r.stdout);
  assert.match(lines[at]!, 'error (MA2001); exposed: 0.0.0.0:9000/tcp; holds 9000');
  assert.match(lines[at + 1]!, /^ {6}WARNING: exposed on all interfaces/);
  assert.match(r.stdout, 'plan: record 2 (1 with a warning)');
  const md = readFileSync(join(dir, 'out', 'premigration.md'), 'utf8');
  assert.match(
    md,
    '| `found.adhoc-debug` | container `adhoc-debug` | error | all-interfaces: 0.0.0.0:9000/tcp | **exposed on all interfaces',
  );
});

test('every entry the plan proposes is a well-formed ledger entry: merged into the ledger, the node reads it as found', async () => {
  const dir = tempDir();
  const planFile = join(dir, 'plan.json');
  await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'text',
    '--out',
    dir,
    '--plan',
    'plan.json',
  ]);
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { nodes: PlanNode[] };
  const safe = createSafeValueMaker();
  for (const { entry } of plan.nodes[0]!.record) {
    const rec = ledgerRecord(JSON.parse(JSON.stringify(entry)), 1, safe);
    assert.ok(rec.valid, `${entry.id}: ${rec.errors.join('; ')}`);
    assert.is(rec.entry.origin, 'found');
  }
});

test('a malformed ledger entry makes the node not ready (MA3005), and the verdict names it', async () => {
  const file = resolvedVariant((snap) => {
    snap.ledger.entries.push({
      line: 40,
      valid: false,
      errors: ["entry must have required property 'target'"],
      entry: { id: 'broken.entry', type: 'container' },
    });
  });
  const r = await runCli(['premigrate', '--snapshot', file, '--format', 'text']);
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stdout, 'Verdict: not ready: MA3005 (ledger-entry broken.entry)');
  assert.match(
    r.stdout,
    'Other findings (1):\n    ledger-entry broken.entry\n        error   MA3005  ledger entry broken.entry (line 40) is not well formed',
  );
  assert.match(r.stdout, 'review (1)');
});

test('a drifted container stands as "drifted", blocks, and the plan recreates it with its module (045)', async () => {
  const out = tempDir();
  const r = await runCli([
    'premigrate',
    '--snapshot',
    example('045', 'snapshot.json'),
    '--format',
    'text,json,md',
    '--out',
    out,
    '--plan',
    'plan.json',
  ]);
  assert.is(r.code, 1, r.stderr);
  const doc = JSON.parse(readFileSync(join(out, 'premigration.json'), 'utf8')) as {
    nodes: { ready: boolean; inventory: { id: string; standing: string }[] }[];
  };
  assert.is(doc.nodes[0]!.inventory.find((row) => row.id === 'gitea-server')?.standing, 'drifted');
  assert.match(r.stdout, '✗ drifted from what it was built from (1)');
  assert.match(r.stdout, 'Verdict: not ready: 1 drifted');
  const md = readFileSync(join(out, 'premigration.md'), 'utf8');
  assert.match(md, '**Verdict: not ready: 1 drifted**');
  assert.match(md, '| drifted | container `gitea-server` |');
  const plan = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as { nodes: PlanNode[] };
  assert.equal(
    plan.nodes[0]!.recreate.map((x) => [x.container, x.module, x.entries]),
    [['gitea-server', 'gitea', ['gitea.server']]],
  );
  assert.equal(planSchemaErrors(plan), []);
});

test('a custom pack changes the verdict: an error rule of its own blocks a ready node; without the ownership rules the adopted node blocks on nothing they say', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'site.yaml'), SITE_PACK);
  const withSite = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'resolved', 'snapshot.json'),
    '--format',
    'text',
    '--policy',
    join(PACKAGE_ROOT, 'policies', 'mesh-core'),
    '--policy',
    join(dir, 'site.yaml'),
  ]);
  assert.is(withSite.code, 1, withSite.stdout);
  assert.match(
    withSite.stdout,
    'Verdict: not ready: SITE001 (container legacy-db), SITE001 (container web), SITE001 (container web-alt)',
  );

  // The site pack alone: nothing says the adopted node's unclaimed or stale resources block; its host-network containers do.
  const alone = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'text',
    '--policy',
    join(dir, 'site.yaml'),
    '--no-default-policy',
  ]);
  assert.is(alone.code, 1);
  assert.match(
    alone.stdout,
    'Verdict: not ready: SITE001 (container legacy-db), SITE001 (container web), SITE001 (container web-web.server)',
  );
  assert.not.match(alone.stdout, 'unknown-unrecorded');
  assert.match(
    alone.stdout,
    'adhoc-debug     running, image registry.example.invalid/busybox:1; no rule of the profile objects',
  );
  assert.match(alone.stdout, 'the shipped pack was NOT loaded (--no-default-policy)');
  // Added to the shipped pack (the default), the site pack blocks on its own rule and on the shipped ones.
  const added = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'text',
    '--policy',
    join(dir, 'site.yaml'),
  ]);
  assert.is(added.code, 1);
  assert.match(added.stdout, 'SITE001 (container legacy-db)');
  assert.match(added.stdout, 'unknown-unrecorded');

  writeFileSync(join(dir, 'quiet.yaml'), SITE_PACK.replace('assert: {"!": {"var": "host_network"}}', 'assert: true'));
  const quiet = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'text',
    '--policy',
    join(dir, 'quiet.yaml'),
    '--no-default-policy',
  ]);
  assert.is(quiet.code, 0, quiet.stdout);
  assert.match(quiet.stdout, 'Verdict: ready');
});

test('--out - writes the one chosen format to stdout and makes no folder named -', async () => {
  const dir = tempDir();
  const r = spawnSync(
    process.execPath,
    [
      join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'),
      'premigrate',
      '--snapshot',
      example('adopted-node', 'snapshot.json'),
      '--format',
      'md',
      '--out',
      '-',
    ],
    { cwd: dir, encoding: 'utf8', timeout: 60_000 },
  );
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stdout, /^## Pre-migration check: adopted-7/);
  assert.not.ok(existsSync(join(dir, '-')), 'no folder named -');
  const two = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'md,json',
    '--out',
    '-',
  ]);
  assert.is(two.code, 2);
  assert.match(two.stderr, '--out - writes one format to stdout');
});

test("the plan is a file of the output folder, written with the reports' safety", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'real'));
  symlinkSync(join(dir, 'real'), join(dir, 'link'));
  const snap = example('adopted-node', 'snapshot.json');
  const viaLink = await runCli([
    'premigrate',
    '--snapshot',
    snap,
    '--format',
    'text',
    '--out',
    join(dir, 'link'),
    '--plan',
    'plan.json',
  ]);
  assert.is(viaLink.code, 3, viaLink.stderr);
  assert.match(viaLink.stderr, 'symlink');
  assert.not.ok(existsSync(join(dir, 'real', 'plan.json')));
  for (const bad of [join(dir, 'elsewhere.json'), '../plan.json', '.hidden', 'premigration.json']) {
    const r = await runCli([
      'premigrate',
      '--snapshot',
      snap,
      '--format',
      'text',
      '--out',
      join(dir, 'real'),
      '--plan',
      bad,
    ]);
    assert.is(r.code, 2, `${bad}: ${r.stderr}`);
    assert.match(r.stderr, '--plan');
  }
  const toStdout = await runCli([
    'premigrate',
    '--snapshot',
    snap,
    '--format',
    'json',
    '--out',
    '-',
    '--plan',
    'plan.json',
  ]);
  assert.is(toStdout.code, 2);
  assert.equal(readdirSync(join(dir, 'real')), [], 'nothing written on bad usage');
});

test('the same node with its problems resolved: "ready", exit 0', async () => {
  const r = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'resolved', 'snapshot.json'),
    '--format',
    'text',
  ]);
  assert.is(r.code, 0, r.stdout);
  assert.match(r.stdout, 'Verdict: ready');
  assert.not.match(r.stdout, 'Adoption plan');
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
  assert.match(r.stdout, 'this plan may miss resources');
});

test('a container on the host network whose sockets were not read: its entry has no holds, and a note says so (unknown is not none)', async () => {
  const dir = tempDir();
  const snap = JSON.parse(readFileSync(example('adopted-node', 'snapshot.json'), 'utf8'));
  const adhoc = snap.containers.find((c: { name: string }) => c.name === 'adhoc-debug');
  adhoc.networkMode = 'host';
  adhoc.proc = { available: false, reason: 'not run as root' };
  writeFileSync(join(dir, 's.json'), JSON.stringify(snap));
  mkdirSync(join(dir, 'history'));
  writeFileSync(
    join(dir, 'history', 'before.json'),
    readFileSync(example('adopted-node', 'history', '2026-10-01T03-00-00Z.json')),
  );
  const r = await runCli([
    'premigrate',
    '--snapshot',
    join(dir, 's.json'),
    '--format',
    'text',
    '--out',
    join(dir, 'out'),
    '--plan',
    'plan.json',
  ]);
  const plan = JSON.parse(readFileSync(join(dir, 'out', 'plan.json'), 'utf8')) as { nodes: PlanNode[] };
  const entry = plan.nodes[0]!.record.find((e) => e.entry.target === 'adhoc-debug')?.entry;
  assert.ok(entry, r.stdout);
  assert.not.ok('holds' in entry, JSON.stringify(entry));
  assert.ok(
    plan.nodes[0]!.notes.some((n) =>
      n.includes('found.adhoc-debug: the ports adhoc-debug listens on were not read (not run as root)'),
    ),
    JSON.stringify(plan.nodes[0]!.notes),
  );
  assert.equal(planSchemaErrors(plan), []);
});

// Issue 25: networks, volumes and host listeners stand in the inventory beside containers and files; the engine's
// own objects never do; a volume is reviewed (it holds data), never removed; a host process is recorded as a service.
function wholeHostNode(): string {
  const mesh = (module: string, resource: string) => ({ 'mesh.module': module, 'mesh.resource': resource });
  const anonymous = 'a'.repeat(64);
  const snap = new HostModel('whole-host', '2026-10-02T03:00:00Z')
    .container({
      name: 'web',
      labels: mesh('web', 'web.server'),
      network: 'web_net',
      volumes: [
        { name: 'web_data', destination: '/data' },
        { name: anonymous, destination: '/cache' },
      ],
    })
    .network({ name: 'bridge' })
    .network({ name: 'host', driver: 'host' })
    .network({ name: 'none', driver: 'null' })
    .network({ name: 'web_net', labels: mesh('web', 'web.net'), containers: ['web'] })
    .network({ name: 'metrics_net', internal: true, labels: mesh('metrics', 'metrics.net') })
    .network({ name: 'adhoc_net' })
    .volume({ name: 'web_data', labels: mesh('web', 'web.data'), containers: ['web'] })
    .volume({ name: anonymous, labels: { 'com.docker.volume.anonymous': '' }, containers: ['web'] })
    .volume({ name: 'metrics_data', labels: mesh('metrics', 'metrics.data') })
    .volume({ name: 'scratch' })
    .hostListener({
      protocol: 'tcp',
      address: '127.0.0.1',
      port: 5432,
      holder: {
        pid: 700,
        name: 'postgres',
        exe: '/usr/lib/postgresql/15/bin/postgres',
        containerId: null,
      },
    })
    .hostListener({
      protocol: 'tcp',
      address: '0.0.0.0',
      port: 22,
      holder: {
        pid: 500,
        name: 'sshd',
        exe: '/usr/sbin/sshd',
        containerId: null,
      },
    })
    .hostListener({
      protocol: 'tcp6',
      address: '::',
      port: 22,
      holder: {
        pid: 500,
        name: 'sshd',
        exe: '/usr/sbin/sshd',
        containerId: null,
      },
    })
    .hostListener({
      protocol: 'tcp',
      address: '10.0.0.5',
      port: 9100,
      holder: {
        pid: 600,
        name: 'node_exporter',
        exe: '/usr/bin/node_exporter',
        containerId: null,
      },
    })
    .hostListener({ protocol: 'tcp', address: '0.0.0.0', port: 2049, holder: null })
    .ledger(
      [
        { id: 'web.server', type: 'container', origin: 'declared', module: 'web', target: 'web' },
        { id: 'web.net', type: 'network', origin: 'declared', module: 'web', target: 'web_net' },
        { id: 'web.data', type: 'volume', origin: 'declared', module: 'web', target: 'web_data' },
        { id: 'node-exporter', type: 'service', origin: 'found', target: 'node_exporter', holds: [9100] },
      ],
      { node: 'whole-1', adopted: true },
    )
    .build();
  const file = join(tempDir(), 'snapshot.json');
  writeFileSync(file, JSON.stringify(snap));
  return file;
}

test('networks, volumes and host listeners: standings, verdict and plan; defaults never listed; a volume is reviewed, never removed', async () => {
  const out = tempDir();
  const r = await runCli([
    'premigrate',
    '--snapshot',
    wholeHostNode(),
    '--format',
    'text,json,md',
    '--out',
    out,
    '--plan',
    'plan.json',
  ]);
  assert.is(r.code, 1, r.stdout + r.stderr);
  const doc = JSON.parse(readFileSync(join(out, 'premigration.json'), 'utf8')) as {
    nodes: { complete: boolean; inventory: { kind: string; id: string; standing: string; blocking: boolean }[] }[];
  };
  const node = doc.nodes[0]!;
  assert.ok(node.complete, r.stderr);
  const rows = node.inventory.filter((x) => x.kind !== 'container' && x.kind !== 'file');
  assert.equal(
    rows.map((x) => [x.kind, x.id, x.standing, x.blocking]).sort(),
    [
      ['network', 'web_net', 'declared-present', false],
      ['network', 'metrics_net', 'mesh-unclaimed', true],
      ['network', 'adhoc_net', 'unknown-unrecorded', false],
      ['volume', 'web_data', 'declared-present', false],
      ['volume', 'metrics_data', 'mesh-unclaimed', true],
      ['volume', 'scratch', 'unknown-unrecorded', false],
      ['listener', '0.0.0.0:22/tcp', 'unknown-unrecorded', true],
      ['listener', '[::]:22/tcp6', 'unknown-unrecorded', true],
      ['listener', '10.0.0.5:9100/tcp', 'found-recorded', false],
      ['listener', '0.0.0.0:2049/tcp', 'unknown-unrecorded', true],
    ].sort(),
    'the default networks, the anonymous volume of the claimed container and the loopback listener are not listed',
  );
  assert.match(r.stdout, 'Verdict: not ready: 2 mesh-unclaimed, 3 unknown-unrecorded');
  const plan = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')) as { nodes: PlanNode[] };
  assert.equal(planSchemaErrors(plan), []);
  const p = plan.nodes[0]!;
  assert.equal(
    p.record.map(({ entry: e }) => [e.id, e.type, e.target, e.holds ?? null]),
    [
      ['found.adhoc_net', 'network', 'adhoc_net', null],
      ['found.scratch', 'volume', 'scratch', null],
      ['found.sshd', 'service', '/usr/sbin/sshd', [22]],
    ],
    "one service entry for both of sshd's sockets",
  );
  const sshd = p.record.find((x) => x.entry.type === 'service')!;
  assert.is(sshd.exposure, 'all-interfaces');
  assert.equal(sshd.exposedEndpoints, ['0.0.0.0:22/tcp', '[::]:22/tcp6']);
  assert.equal(
    sshd.findings.map((f) => [f.ruleId, f.severity]),
    [
      ['MA2009', 'error'],
      ['MA2009', 'error'],
    ],
  );
  assert.match(sshd.warning ?? '', 'exposed on all interfaces');
  assert.equal(
    p.remove.map((x) => [x.kind, x.command, x.standing]),
    [['network', 'docker network rm metrics_net', 'mesh-unclaimed']],
  );
  assert.not.ok(JSON.stringify(p.remove).includes('volume'), 'no volume is ever a removal step');
  const reviewed = p.review as { ruleId: string; subject: string; advice?: string }[];
  assert.equal(reviewed.map((x) => [x.ruleId, x.subject]).sort(), [
    ['MA2007', 'volume metrics_data'],
    ['MA2009', 'listener 0.0.0.0:2049/tcp'],
  ]);
  const volume = reviewed.find((x) => x.subject === 'volume metrics_data')!;
  assert.match(volume.advice ?? '', 'a volume holds data (at /var/lib/docker/volumes/metrics_data/_data)');
  assert.match(volume.advice ?? '', 'back it up');
  assert.match(r.stdout, /review \(2\)[^]*first: a volume holds data/);
  assert.match(readFileSync(join(out, 'premigration.md'), 'utf8'), '**first:** a volume holds data');
  // The proposed entries, merged into the ledger as they are, are read back as recorded: the host becomes ready
  // once the unclaimed network is removed and the volume's fate decided (here: recorded after review).
  const snap = JSON.parse(readFileSync(wholeHostNode(), 'utf8')) as {
    networks: { name: string }[];
    ledger: { entries: unknown[] };
    hostListeners: { sockets: { port: number }[] };
  };
  const safe = createSafeValueMaker();
  const merged = [
    ...p.record.map((x) => x.entry),
    { id: 'metrics.data', type: 'volume', origin: 'found', target: 'metrics_data', applied_at: null },
  ];
  snap.ledger.entries.push(...merged.map((e, i) => ledgerRecord(JSON.parse(JSON.stringify(e)), 20 + i, safe)));
  snap.networks = snap.networks.filter((n) => n.name !== 'metrics_net');
  snap.hostListeners.sockets = snap.hostListeners.sockets.filter((s) => s.port !== 2049);
  const after = join(tempDir(), 'after.json');
  writeFileSync(after, JSON.stringify(snap));
  const again = await runCli(['premigrate', '--snapshot', after, '--format', 'json', '--out', tempDir()]);
  assert.is(again.code, 0, again.stdout + again.stderr);
});

test('a socket whose holder could not be read: no verdict (exit 3), listed as held by a process not known, never "the kernel"', async () => {
  const snap = new HostModel('unheld', '2026-10-02T03:00:00Z')
    .hostListener({
      protocol: 'tcp',
      address: '0.0.0.0',
      port: 5355,
      holder: null,
      holderUnknown: 'pid 1: permission denied reading /proc/1/fd',
    })
    .ledger([], { node: 'unheld-1', adopted: true })
    .build();
  const file = join(tempDir(), 'snapshot.json');
  writeFileSync(file, JSON.stringify(snap));
  const out = tempDir();
  const r = await runCli(['premigrate', '--snapshot', file, '--format', 'text,json', '--out', out]);
  assert.is(r.code, 3, 'who holds it is not known: no verdict');
  const text = r.stdout;
  assert.match(text, '0.0.0.0:5355/tcp');
  assert.match(text, 'held by a process not known');
  assert.not.match(text, 'kernel service');
  assert.match(text, 'MA2009 not checked');
});

test.run();
