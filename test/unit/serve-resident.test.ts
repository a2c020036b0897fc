import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Evaluation, Finding } from '../../src/evaluate/finding.js';
import type { Report } from '../../src/report/report.js';
import { alertsToPost } from '../../src/serve/delivery.js';
import { ComingBack } from '../../src/serve/coming-back.js';
import { Resident } from '../../src/serve/resident.js';
import { sinceOf, stateOf, statusLine, statusOf, type ServeStatus } from '../../src/serve/status.js';

/*
 * The resident answer of `serve` (src/serve/): its state reads as `scan`'s exit code on the same report, a loss of
 * knowledge is incomplete at once and until a read made after it ends, and reads never overlap however many changes
 * come. The live behaviour on real engines is test/docker/serve-live.test.ts.
 */

const finding = (severity: Finding['severity'], waived = false): Finding => ({
  host: 'h',
  ruleId: 'MA1001',
  ruleName: 'r',
  severity,
  fingerprint: `fp-${severity}-${String(waived)}`,
  subject: { kind: 'container', id: 'c' },
  discriminator: null,
  message: 'm',
  locations: { physical: [], logical: [] },
  ...(waived ? { suppressed: { justification: 'j', expires: '2099-01-01', waiver: 'w.yaml:1' } } : {}),
});

function report(findings: Finding[], complete = true, notChecked: string[] = []): Report {
  const evaluation: Evaluation = {
    host: 'h',
    takenAt: '2026-12-01T00:00:00Z',
    complete,
    findings,
    notifications: notChecked.map((message) => ({
      host: 'h',
      level: 'error' as const,
      kind: 'collection' as const,
      source: 'engine',
      message,
    })),
  };
  return {
    tool: { name: 'mesh-audit', version: '0', uri: '' },
    docsUrl: '',
    generatedAt: '2026-12-01T00:00:00Z',
    rules: [],
    evaluations: [evaluation],
    durationSeconds: 0,
  };
}

const view = (r: Report | null, stale: string[] = []) => ({ report: r, lastFullRead: r ? new Date(0) : null, stale });

test('the state reads as the exit code of scan on the same report', () => {
  assert.is(stateOf(view(null), 'error'), 'starting');
  assert.is(stateOf(view(report([])), 'error'), 'clean');
  assert.is(stateOf(view(report([finding('error')])), 'error'), 'findings');
  assert.is(stateOf(view(report([finding('warning')])), 'error'), 'clean', 'below --fail-on');
  assert.is(stateOf(view(report([finding('warning')])), 'warning'), 'findings');
  assert.is(stateOf(view(report([finding('error', true)])), 'error'), 'clean', 'a waived error does not fail');
  assert.is(stateOf(view(report([], false, ['engine not read'])), 'error'), 'incomplete');
  assert.is(stateOf(view(report([finding('error')], false)), 'none'), 'incomplete', 'incomplete whatever --fail-on');
  assert.is(stateOf(view(report([]), ['stream cut']), 'error'), 'incomplete', 'a stale clean report is not clean');
});

test('the status counts open findings, names what is not checked (staleness first), and keeps `since` while the state holds', () => {
  const r = report([finding('error'), finding('error', true), finding('note')], false, ['ledger not read']);
  const s = statusOf(view(r, ['stream cut']), 'error', new Date('2026-12-01T01:00:00Z'));
  assert.equal(s.counts, { error: 1, warning: 0, note: 1 });
  assert.equal(s.notChecked, ['stream cut', 'ledger not read']);
  assert.is(s.host, 'h');
  const t0 = new Date(1000);
  const t1 = new Date(2000);
  assert.is(sinceOf({ state: 'clean', since: t0 }, 'clean', t1), t0);
  assert.is(sinceOf({ state: 'clean', since: t0 }, 'findings', t1), t1);
});

