import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withMemory } from '../src/facts/history.js';
import { auditSnapshot, reportOf, triage } from '../src/pipeline.js';
import { alertsOf } from '../src/report/alerts.js';
import { loadPolicies } from '../src/policy/load.js';
import type { Snapshot } from '../src/snapshot/types.js';
import { HostModel } from './support/host-model.js';
import { runCli, tempDir } from './support/cli.js';

/*
 * How findings live across nights and faults, on snapshots built as the collectors build them:
 * what was not read is unknown — no rule fires on it, nothing becomes absent because of it — and the
 * memory of former targets, carried in each snapshot, outlives the history it came from.
 */

const rules = (await loadPolicies()).flatMap((p) => p.rules);

interface Night {
  docker?: 'down';
  ledger?: 'down';
  proc?: 'down';
  renamed: boolean;
  staleRemoved?: boolean;
}

/** The host of one night: app (env drift, a pinned bind-mounted file), forge (097 rename at night 2). */
function hostOn(takenAt: string, night: Night): Snapshot {
  const proc = night.proc === 'down' ? 'the scanner does not run as root' : undefined;
  const model = new HostModel('n1', takenAt)
    .file('/etc/mesh/app.env', 'DB=new\n')
    .file('/etc/mesh/app.ini', 'v=2\n', { inode: 22 })
    .container({
      name: 'app',
      env: { DB: 'old' },
      labels: { 'mesh.sources': '/etc/mesh/app.env' },
      binds: [{ source: '/etc/mesh/app.ini', destination: '/etc/app.ini' }],
      proc: proc ?? { bound: [{ destination: '/etc/app.ini', text: 'v=1\n', inode: 21 }] },
    });
  if (night.renamed) model.container({ name: 'forge', network: 'host', ...(proc ? { proc } : {}) });
  if (!night.staleRemoved)
    model.container({
      name: 'forge-old',
      network: 'host',
      ...(proc ? { proc } : { proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 2999 }] } }),
    });
  const entries = [
    { id: 'app.server', type: 'container', target: 'app', origin: 'declared', sources: ['/etc/mesh/app.env'] },
    { id: 'forge.server', type: 'container', target: night.renamed ? 'forge' : 'forge-old', origin: 'declared' },
  ];
  if (night.ledger === 'down') model.ledgerUnavailable('ledger /var/lib/mesh-host/ledger.json: EACCES');
  else model.ledger(entries);
  const snapshot = model.build();
  if (night.docker === 'down') {
    return {
      ...snapshot,
      docker: null,
      containers: [],
      problems: [
        ...snapshot.problems,
        { source: 'docker', subject: 'unix:///var/run/docker.sock', message: 'cannot reach the Docker engine' },
      ],
    };
  }
  return snapshot;
}

interface JsonReport {
  summary: { complete: boolean };
  findings: { ruleId: string; subject: { id: string }; fingerprint: string; state?: string; firstSeen?: string }[];
  absent?: { ruleId: string; subject: { id: string }; fingerprint: string }[];
  notCheckedFindings?: { ruleId: string; fingerprint: string }[];
  notChecked?: { ruleId: string; sources: string[] }[];
}

const NIGHTS: { name: string; night: Night; code: number }[] = [
  { name: 'complete', night: { renamed: false }, code: 1 },
  { name: 'rename (097)', night: { renamed: true }, code: 1 },
  { name: 'engine unreachable', night: { renamed: true, docker: 'down' }, code: 3 },
  { name: 'ledger unreadable', night: { renamed: true, ledger: 'down' }, code: 3 },
  { name: '/proc unavailable', night: { renamed: true, proc: 'down' }, code: 3 },
  { name: 'complete again', night: { renamed: true }, code: 0 },
  { name: 'stale container removed', night: { renamed: true, staleRemoved: true }, code: 0 },
];

