import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasAlertmanager, startAlertmanager, type AlertmanagerInstance, type AmAlert } from './support/alertmanager.js';
import { hasPromtool, promtoolCheckMetrics } from './support/promtool.js';

// Self-test of the Alertmanager and promtool harnesses (Debian packages prometheus-alertmanager and
// prometheus). Outside CI a missing binary skips; in CI (`CI=true`) it fails.
const ci = process.env['CI'] === 'true';
const withAm = hasAlertmanager() || ci ? test : test.skip;
const withPromtool = hasPromtool() || ci ? test : test.skip;

let am: AlertmanagerInstance | undefined;

test.after(async () => {
  await am?.stop();
});

const LABELS = { alertname: 'MeshAuditHarness', severity: 'error' };
const sameLabels = (a: AmAlert, labels: Record<string, string>) =>
  JSON.stringify(Object.entries(a.labels).sort()) === JSON.stringify(Object.entries(labels).sort());

async function postRaw(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function getRaw(url: string, query = ''): Promise<AmAlert[]> {
  const res = await fetch(`${url}/api/v2/alerts${query}`);
  assert.is(res.status, 200);
  return (await res.json()) as AmAlert[];
}

async function resolvedCount(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^alertmanager_alerts_received_total\{status="resolved",version="v2"\} (\d+)$/m.exec(text);
  return Number(m?.[1] ?? NaN);
}

withAm('alertmanager: starts privately on 127.0.0.1 and is ready', async () => {
  assert.ok(
    hasAlertmanager(),
    'CI=true but prometheus-alertmanager is missing: .ci/run must apt-get install prometheus-alertmanager',
  );
  am = await startAlertmanager();
  assert.match(am.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const res = await fetch(`${am.url}/-/ready`);
  assert.is(res.status, 200);
  await res.arrayBuffer();
  assert.equal(await am.alerts(), []);
});

withAm('alertmanager: a posted alert is listed as active, with endsAt = receipt + 5m when none is given', async () => {
  assert.ok(am, 'started');
  const startsAt = new Date().toISOString();
  const before = Date.now();
  const post = await postRaw(am.url, [{ labels: LABELS, annotations: { message: 'm' }, startsAt }]);
  assert.is(post.status, 200, post.text);
  const listed = (await getRaw(am.url)).filter((a) => sameLabels(a, LABELS));
  assert.is(listed.length, 1, JSON.stringify(listed));
  const alert = listed[0]!;
  assert.is(alert.status.state, 'active');
  assert.equal(alert.annotations, { message: 'm' });
  assert.is(Date.parse(alert.startsAt), Date.parse(startsAt));
  const endsIn = Date.parse(alert.endsAt) - before;
  assert.ok(endsIn > 4.9 * 60_000 && endsIn < 5.1 * 60_000, `endsAt ${alert.endsAt} is receipt + 5m`);
  // The harness's own accessor sees the same.
  assert.equal(
    (await am.alerts({ active: true })).filter((a) => sameLabels(a, LABELS)).map((a) => a.status.state),
    ['active'],
  );
});

withAm('alertmanager: posted again with endsAt = now, the alert is resolved and no query lists it', async () => {
  assert.ok(am, 'started');
  const resolvedBefore = await resolvedCount(am.url);
  const post = await postRaw(am.url, [
    { labels: LABELS, annotations: { message: 'm' }, endsAt: new Date().toISOString() },
  ]);
  assert.is(post.status, 200, post.text);
  assert.equal(await getRaw(am.url), []);
  for (const query of [
    '?active=false',
    '?active=true',
    '?unprocessed=true',
    '?silenced=true&inhibited=true&unprocessed=true&active=true',
    '?active=false&silenced=false&inhibited=false&unprocessed=false',
  ]) {
    assert.equal(await getRaw(am.url, query), [], query);
  }
  assert.equal(await am.alerts({ active: false }), []);
  assert.is(await resolvedCount(am.url), resolvedBefore + 1);
});

withAm(
  'alertmanager: an alert with a future endsAt is active until then, then gone; endsAt < startsAt is a 400',
  async () => {
    assert.ok(am, 'started');
    const labels = { alertname: 'MeshAuditHarnessShort' };
    const endsAt = new Date(Date.now() + 1_500).toISOString();
    await am.post([{ labels, startsAt: new Date().toISOString(), endsAt }]);
    const listed = (await am.alerts()).filter((a) => sameLabels(a, labels));
    assert.equal(
      listed.map((a) => [a.status.state, Date.parse(a.endsAt)]),
      [['active', Date.parse(endsAt)]],
    );
    await new Promise((r) => setTimeout(r, Date.parse(endsAt) - Date.now() + 200));
    assert.equal(
      (await am.alerts()).filter((a) => sameLabels(a, labels)),
      [],
    );

    const bad = await postRaw(am.url, [
      {
        labels: { alertname: 'Backwards' },
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() - 60_000).toISOString(),
      },
    ]);
    assert.is(bad.status, 400);
    assert.match(bad.text, 'start time must be before end time');
  },
);

withAm('alertmanager: stop() ends it (the port no longer answers) and can be called twice', async () => {
  assert.ok(am, 'started');
  const { url } = am;
  await am.stop();
  await am.stop();
  am = undefined;
  let refused = false;
  try {
    await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) });
  } catch {
    refused = true;
  }
  assert.ok(refused, 'nothing answers after stop()');
});

withPromtool('promtool: accepts a valid textfile', () => {
  assert.ok(hasPromtool(), 'CI=true but promtool is missing: .ci/run must apt-get install prometheus');
  const r = promtoolCheckMetrics('# HELP x_total A counter.\n# TYPE x_total counter\nx_total 1\n');
  assert.ok(r.ok, r.output);
  assert.is(r.status, 0);
  assert.is(r.output, '');
});

withPromtool('promtool: rejects a dash in a metric name and a duplicate HELP; lint problems are not ok', () => {
  assert.ok(hasPromtool(), 'CI=true but promtool is missing: .ci/run must apt-get install prometheus');
  const dash = promtoolCheckMetrics('# HELP x-total A counter.\n# TYPE x-total counter\nx-total 1\n');
  assert.not.ok(dash.ok);
  assert.is(dash.status, 1);
  assert.match(dash.output, 'invalid metric name');
  const dupHelp = promtoolCheckMetrics('# HELP x_total A.\n# HELP x_total B.\n# TYPE x_total counter\nx_total 1\n');
  assert.not.ok(dupHelp.ok);
  assert.match(dupHelp.output, 'second HELP line for metric name "x_total"');
  const lint = promtoolCheckMetrics('# HELP x A counter.\n# TYPE x counter\nx 1\n');
  assert.not.ok(lint.ok);
  assert.is(lint.status, 3);
  assert.match(lint.output, 'should have "_total" suffix');
});

test.run();
