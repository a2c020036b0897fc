import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { DEFAULT_SETTINGS } from '../src/config.js';
import { takeSnapshot } from '../src/scan.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { MAX_DEPTH } from '../src/input/depth.js';
import { fakeEngine } from './support/fake-engine.js';
import { runCli, tempDir } from './support/cli.js';

/*
 * One source's failure is that source's problem, never the run's (src/collect/contract.ts, `collectIsolated`): a collector that
 * throws, or a host document nested too deep to walk, leaves that source unread and said so; the other
 * sources are read, the report and the snapshot are written, the run is incomplete (exit 3).
 */

const CANARY = 'CANARY-isolation-51d2';

interface Report {
  summary: { complete: boolean };
  findings: { ruleId: string; ruleName: string; subject: { id: string } }[];
  notifications: { level: string; source: string; message: string }[];
}

/** The host's files under a root of their own: a ledger claiming the fake engine's running container, a claimed file. */
function hostRoot(): string {
  const root = tempDir('mesh-isolation-root-');
  mkdirSync(join(root, 'etc', 'mesh'), { recursive: true });
  writeFileSync(join(root, 'etc', 'mesh', 'app.ini'), 'x=1\n');
  writeFileSync(
    join(root, 'ledger.json'),
    JSON.stringify([
      { id: 'web.httpd', type: 'container', origin: 'declared', target: 'ma-fixture-host-httpd' },
      { id: 'app.ini', type: 'file', origin: 'declared', target: '/etc/mesh/app.ini' },
      { id: 'app.gone', type: 'file', origin: 'declared', target: '/etc/mesh/gone.ini' },
    ]),
  );
  return root;
}

test('a collector that throws (the files reader, through the scope seam): its files unknown, the rest read, exit 3 names it', async () => {
  const root = hostRoot();
  const throwing = () => {
    // As a defect would: with a message that quotes what it read.
    throw new TypeError(`cannot read ${CANARY}`);
  };
  const snapshot = await takeSnapshot(
    { ...DEFAULT_SETTINGS, root, ledger: '/ledger.json', dockerHost: 'unix:///nonexistent/docker.sock' },
    [],
    {
      now: () => new Date('2026-10-01T00:00:00Z'),
      progress: () => undefined,
      scope: {
        container: () => true,
        containerByName: () => true,
        listener: () => true,
        everyListenerOut: null,
        path: throwing,
      },
    },
  );
  // The ledger was still read; the files it names are there, unknown (never missing).
  assert.is(snapshot.ledger.available, true);
  assert.equal(
    snapshot.files.map((f) => [f.path, f.kind]),
    [
      ['/etc/mesh/app.ini', 'unknown'],
      ['/etc/mesh/gone.ini', 'unknown'],
    ],
  );
  const problem = snapshot.problems.filter((p) => p.source === 'files');
  assert.equal(problem, [
    {
      source: 'files',
      message: 'the files and managed roots not read: its reader failed unexpectedly (TypeError)',
    },
  ]);
  assert.not.match(JSON.stringify(snapshot), CANARY);
  // As the user sees it: the report is written, the run is incomplete, the source named; no finding on what was not read.
  const dir = tempDir();
  writeFileSync(join(dir, 'snap.json'), JSON.stringify(snapshot));
  const out = join(dir, 'out');
  const r = await runCli(['evaluate', join(dir, 'snap.json'), '--out', out, '--format', 'json']);
  assert.is(r.code, 3, r.stderr);
  assert.ok(
    r.stderr.includes('files and managed roots not read: its reader failed unexpectedly (TypeError)'),
    r.stderr,
  );
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as Report;
  assert.is(report.summary.complete, false);
  assert.ok(report.notifications.some((n) => n.level === 'error' && n.source === 'files'));
  assert.equal(
    report.findings.filter((f) => f.subject.id === 'app.gone' || f.subject.id === '/etc/mesh/gone.ini'),
    [],
    'a file not read is never reported missing',
  );
});

/** `mesh-audit scan` as its own process (the fake engine answers from this one), under `--root`. */
function scan(root: string, dockerHost: string, out: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'),
        'scan',
        '--docker-host',
        dockerHost,
        '--root',
        root,
        '--ledger',
        '/ledger.json',
        '--hostname',
        'fake',
        '--out',
        out,
        '--format',
        'json',
      ],
      { timeout: 60_000, killSignal: 'SIGKILL' },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

test('daemon.json nested 10,000 deep: exit 3 naming it with its line; report, snapshot and other findings written (was: internal error, nothing written)', async () => {
  const root = hostRoot();
  mkdirSync(join(root, 'etc', 'docker'), { recursive: true });
  const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
  writeFileSync(
    join(root, 'etc', 'docker', 'daemon.json'),
    `{\n  "registry-mirrors": ["https://u:${CANARY}@mirror"],\n  "x": ${deep}\n}\n`,
  );
  const engine = await fakeEngine({});
  const out = tempDir('mesh-isolation-out-');
  try {
    const r = await scan(root, engine.dockerHost, out);
    assert.is(r.code, 3, r.stderr);
    assert.not.match(r.stderr, 'internal error');
    assert.not.match(r.stderr, CANARY);
    const said = `/etc/docker/daemon.json: not read: it nests more than ${MAX_DEPTH} levels deep (line 3, column ${8 + MAX_DEPTH - 1})`;
    assert.ok(r.stderr.includes(`mesh-audit: ${said}\n`), r.stderr);
    const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as Report;
    assert.is(report.summary.complete, false);
    assert.ok(
      report.notifications.some((n) => n.level === 'error' && n.source === 'daemon' && n.message === said),
      JSON.stringify(report.notifications),
    );
    // The other sources were read: the ledger's missing file is still a finding.
    assert.ok(
      report.findings.some((f) => f.ruleName === 'declared-resource-present' && f.subject.id === 'app.gone'),
      report.findings.map((f) => `${f.ruleName} ${f.subject.id}`).join('\n'),
    );
    // The snapshot is kept, with daemon.json unread (its facts unknown), and no trace of its text.
    const kept = readdirSync(join(out, 'history', 'fake')).filter((f) => f.endsWith('.json') && f !== 'index.json');
    assert.is(kept.length, 1, kept.join(' '));
    const snapshotText = readFileSync(join(out, 'history', 'fake', kept[0]!), 'utf8');
    assert.not.match(snapshotText, CANARY);
    const snapshot = JSON.parse(snapshotText) as { daemon: { config: { available: boolean } } };
    assert.is(snapshot.daemon.config.available, false);
  } finally {
    await engine.close();
  }
});

test.run();