test('seven nights with --baseline auto --fail-on-new --keep 2: exit codes, live/new/absent, no flapping, firstSeen kept', async () => {
  const dir = tempDir('mesh-nights-');
  const out = join(dir, 'out');
  let previous: Snapshot | null = null;
  /** night -> fingerprints of the SARIF results that fail; night -> standing count of a rule in the textfile */
  const failing = new Map<number, Set<string>>();
  const promCounts = new Map<number, (rule: string) => number>();
  /** fingerprint -> the nights it was live, new, carried unchecked, absent */
  const seen = new Map<
    string,
    { rule: string; live: number[]; fresh: number[]; carried: number[]; absent: number[]; firstSeen: Set<string> }
  >();
  const track = (fp: string, rule: string) => {
    let t = seen.get(fp);
    if (!t) seen.set(fp, (t = { rule, live: [], fresh: [], carried: [], absent: [], firstSeen: new Set() }));
    return t;
  };
  for (const [i, { name, night, code }] of NIGHTS.entries()) {
    const takenAt = `2026-10-0${i + 1}T03:00:00.000Z`;
    // Each night carries only the memory of the night before (history pruned to one snapshot).
    const snapshot: Snapshot = withMemory(hostOn(takenAt, night), previous ? [previous] : []);
    previous = snapshot;
    const file = join(dir, `night-${i + 1}.json`);
    writeFileSync(file, JSON.stringify(snapshot));
    const r = await runCli(
      [
        'evaluate',
        file,
        '--out',
        out,
        '--format',
        'json,sarif,prom',
        '--baseline',
        'auto',
        '--fail-on-new',
        '--keep',
        '2',
      ],
      new Date(Date.parse(takenAt) + 60_000),
    );
    assert.is(r.code, code, `night ${i + 1} (${name}): ${r.stderr}`);
    const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as JsonReport;
    // SARIF and Prometheus show the same standing findings, carried ones included (every format).
    const sarif = JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8')) as {
      runs: { results: { kind: string; partialFingerprints: Record<string, string> }[] }[];
    };
    failing.set(
      i + 1,
      new Set(
        sarif.runs.flatMap((run) =>
          run.results.filter((x) => x.kind === 'fail').map((x) => Object.values(x.partialFingerprints)[0]!),
        ),
      ),
    );
    const prom = readFileSync(join(out, 'mesh-audit.prom'), 'utf8');
    promCounts.set(i + 1, (rule: string) =>
      [...prom.matchAll(new RegExp(`^mesh_audit_findings\\{[^}]*rule_id="${rule}"[^}]*\\} (\\d+)$`, 'gm'))].reduce(
        (n, m) => n + Number(m[1]),
        0,
      ),
    );
    for (const f of report.findings) {
      const t = track(f.fingerprint, `${f.ruleId} ${f.subject.id}`);
      t.live.push(i + 1);
      if (f.state === 'new') t.fresh.push(i + 1);
      if (f.firstSeen) t.firstSeen.add(f.firstSeen);
    }
    for (const f of report.notCheckedFindings ?? []) track(f.fingerprint, f.ruleId).carried.push(i + 1);
    for (const f of report.absent ?? []) track(f.fingerprint, `${f.ruleId} ${f.subject.id}`).absent.push(i + 1);
    if (night.docker || night.ledger || night.proc) {
      assert.equal(report.absent ?? [], [], `night ${i + 1} (${name}): nothing is absent on an outage night`);
      assert.is(report.summary.complete, false);
      assert.ok(
        (report.notChecked ?? []).length > 0 || night.docker === 'down',
        `night ${i + 1}: says what was not checked`,
      );
    }
    // The reported bugs: no finding whose facts came from the missing source.
    const rulesTonight = report.findings.map((f) => f.ruleId);
    if (night.docker === 'down') assert.not.ok(rulesTonight.includes('MA3001'), 'MA3001 with the engine down');
    if (night.ledger === 'down')
      for (const id of ['MA2001', 'MA2002', 'MA2003'])
        assert.not.ok(rulesTonight.includes(id), `${id} with the ledger down`);
    if (night.proc === 'down') assert.not.ok(rulesTonight.includes('MA1002'), 'MA1002 with /proc down');
  }
  const byRule = (rule: string) => [...seen.values()].filter((t) => t.rule.startsWith(rule));
  // The standing drifts: new exactly once, then live or carried (unchecked) every night, never absent until they end.
  const expectations: [string, number, number | null][] = [
    ['MA1001 app', 1, null],
    ['MA1002 app', 1, null],
    ['MA2004 /etc/mesh/app.ini', 1, null],
    ['MA2003 forge-old', 2, 7],
    ['MA2001 forge-old', 2, 7],
  ];
  for (const [rule, start, end] of expectations) {
    const [t] = byRule(rule);
    assert.ok(t, `${rule} was reported`);
    assert.equal(t.fresh, [start], `${rule} is new exactly once: ${JSON.stringify(t)}`);
    const last = end === null ? NIGHTS.length : end - 1;
    for (let n = start; n <= last; n++) {
      assert.ok(
        t.live.includes(n) !== t.carried.includes(n),
        `${rule} night ${n}: live or carried, once: ${JSON.stringify(t)}`,
      );
      const fp = [...seen.entries()].find(([, v]) => v === t)![0];
      assert.ok(
        failing.get(n)!.has(fp),
        `${rule} night ${n}: a failing SARIF result (GitHub would close a missing one)`,
      );
      assert.ok(promCounts.get(n)!(rule.split(' ')[0]!) >= 1, `${rule} night ${n}: counted in the Prometheus textfile`);
    }
    assert.equal(t.absent, end === null ? [] : [end], `${rule} ends once, as absent: ${JSON.stringify(t)}`);
    assert.is(t.firstSeen.size, 1, `${rule} keeps its firstSeen: ${[...t.firstSeen].join(', ')}`);
    assert.ok([...t.firstSeen][0]!.startsWith(`2026-10-0${start}`), `${rule} first seen on night ${start}`);
  }
  // Nothing else was ever reported (no false finding from a missing source).
  assert.equal(
    [...seen.values()].filter((t) => !expectations.some(([r]) => t.rule.startsWith(r))).map((t) => t.rule),
    [],
  );
});

