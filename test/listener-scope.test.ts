/*
 * The host's listening sockets in scope: a socket of another system leaves the scope by
 * `listener:ADDRESS:PORT` (globs, IPv6 written whole), and is counted, never silently dropped.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli, tempDir } from './support/cli.js';
import { HostModel } from './support/host-model.js';

interface Report {
  summary: { complete: boolean; excluded?: { listeners: number; total: number } };
  findings: { ruleId: string; subject: { id: string }; severity: string }[];
  notifications: { level: string; source: string; subject?: string; message: string }[];
}

/** A socket no readable process holds, on a host where one process's fds are closed to the scan. */
const UNHELD = 'pid 1: permission denied (EACCES) reading /proc/1/fd';

function snapshotFile(unheld: { address: string; port: number }[] = []): string {
  const model = new HostModel('listeners', '2026-12-01T03:00:00Z');
  for (const u of unheld) model.hostListener({ protocol: 'tcp', ...u, holder: null, holderUnknown: UNHELD });
  const snapshot = model
    .ledger([])
    .hostListener({
      protocol: 'tcp6',
      address: '::',
      port: 22,
      holder: { pid: 700, name: 'sshd', exe: '/usr/sbin/sshd', containerId: null },
    })
    // Loopback: reachable from this host alone, so no rule asks who holds it.
    .hostListener({
      protocol: 'tcp',
      address: '127.0.0.1',
      port: 5000,
      holder: { pid: 800, name: 'redis', exe: '/usr/bin/redis-server', containerId: null },
    })
    .hostListener({
      protocol: 'tcp',
      address: '0.0.0.0',
      port: 8080,
      holder: { pid: 4242, name: 'nginx', exe: '/usr/sbin/nginx', containerId: null },
    })
    .build();
  const file = join(tempDir(), 'snapshot.json');
  writeFileSync(file, JSON.stringify(snapshot));
  return file;
}

async function evaluate(...scope: string[]): Promise<{ code: number; report: Report; stderr: string }> {
  return evaluateWith([], ...scope);
}

async function evaluateWith(
  unheld: { address: string; port: number }[],
  ...scope: string[]
): Promise<{ code: number; report: Report; stderr: string }> {
  const r = await runCli(['evaluate', snapshotFile(unheld), '--format', 'json', '--out', '-', ...scope]);
  return { code: r.code, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
}

const ma2009 = (report: Report) => report.findings.filter((f) => f.ruleId === 'MA2009').map((f) => f.subject.id);

test('a socket beyond loopback that no claimed container or declared service holds is a finding; its holder named', async () => {
  const { code, report } = await evaluate();
  assert.is(code, 1);
  assert.ok(report.summary.complete);
  assert.equal(ma2009(report), ['0.0.0.0:8080/tcp', '[::]:22/tcp6']);
  assert.is(report.summary.excluded?.total ?? 0, 0, 'nothing counted as left out');
});

test("another system's sockets left out with listener:ADDRESS:PORT (an IPv6 one written whole): counted, no finding", async () => {
  const { code, report, stderr } = await evaluate(
    '--exclude',
    'listener:0.0.0.0:8080',
    '--exclude',
    'listener:[::]:22',
  );
  assert.ok(report.summary.complete, stderr + JSON.stringify(report.notifications));
  assert.is(code, 0);
  assert.equal(ma2009(report), []);
  assert.is(report.summary.excluded?.listeners, 2);
  assert.is(report.summary.excluded?.total, 2);
});

test('a glob selects by port on any address, with or without the protocol; --include narrows the listeners alone', async () => {
  const byGlob = await evaluate('--exclude', 'listener:*:8080', '--exclude', 'listener:*:22/tcp6');
  assert.equal(ma2009(byGlob.report), []);
  assert.is(byGlob.code, 0);
  const narrowed = await evaluate('--include', 'listener:0.0.0.0:8080');
  assert.equal(ma2009(narrowed.report), ['0.0.0.0:8080/tcp']);
  assert.ok(narrowed.report.summary.complete, JSON.stringify(narrowed.report.notifications));
  assert.is(narrowed.report.summary.excluded?.listeners, 2, 'the IPv6 one and the loopback one');
});

test('a socket beyond loopback whose holder may be a process the scan could not read: not checked, the run incomplete', async () => {
  const { code, report } = await evaluateWith([{ address: '0.0.0.0', port: 5355 }]);
  assert.is(code, 3, 'who holds it is unknown: the run cannot say it is clean');
  assert.not.ok(report.summary.complete);
  assert.equal(ma2009(report), ['0.0.0.0:8080/tcp', '[::]:22/tcp6'], 'no finding on what is not known');
  const said = report.notifications.filter((n) => n.message.includes('0.0.0.0:5355/tcp'));
  assert.ok(said.length > 0, JSON.stringify(report.notifications));
  assert.ok(
    said.some((n) => n.message.includes('MA2009') && n.message.includes(UNHELD)),
    JSON.stringify(said),
  );
});

test("an unheld socket on loopback decides nothing; one left out of scope as another system's leaves the run complete", async () => {
  const loopback = await evaluateWith([{ address: '127.0.0.1', port: 5355 }]);
  assert.is(loopback.code, 1, loopback.stderr);
  assert.ok(loopback.report.summary.complete, JSON.stringify(loopback.report.notifications));
  const excluded = await evaluateWith(
    [{ address: '0.0.0.0', port: 2024 }],
    '--exclude',
    'listener:0.0.0.0:2024',
    '--exclude',
    'listener:*:8080',
    '--exclude',
    'listener:[::]:22',
  );
  assert.is(excluded.code, 0, excluded.stderr + JSON.stringify(excluded.report.notifications));
  assert.ok(excluded.report.summary.complete);
  assert.is(excluded.report.summary.excluded?.listeners, 3);
});

test('a misspelt selector kind is refused with the one meant', async () => {
  const r = await runCli(['evaluate', snapshotFile(), '--format', 'json', '--out', '-', '--exclude', 'listner:*:22']);
  assert.is(r.code, 2);
  assert.match(r.stderr, "did you mean 'listener:'");
});

test.run();