test('the status line escapes what the host wrote and names at most three things', () => {
  const s = statusOf(
    view(report([], false, ['a\n[FAKE] clean', 'b', 'c', 'd'])),
    'error',
    new Date('2026-12-01T01:00:00Z'),
  );
  const line = statusLine(s, 'host\x1b[2J');
  assert.not.match(line, '\x1b');
  assert.match(line, 'host\\x1b[2J: INCOMPLETE since 2026-12-01T01:00:00.000Z');
  assert.match(line, 'a\\n[FAKE] clean');
  assert.match(line, 'and 1 more');
  assert.is(line.split('\n').length, 2);
});

/** A read the test ends when it wants: the resident's reads, one promise each. */
function controlledReads() {
  const pending: ((r: Report) => void)[] = [];
  let started = 0;
  return {
    read: () =>
      new Promise<Report>((resolve) => {
        started++;
        pending.push(resolve);
      }),
    started: () => started,
    finish: (r: Report) => pending.shift()!(r),
    waiting: () => pending.length,
  };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

test('reads never overlap: changes during a read ask for exactly one more read after it', async () => {
  const reads = controlledReads();
  const resident = new Resident({ read: reads.read, failOn: 'error', now: () => new Date(), settleMs: 0 });
  void resident.readNow();
  void resident.readNow();
  void resident.readNow();
  assert.is(reads.started(), 1, 'one read at a time');
  reads.finish(report([]));
  await tick();
  await tick();
  assert.is(reads.started(), 2, 'the changes during it made one read more');
  reads.finish(report([finding('error')]));
  await tick();
  await tick();
  assert.is(reads.started(), 2, 'and no more');
  assert.is(resident.status().state, 'findings');
  await resident.stop();
});

test('a loss is incomplete at once; a read begun after it clears it, unless the source is still held lost', async () => {
  const reads = controlledReads();
  let now = 1000;
  const resident = new Resident({ read: reads.read, failOn: 'error', now: () => new Date(now), settleMs: 0 });
  void resident.readNow();
  reads.finish(report([]));
  await tick();
  assert.is(resident.status().state, 'clean');

  now = 2000;
  resident.lost('the watch on /etc/mesh failed');
  assert.is(resident.status().state, 'incomplete', 'at once, before any read');
  await new Promise((r) => setTimeout(r, 5));
  assert.is(reads.waiting(), 1, 'a full read started');
  now = 3000;
  reads.finish(report([]));
  await tick();
  assert.is(resident.status().state, 'clean', 'the read after the loss made the answer current');

  resident.holding('the engine cannot be reached');
  await new Promise((r) => setTimeout(r, 5));
  now = 4000;
  reads.finish(report([]));
  await tick();
  assert.is(resident.status().state, 'incomplete', 'still held lost: a read does not clear it');
  resident.recovered('the engine cannot be reached');
  await new Promise((r) => setTimeout(r, 5));
  now = 5000;
  reads.finish(report([]));
  await tick();
  assert.is(resident.status().state, 'clean');
  await resident.stop();
});

test('a flagged cause (alerts not delivered, folders not watched) is incomplete without a read, until unflagged', async () => {
  const reads = controlledReads();
  const resident = new Resident({ read: reads.read, failOn: 'error', now: () => new Date(), settleMs: 0 });
  void resident.readNow();
  reads.finish(report([]));
  await tick();
  resident.flag('the alerts could not be delivered');
  assert.is(resident.status().state, 'incomplete');
  await new Promise((r) => setTimeout(r, 5));
  assert.is(reads.started(), 1, 'no read asked');
  resident.unflag('the alerts could not be delivered');
  assert.is(resident.status().state, 'clean');
  await resident.stop();
});

test('a read that fails leaves the answer incomplete until one succeeds', async () => {
  let fail = true;
  let failures = 0;
  const resident = new Resident({
    read: () => (fail ? Promise.reject(new Error('boom')) : Promise.resolve(report([]))),
    failOn: 'error',
    now: () => new Date(),
    settleMs: 0,
    onReadFailure: () => failures++,
  });
  await resident.readNow();
  assert.is(failures, 1);
  assert.is(resident.status().state, 'starting', 'no report yet: not clean');
  fail = false;
  await new Promise((r) => setTimeout(r, 2));
  await resident.readNow();
  assert.is(resident.status().state, 'clean');
  fail = true;
  await new Promise((r) => setTimeout(r, 2));
  await resident.readNow();
  assert.is(resident.status().state, 'incomplete', 'the last report is not current once a read failed');
  await resident.stop();
});

test('alerts: posted when the findings change or a renewal is due; a finding gone from a complete answer resolved, from an incomplete one not', () => {
  const opts = (now: number) => ({ ttlHours: 25, now, renewEveryMs: 900_000 });
  const withError = report([finding('error')]);
  const first = alertsToPost(withError, null, opts(0));
  assert.ok(first !== null && first.some((a) => a.labels['rule_id'] === 'MA1001'), 'the first answer is posted');
  assert.is(alertsToPost(withError, { report: withError, postedAt: 0 }, opts(1000)), null, 'nothing changed');
  assert.ok(alertsToPost(withError, { report: withError, postedAt: 0 }, opts(900_000)) !== null, 'renewed when due');

  const clean = report([]);
  const resolved = alertsToPost(clean, { report: withError, postedAt: 0 }, opts(1000))!;
  const gone = resolved.find((a) => a.labels['rule_id'] === 'MA1001');
  assert.ok(gone, 'the gone finding is in the post');
  assert.is(gone.endsAt, clean.generatedAt, 'resolved: it ends now');

  const unread = report([], false, ['engine not read']);
  const kept = alertsToPost(unread, { report: withError, postedAt: 0 }, opts(1000))!;
  assert.not.ok(
    kept.some((a) => a.labels['rule_id'] === 'MA1001'),
    'not resolved by an answer that could not read it',
  );
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(5)) if (what()) return true;
  return what();
}

test('a container gone down holds the read back until it is up again (one read for a restart), or its hold ends', async () => {
  const reads = controlledReads();
  const resident = new Resident({ read: reads.read, failOn: 'error', now: () => new Date(), settleMs: 5 });
  const comingBack = new ComingBack(60_000);
  // As serve's watchers tell it (src/cli/serve.ts): each event, then the resident with how long to wait.
  const event = (id: string, going?: 'down' | 'up') => {
    const now = Date.now();
    if (going !== undefined) comingBack.told(id, going, now);
    resident.changed(comingBack.until(now));
  };
  event('c1', 'down');
  event('c2', 'down');
  event('c1');
  await sleep(60);
  assert.is(reads.started(), 0, 'two containers down (died, stopped): no read of them stopped');
  event('c1', 'up');
  await sleep(60);
  assert.is(reads.started(), 0, 'one started again, the other is still down');
  event('c2', 'up');
  assert.ok(await until(() => reads.started() === 1, 3000), 'both up: read once the changes settle');
  reads.finish(report([]));
  await tick();

  // A container stopped for good is read when its hold ends.
  const clock = new ComingBack(1000);
  clock.told('c3', 'down', 10_000);
  assert.is(clock.until(10_500), 11_000, 'held for 1 s after it went down');
  assert.is(clock.until(11_000), null, 'then no longer');
  clock.told('c3', 'down', 20_000);
  clock.forget();
  assert.is(clock.until(20_001), null, 'the events stream lost: no container is waited for');
  await resident.stop();
});

test('no change waits for its read past maxSettleMs, however long it is held back or however many follow', async () => {
  const reads = controlledReads();
  const resident = new Resident({
    read: reads.read,
    failOn: 'error',
    now: () => new Date(),
    settleMs: 5,
    maxSettleMs: 40,
  });
  resident.changed(Date.now() + 600_000);
  assert.ok(await until(() => reads.started() === 1, 3000), 'read within the bound, not ten minutes later');
  reads.finish(report([]));
  await tick();
  // Changes that keep coming, each held back: the read comes within the bound of the first of them.
  const churn = setInterval(() => resident.changed(Date.now() + 600_000), 2);
  try {
    assert.ok(await until(() => reads.started() === 2, 3000), 'read while the changes still come');
  } finally {
    clearInterval(churn);
  }
  reads.finish(report([]));
  await resident.stop();
});

test('a change no read answers within overdueMs (a stuck read) makes the answer incomplete, until a read answers it', async () => {
  const reads = controlledReads();
  let now = 1_000;
  const resident = new Resident({
    read: reads.read,
    failOn: 'error',
    now: () => new Date(now),
    settleMs: 0,
    overdueMs: 120_000,
  });
  void resident.readNow();
  reads.finish(report([]));
  await tick();
  assert.is(resident.status().state, 'clean');

  // A change, and the read it asks never ends.
  now = 2_000;
  resident.changed();
  await new Promise((r) => setTimeout(r, 5));
  assert.is(reads.waiting(), 1, 'the read started and hangs');
  now = 2_000 + 120_000;
  assert.is(resident.status().state, 'clean', 'not yet overdue: the last answer stands');
  now = 2_000 + 121_000;
  const stuck = resident.status();
  assert.is(stuck.state, 'incomplete', 'overdue: never a stale clean');
  assert.match(stuck.notChecked.join('\n'), /a change seen at 1970-01-01T00:00:02\.000Z has not been read after 121 s/);

  // A change during the stuck read is answered only by a read begun after it.
  now = 200_000;
  resident.changed();
  reads.finish(report([]));
  await tick();
  await tick();
  now = 200_000 + 121_000;
  assert.is(resident.status().state, 'incomplete', 'the change met during the read is still unanswered');
  assert.is(reads.waiting(), 1, 'one more read was asked for it');
  reads.finish(report([]));
  await tick();
  assert.is(resident.status().state, 'clean', 'answered');
  await resident.stop();
});

test('/v1/status is made once per change of what it says, not per request, and follows every change', async () => {
  // The findings and notifications walked to make the status, counted: each request walking them again is the cost
  // the answer must not pay (issue 44: the status is asked every heartbeat).
  let walks = 0;
  const counted = (r: Report): Report => {
    const evaluations = r.evaluations;
    return Object.defineProperty({ ...r }, 'evaluations', {
      get: () => (walks++, evaluations),
      enumerable: true,
    });
  };
  const reads = controlledReads();
  let now = 1_000;
  const resident = new Resident({ read: reads.read, failOn: 'error', now: () => new Date(now), settleMs: 0 });
  void resident.readNow();
  reads.finish(counted(report([finding('error')], true)));
  await tick();
  const first = resident.statusAnswer();
  assert.is(first.body, `${JSON.stringify(first.status, null, 2)}\n`, 'the body is the status, as before');
  walks = 0;
  now = 2_000;
  for (let i = 0; i < 100; i++) assert.is(resident.statusAnswer().body, first.body);
  assert.is(walks, 0, 'nothing changed: the report is not walked again');

  resident.flag('the alerts could not be delivered');
  const flagged = JSON.parse(resident.statusAnswer().body) as ServeStatus;
  assert.is(flagged.state, 'incomplete', 'a cause flagged shows at once');
  assert.equal(flagged.notChecked, ['the alerts could not be delivered']);
  assert.is(flagged.since, new Date(2_000).toISOString(), 'since moved with the state');
  resident.unflag('the alerts could not be delivered');
  assert.is(resident.statusAnswer().status.state, 'findings');

  resident.setFailOn('none');
  assert.is(resident.statusAnswer().status.state, 'clean', 'a new --fail-on reads at once');
  resident.setFailOn('error');

  now = 3_000;
  void resident.readNow();
  reads.finish(counted(report([])));
  await tick();
  const after = JSON.parse(resident.statusAnswer().body) as ServeStatus;
  assert.is(after.state, 'clean', 'a new report is answered');
  assert.is(after.lastRead, new Date(3_000).toISOString());
  await resident.stop();
});

test.run();