test('hiding the engine, the ledger or /proc: the rules that read them are not checked, and say why', () => {
  const base = hostOn('2026-10-02T03:00:00.000Z', { renamed: true });
  const history = [hostOn('2026-10-01T03:00:00.000Z', { renamed: false })];
  const full = auditSnapshot(withMemory(base, history), history, rules);
  assert.ok(full.complete, JSON.stringify(full.notifications));
  assert.ok(full.findings.some((f) => f.ruleId === 'MA2003'));

  const ledgerDown = hostOn('2026-10-02T03:00:00.000Z', { renamed: true, ledger: 'down' });
  const e = auditSnapshot(ledgerDown, history, rules);
  assert.equal(
    e.findings.filter((f) => ['MA2001', 'MA2002', 'MA2003', 'MA3001'].includes(f.ruleId)),
    [],
  );
  assert.ok(
    e.notChecked?.some((n) => n.ruleId === 'MA2003' && n.subject.id === 'forge-old' && n.sources.includes('ledger')),
    JSON.stringify(e.notChecked),
  );
  assert.ok(
    e.notifications.some(
      (n) =>
        n.level === 'error' &&
        /rule MA2003 not checked on .*container forge-old.*the ledger .* was not read/.test(n.message),
    ),
  );

  const engineDown = hostOn('2026-10-02T03:00:00.000Z', { renamed: true, docker: 'down' });
  const d = auditSnapshot(engineDown, history, rules);
  assert.equal(
    d.findings.filter((f) => f.ruleId === 'MA3001'),
    [],
  );
  assert.ok(d.notChecked?.some((n) => n.ruleId === 'MA3001' && n.sources.includes('docker')));
});

