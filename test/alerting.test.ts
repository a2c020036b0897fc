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
import { postAlerts } from '../src/alert/alertmanager.js';
import { auditSnapshots, triage } from '../src/pipeline.js';
import { loadPolicies } from '../src/policy/load.js';
import { alertsOf } from '../src/report/alerts.js';
import { historyReading } from '../src/acquire.js';
import { loadHistory } from '../src/snapshot/history.js';
import { loadSnapshot } from '../src/snapshot/load.js';
import { example } from './support/cli.js';
import { DEFAULT_DOCS_URL } from '../src/version.js';

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
    runCli(
      ['evaluate', snap, '--out', out, '--format', 'json', '--baseline', 'auto', '--alertmanager', am!.url],
      new Date(now),
    );

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
  assert.equal(
    alerts.map((a) => a.labels['alertname']),
    ['no-unclaimed-container'],
  );

  // A scan that could not read everything raises its own alert; the next complete one resolves it.
  const broken = new HostModel('drift-host', '2026-10-02T03:00:00Z')
    .problem({ source: 'docker', message: 'cannot reach the Docker engine' })
    .ledger([])
    .build();
  writeFileSync(join(dir, 'broken.json'), JSON.stringify(broken));
  assert.is((await run(join(dir, 'broken.json'), new Date().toISOString())).code, 3);
  alerts = await am.alerts();
  const incomplete = alerts.find((a) => a.labels['alertname'] === 'MeshAuditScanIncomplete');
  assert.ok(incomplete, JSON.stringify(alerts.map((a) => a.labels)));
  assert.match(incomplete.annotations['message']!, 'cannot reach the Docker engine');
  await run(driftHostSnapshot(dir, 'c', { stray: true }), new Date().toISOString());
  alerts = await am.alerts();
  assert.not.ok(
    alerts.some((a) => a.labels['alertname'] === 'MeshAuditScanIncomplete'),
    'resolved by a complete scan',
  );
});

it('an alert starts when its finding was first seen, reads well (summary, description, runbook, remediation), and resolves when the finding ends', async () => {
  // An Alertmanager of its own: one that already holds this alert (the test above) keeps the earliest
  // startsAt of the two, which would hide what this test checks.
  await am?.stop();
  am = await startAlertmanager();
  const dir = tempDir();
  const rules = (await loadPolicies()).flatMap((p) => p.rules);
  const reportOf = async (snap: string, now: Date) => auditSnapshots([await loadSnapshot(snap)], [], rules, { now });
  // The drift was first seen three days ago (the baseline carries firstSeen: Finding.firstSeen).
  const firstSeen = new Date(Date.now() - 3 * 24 * 3600_000).toISOString();
  const drifted = await reportOf(driftHostSnapshot(dir, 'first-seen', { drift: true }), new Date());
  for (const e of drifted.evaluations) for (const f of e.findings) f.firstSeen = firstSeen;
  await postAlerts(am.url, alertsOf(drifted, { ttlHours: 25 }));
  const firing = (await am.alerts()).find((a) => a.labels['rule_id'] === 'MA1001' && a.labels['host'] === 'drift-host');
  assert.ok(firing, 'the drift fires');
  assert.is(Date.parse(firing.startsAt), Date.parse(firstSeen), 'startsAt is when it was first seen');
  assert.ok(Date.parse(firing.startsAt) < Date.now(), 'startsAt in the past');
  assert.ok(Date.parse(firing.endsAt) > Date.now() + 24 * 3600_000, 'lasts until the next nightly run');
  assert.match(firing.annotations['summary']!, 'drift-host: Container env matches the composed file it was built from');
  assert.match(firing.annotations['description']!, 'DATABASE_URL');
  assert.is(firing.annotations['runbook_url'], `${DEFAULT_DOCS_URL}/rules/MA1001.md`);
  assert.match(firing.annotations['remediation']!, 'recreate the container from the current file');
  assert.is(firing.labels['resource'], 'app.server');

  // Healed: against its baseline the finding is absent, its alert resolves and leaves the active list.
  const healed = await reportOf(driftHostSnapshot(dir, 'healed'), new Date());
  const baseline = { source: 'previous', findings: drifted.evaluations.flatMap((e) => e.findings) };
  await postAlerts(am.url, alertsOf(triage(healed, { baseline, now: new Date() }), { ttlHours: 25 }));
  assert.not.ok(
    (await am.alerts()).some((a) => a.labels['rule_id'] === 'MA1001' && a.labels['host'] === 'drift-host'),
    'resolved',
  );
});

test("one root cause, one group: a renamed container's MA2001 and MA2003 alerts share their resource label", async () => {
  const rules = (await loadPolicies()).flatMap((p) => p.rules);
  const history = await loadHistory(example('097', 'history'), historyReading());
  const report = auditSnapshots([await loadSnapshot(example('097', 'snapshot.json'))], history.snapshots, rules, {
    now: new Date('2026-10-01T00:00:00Z'),
  });
  const alerts = alertsOf(report, { ttlHours: 25 });
  const stale = alerts.find((a) => a.labels['rule_id'] === 'MA2003')!;
  const unclaimed = alerts.find(
    (a) => a.labels['rule_id'] === 'MA2001' && a.annotations['subject'] === stale.annotations['subject'],
  );
  assert.ok(unclaimed, 'the renamed container is unclaimed too');
  assert.is(unclaimed.labels['resource'], stale.labels['resource']);
  assert.is(stale.labels['resource'], 'forge.server');
});

test('Alertmanager unreachable: the reports are still written, one clear line and the summary of what was delivered, exit 3', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const port = await freePort();
  const r = await runCli([
    'evaluate',
    driftHostSnapshot(dir, 'a'),
    '--out',
    out,
    '--format',
    'json',
    '--alertmanager',
    `http://127.0.0.1:${port}/`,
  ]);
  assert.is(r.code, 3);
  assert.ok(existsSync(join(out, 'mesh-audit.json')));
  const lines = r.stderr.split('\n').filter((l) => l.includes('Alertmanager'));
  assert.equal(lines, [
    `mesh-audit: cannot reach Alertmanager at http://127.0.0.1:${port}: ECONNREFUSED`,
    `mesh-audit: not delivered: the alerts to Alertmanager at http://127.0.0.1:${port}; delivered: the reports in ${out}/`,
  ]);
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
