import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, spawnCli } from './support/cli.js';
import { loadConfigFile } from '../src/config.js';
import { LiveHost } from './docker/live-host.js';

test('no engine reachable: exit 3 within 15 s, one clear line, file and ledger findings still reported', () => {
  const host = new LiveHost();
  const present = host.write(host.path('app', 'app.ini'), 'x=1\n');
  host.write(host.path('leftover.conf'), 'nobody claims me\n');
  host.ledger([
    { id: 'app.ini', type: 'file', origin: 'declared', target: present },
    { id: 'app.gone', type: 'file', origin: 'declared', target: host.path('app', 'gone.ini') },
    { id: 'broken' },
  ]);
  const started = Date.now();
  const run = host.scan('unix:///nonexistent/docker.sock', 'no-engine');
  const seconds = (Date.now() - started) / 1000;
  assert.is(run.code, 3);
  assert.ok(seconds < 15, `took ${seconds} s`);
  const dockerLines = run.stderr.split('\n').filter((l) => l.includes('Docker engine'));
  assert.equal(dockerLines, [
    'mesh-audit: cannot reach the Docker engine at unix:///nonexistent/docker.sock: ping: no engine socket there (ENOENT)',
  ]);
  assert.is(run.report.summary.complete, false);
  const names = run.report.findings.map((f) => `${f.ruleName} ${f.subject.id}`);
  assert.ok(names.includes(`declared-resource-present app.gone`), names.join('\n'));
  assert.ok(names.includes(`ledger-well-formed broken`), names.join('\n'));
  assert.ok(names.includes(`no-unclaimed-managed-file ${host.path('leftover.conf')}`), names.join('\n'));
});

test('an unreachable TCP engine also ends within 15 s (connection refused on loopback)', () => {
  const host = new LiveHost();
  host.ledger([]);
  const started = Date.now();
  const run = host.scan('tcp://127.0.0.1:1', 'no-engine-tcp');
  assert.is(run.code, 3);
  assert.ok((Date.now() - started) / 1000 < 15);
  assert.match(run.stderr, 'cannot reach the Docker engine at tcp://127.0.0.1:1');
});

test('a missing ledger makes the scan incomplete (exit 3), and says so', () => {
  const host = new LiveHost();
  const run = host.scan('unix:///nonexistent/docker.sock', 'no-ledger');
  assert.is(run.code, 3);
  assert.ok(
    run.report.notifications.some((n) => n.level === 'error' && n.message.includes(host.ledgerPath)),
    JSON.stringify(run.report.notifications),
  );
});

test('--config: a YAML file sets the ledger and managed roots; flags win; a bad key is exit 2', () => {
  const host = new LiveHost();
  host.write(host.path('stray.env'), 'A=1\n');
  host.ledger([]);
  const config = join(host.dir, 'mesh-audit.yaml');
  writeFileSync(config, `ledger: ${host.ledgerPath}\nmanagedRoots: [${host.managedRoot}]\n`);
  const run = spawnCli([
    'scan',
    '--config',
    config,
    '--docker-host',
    'unix:///nonexistent.sock',
    '--hostname',
    'cfg',
    '--out',
    host.out,
    '--format',
    'json',
  ]);
  assert.is(run.code, 3);
  const report = JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as {
    findings: { subject: { id: string } }[];
  };
  assert.ok(report.findings.some((f) => f.subject.id === host.path('stray.env')));
  writeFileSync(config, `ledgr: /x\n`);
  const bad = spawnCli(['scan', '--config', config, '--out', host.out]);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, "must NOT have additional properties 'ledgr'");
});

test('snapshot -o writes a valid, secret-safe snapshot that evaluate reads', () => {
  const host = new LiveHost();
  const secret = `hunter2-${process.pid}-canary`;
  const env = host.write(host.path('db.env'), `DATABASE_URL=postgresql://u:${secret}@db:5432/x\n`);
  host.ledger([{ id: 'db.env', type: 'file', target: env, note: `extra field ${secret}` }]);
  const file = join(host.out, 'snap.json');
  const run = spawnCli([
    'snapshot',
    '-o',
    file,
    '--ledger',
    host.ledgerPath,
    '--managed-root',
    host.managedRoot,
    '--docker-host',
    'unix:///nonexistent.sock',
  ]);
  assert.is(run.code, 3, run.stderr);
  assert.ok(existsSync(file));
  const text = readFileSync(file, 'utf8');
  assert.not.ok(text.includes(secret));
  assert.ok(text.includes('postgresql://…@…:5432/…'), 'a one-word host is hidden (docs/secrets.md)');
  const evaluated = spawnCli(['evaluate', file, '--format', 'json', '--out', '-']);
  assert.is(evaluated.code, 3, 'the snapshot is incomplete (no engine), and says so when evaluated');
  assert.is(spawnCli(['snapshot']).code, 2);
});