test('MA1004: a stopped container keeps a key its composed file lost; a key the image sets is not reported', () => {
  const model = new HostModel('n1', '2026-10-01T03:00:00Z')
    .file('/etc/mesh/app.env', 'DB=x\n')
    .container({
      name: 'app',
      running: false,
      env: { DB: 'x', FEATURE_X: 'on', PATH: '/bin', LANG: 'C.UTF-8' },
      labels: { 'mesh.sources': '/etc/mesh/app.env' },
    })
    .ledger([
      { id: 'app.server', type: 'container', target: 'app', origin: 'declared', sources: ['/etc/mesh/app.env'] },
    ]);
  const snapshot = model.build();
  const app = snapshot.containers[0]!;
  // The image sets PATH (same value) and LANG (another value: the composed file overrode it once).
  const withImage: Snapshot = {
    ...snapshot,
    containers: [
      {
        ...app,
        imageEnv: { PATH: app.env['PATH']!, LANG: { ...app.env['LANG']!, digest: `hmac-sha256:${'0'.repeat(64)}` } },
      },
    ],
  };
  const found = auditSnapshot(withImage, [], rules).findings.filter((f) => f.ruleId === 'MA1004');
  assert.equal(
    found.map((f) => f.discriminator),
    ['/etc/mesh/app.env#FEATURE_X', '/etc/mesh/app.env#LANG'],
  );
  assert.match(
    found[0]!.message,
    /app holds FEATURE_X=<2 chars> but \/etc\/mesh\/app.env no longer names FEATURE_X \(the image does not set it\)/,
  );

  // The image not read: only a key an earlier snapshot's file named is reported; PATH is not guessed at.
  const before = new HostModel('n1', '2026-09-30T03:00:00Z').file('/etc/mesh/app.env', 'DB=x\nFEATURE_X=on\n').build();
  const fromHistory = auditSnapshot(snapshot, [before], rules).findings.filter((f) => f.ruleId === 'MA1004');
  assert.equal(
    fromHistory.map((f) => f.discriminator),
    ['/etc/mesh/app.env#FEATURE_X'],
  );
  assert.match(fromHistory[0]!.message, /an earlier snapshot of the file named it/);
  assert.equal(
    auditSnapshot(snapshot, [], rules).findings.filter((f) => f.ruleId === 'MA1004'),
    [],
  );
});

test('an outage night renews the alerts of the findings it could not check: none resolves, none restarts', () => {
  const first = hostOn('2026-10-01T03:00:00.000Z', { renamed: true });
  const night1 = triage(
    reportOf([auditSnapshot(first, [], rules)], rules, { now: new Date('2026-10-01T03:01:00.000Z') }),
    { now: new Date('2026-10-01T03:01:00.000Z') },
  );
  const standing = night1.evaluations.flatMap((e) => e.findings);
  assert.ok(standing.some((f) => f.ruleId === 'MA1001'));
  const down = withMemory(hostOn('2026-10-02T03:00:00.000Z', { renamed: true, docker: 'down' }), [first]);
  const now = new Date('2026-10-02T03:01:00.000Z');
  const night2 = triage(reportOf([auditSnapshot(down, [first], rules)], rules, { now }), {
    now,
    baseline: { source: 'night 1', generatedAt: night1.generatedAt, findings: standing },
  });
  const alerts = alertsOf(night2, { ttlHours: 25 });
  for (const f of standing) {
    const alert = alerts.find((a) => a.labels['fingerprint'] === f.fingerprint);
    assert.ok(alert, `${f.ruleId} ${f.subject.id}: still alerted on the outage night`);
    assert.ok(alert.endsAt > now.toISOString(), `${f.ruleId} ${f.subject.id}: renewed, not resolved`);
    assert.is(alert.startsAt, f.firstSeen, `${f.ruleId} ${f.subject.id}: starts when first seen`);
  }
});

