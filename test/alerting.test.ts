import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { hasAlertmanager, startAlertmanager, type AlertmanagerInstance } from './support/alertmanager.js';
import { driftHostSnapshot } from './support/drift-host.js';
import { runCli, tempDir } from './support/cli.js';
import { HostModel } from './support/host-model.js';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

// A real Alertmanager (Debian's prometheus-alertmanager) on loopback; in CI it must be there.
const it = hasAlertmanager() || process.env['CI'] === 'true' ? test : test.skip;
let am: AlertmanagerInstance | undefined;

test.after(async () => {
  await am?.stop();
});

it('findings become alerts with rule, severity, host and fingerprint; absent ones resolve; an incomplete scan alerts on its own', async () => {
  am = await startAlertmanager();
  const dir = tempDir();
  const out = join(dir, 'reports');
  const run = (snap: string, now: string) =>
    runCli(['evaluate', snap, '--out', out, '--format', 'json', '--baseline', 'auto', '--alertmanager', am!.url], new Date(now));

  const first = await run(driftHostSnapshot(dir, 'a', { drift: true, stray: true }), new Date().toISOString());
  assert.is(first.code, 1, first.stderr);
  let alerts = await am.alerts();
  const names = alerts.map((a) => a.labels['alertname']).sort();
  assert.equal(names, ['container-env-matches-composed-file', 'no-unclaimed-container']);
  const drift = alerts.find((a) => a.labels['alertname'] === 'container-env-matches-composed-file')!;
  assert.is(drift.labels['severity'], 'error');
  assert.is(drift.labels['host'], 'drift-host');
  assert.is(drift.labels['fingerprint']!.length, 32);
  assert.match(drift.annotations['message']!, 'DATABASE_URL');
  assert.ok(drift.annotations['help']!.length > 20);
  assert.ok(Date.parse(drift.endsAt) - Date.now() > 24 * 3600_000, 'lasts until the next nightly run');

  // The drift is healed: its alert resolves and is gone from the active list; the stray still fires.
  const second = await run(driftHostSnapshot(dir, 'b', { stray: true }), new Date().toISOString());
  assert.is(second.code, 0, 'the unclaimed container without labels is a note, below --fail-on error');
  alerts = await am.alerts();
  assert.equal(alerts.map((a) => a.labels['alertname']), ['no-unclaimed-container']);

  // A scan that could not read everything raises its own alert; the next complete one resolves it.
  const broken = new HostModel('drift-host', '2026-10-02T03:00:00Z').problem({ source: 'docker', message: 'cannot reach the Docker engine' }).ledger([]).build();
  writeFileSync(join(dir, 'broken.json'), JSON.stringify(broken));
  assert.is((await run(join(dir, 'broken.json'), new Date().toISOString())).code, 3);
  alerts = await am.alerts();
  const incomplete = alerts.find((a) => a.labels['alertname'] === 'MeshAuditScanIncomplete');
  assert.ok(incomplete, JSON.stringify(alerts.map((a) => a.labels)));
  assert.match(incomplete!.annotations['message']!, 'cannot reach the Docker engine');
  await run(driftHostSnapshot(dir, 'c', { stray: true }), new Date().toISOString());
  alerts = await am.alerts();
  assert.not.ok(alerts.some((a) => a.labels['alertname'] === 'MeshAuditScanIncomplete'), 'resolved by a complete scan');
});

test('Alertmanager unreachable: the reports are still written, one clear line, exit 3', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const port = await freePort();
  const r = await runCli(['evaluate', driftHostSnapshot(dir, 'a'), '--out', out, '--format', 'json', '--alertmanager', `http://127.0.0.1:${port}/`]);
  assert.is(r.code, 3);
  assert.ok(existsSync(join(out, 'mesh-audit.json')));
  const lines = r.stderr.split('\n').filter((l) => l.includes('Alertmanager'));
  assert.equal(lines, [`mesh-audit: cannot reach Alertmanager at http://127.0.0.1:${port}: ECONNREFUSED`]);
});

/** A loopback port nothing listens on: bound, then closed. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

test.run();