test('--max-files (and maxFiles in the config) bound the files recorded; past it the scan is incomplete and says how to raise it', () => {
  const host = new LiveHost();
  for (let i = 0; i < 6; i++) host.write(host.path(`f${i}.txt`), `${i}\n`);
  host.ledger([]);
  const records = (out: string) =>
    JSON.parse(readFileSync(join(out, 'snapshot.json'), 'utf8')) as {
      files: unknown[];
      problems: { message: string }[];
    };
  const snapshot = (extra: string[], name: string) => {
    const out = join(host.out, name);
    const run = spawnCli([
      'snapshot',
      '-o',
      join(out, 'snapshot.json'),
      '--ledger',
      host.ledgerPath,
      '--managed-root',
      host.managedRoot,
      '--docker-host',
      'unix:///nonexistent.sock',
      ...extra,
    ]);
    return { run, snap: records(out) };
  };
  const bounded = snapshot(['--max-files', '4'], 'bounded');
  assert.is(bounded.run.code, 3);
  assert.is(bounded.snap.files.length, 4);
  assert.ok(
    bounded.snap.problems.some(
      (p) =>
        p.message ===
        'more than 4 files to record: collection stopped there (raise --max-files / maxFiles, or narrow the managed roots)',
    ),
    JSON.stringify(bounded.snap.problems),
  );
  const config = join(host.dir, 'max-files.yaml');
  writeFileSync(config, 'maxFiles: 100\n');
  const raised = snapshot(['--config', config], 'raised');
  assert.is(raised.snap.files.length, 7, 'the managed root and its 6 files');
  assert.not.ok(raised.snap.problems.some((p) => p.message.includes('files to record')));
  assert.is(spawnCli(['snapshot', '-o', join(host.out, 'x.json'), '--max-files', '0']).code, 2);
});

test('scan --help names every collection option', () => {
  const help = spawnCli(['scan', '--help']).stdout;
  for (const option of [
    '--snapshot',
    '--docker-host',
    '--ledger',
    '--root',
    '--config',
    '--managed-root',
    '--history',
    '--keep',
    '--max-files',
  ])
    assert.match(help, option);
});

test('--root: the host mounted at a folder is read there and reported with host paths and the host name', () => {
  const host = new LiveHost();
  const root = join(host.dir, 'host');
  host.write(join(root, 'etc', 'hostname'), 'mounted-host\n');
  host.write(join(root, 'etc', 'mesh', 'app.env'), 'A=1\n');
  host.write(join(root, 'etc', 'mesh', 'orphan.conf'), 'x\n');
  host.write(
    join(root, 'var', 'lib', 'mesh-host', 'ledger.json'),
    JSON.stringify([
      { id: 'app.env', type: 'file', target: '/etc/mesh/app.env' },
      { id: 'app.gone', type: 'file', target: '/etc/mesh/gone.env' },
    ]),
  );
  const run = spawnCli([
    'scan',
    '--root',
    root,
    '--managed-root',
    '/etc/mesh',
    '--docker-host',
    'unix:///nonexistent.sock',
    '--out',
    host.out,
    '--format',
    'json',
  ]);
  assert.is(run.code, 3, run.stderr);
  const report = JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as {
    hosts: { hostname: string }[];
    findings: { ruleName: string; subject: { id: string } }[];
  };
  assert.is(report.hosts[0]!.hostname, 'mounted-host');
  const subjects = report.findings.map((f) => `${f.ruleName} ${f.subject.id}`).sort();
  assert.equal(subjects, ['declared-resource-present app.gone', 'no-unclaimed-managed-file /etc/mesh/orphan.conf']);
  assert.not.ok(
    readFileSync(join(host.out, 'mesh-audit.json'), 'utf8').includes(root),
    'no mount-point path in the report',
  );
});

test('history retention: --keep N keeps the newest N snapshots of the host', () => {
  const host = new LiveHost();
  host.ledger([]);
  for (let i = 0; i < 3; i++) host.scan('unix:///nonexistent.sock', 'kept', ['--keep', '2']);
  const kept = readdirSync(join(host.out, 'history', 'kept'));
  // Beside the snapshots, their index (src/snapshot/history-index.ts), which --keep does not count.
  assert.is(kept.filter((n) => n.endsWith('.json')).length, 2, kept.join(' '));
  assert.ok(kept.includes('.mesh-audit.index'), kept.join(' '));
  assert.is(spawnCli(['scan', '--keep', '0', '--out', host.out]).code, 2);
});

test('the example nightly config is a valid config', async () => {
  const config = await loadConfigFile(example('nightly', 'config.yaml'));
  assert.equal(config.managedRoots, ['/etc/mesh']);
});

test.run();