test('a night without /proc keeps the severities last checked: the same alerts, the findings not new, the run incomplete', () => {
  // Night 1 reads everything: forge-old, left at forge's old name and listening on every interface, is raised.
  const first = hostOn('2026-10-01T03:00:00.000Z', { renamed: true });
  const at1 = new Date('2026-10-01T03:01:00.000Z');
  const night1 = triage(reportOf([auditSnapshot(first, [], rules)], rules, { now: at1 }), { now: at1 });
  const standing = night1.evaluations.flatMap((e) => e.findings);
  const raised = standing.filter((f) => f.subject.id === 'forge-old' && f.severity === 'error');
  assert.ok(raised.length > 0, 'night 1 raises a finding on forge-old');
  // Night 2: /proc not read, so whether forge-old listens beyond loopback is unknown.
  const down = withMemory(hostOn('2026-10-02T03:00:00.000Z', { renamed: true, proc: 'down' }), [first]);
  const at2 = new Date('2026-10-02T03:01:00.000Z');
  const alone = triage(reportOf([auditSnapshot(down, [first], rules)], rules, { now: at2 }), { now: at2 });
  const night2 = triage(reportOf([auditSnapshot(down, [first], rules)], rules, { now: at2 }), {
    now: at2,
    baseline: { source: 'night 1', generatedAt: night1.generatedAt, findings: standing },
  });
  for (const f of raised) {
    // Without a baseline the rule's own severity stands, said as left at it (nothing to keep).
    const bare = alone.evaluations[0]!.findings.find((g) => g.fingerprint === f.fingerprint)!;
    assert.is.not(bare.severity, 'error', `${f.ruleId}: not raised from an unknown`);
    assert.match(bare.message, /\(severity left at /);
    const now = night2.evaluations[0]!.findings.find((g) => g.fingerprint === f.fingerprint)!;
    assert.is(now.severity, 'error', `${f.ruleId}: kept at the severity last checked`);
    // Its words say what tonight could not tell ("may be exposed"): updated, never new, never gone.
    assert.is(now.state, 'updated', `${f.ruleId}: the same finding, reworded`);
    assert.is(now.unknownEscalation?.keptFrom, night1.generatedAt);
    assert.match(now.message, /\(severity kept at error as last checked \(2026-10-01T03:01:00\.000Z\): .*not known/);
  }
  const notes = night2.evaluations[0]!.notifications.filter((n) => /severity not checked/.test(n.message));
  assert.ok(notes.some((n) => /kept at error as last checked/.test(n.message)));
  assert.not.ok(
    notes.some((n) => raised.some((f) => n.source === f.ruleId) && /left at/.test(n.message)),
    'no notification says a kept severity was left at the rule own',
  );
  assert.is(night2.evaluations[0]!.complete, false, 'still incomplete: the severity was not checked tonight');
  // Alertmanager sees the same alert (same labels), renewed.
  const labels = (r: typeof night1) =>
    alertsOf(r, { ttlHours: 25 })
      .filter((a) => raised.some((f) => a.labels['fingerprint'] === f.fingerprint))
      .map((a) => JSON.stringify(a.labels))
      .sort();
  assert.equal(labels(night2), labels(night1));
  // Night 3, /proc still down: kept again, still as checked on night 1, and now unchanged (same words, same severity).
  const at3 = new Date('2026-10-03T03:01:00.000Z');
  const down3 = withMemory(hostOn('2026-10-03T03:00:00.000Z', { renamed: true, proc: 'down' }), [first, down]);
  const night3 = triage(reportOf([auditSnapshot(down3, [first, down], rules)], rules, { now: at3 }), {
    now: at3,
    baseline: { source: 'night 2', generatedAt: night2.generatedAt, findings: night2.evaluations[0]!.findings },
  });
  for (const f of raised) {
    const now = night3.evaluations[0]!.findings.find((g) => g.fingerprint === f.fingerprint)!;
    assert.is(now.severity, 'error');
    assert.is(now.state, 'unchanged', `${f.ruleId}: a second night alike changes nothing`);
    assert.is(now.unknownEscalation?.keptFrom, night1.generatedAt, `${f.ruleId}: last checked on night 1`);
  }
  assert.equal(labels(night3), labels(night1));
});

test.run();
