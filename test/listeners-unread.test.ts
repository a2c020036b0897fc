/*
 * The host's listening sockets not read, for whatever reason (here: the scan did not run as root, as a live scan
 * records it): every rule on listeners is not checked, in every format, and the run is incomplete (exit 3), never
 * clean; unless the operator put every listener out of scope (`listener:*`), which the report then says.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, runCli, tempDir } from './support/cli.js';
import { HostModel } from './support/host-model.js';
import type { Snapshot } from '../src/snapshot/types.js';

interface JsonReport {
  summary: { complete: boolean; excluded?: { listeners: number; total: number } };
  findings: { ruleId: string; subject: { id: string }; severity: string }[];
  notifications: { level: string; source: string; message: string }[];
  notChecked?: { ruleId: string; subject: { kind: string; id: string }; reasons: string[] }[];
}

interface SarifLog {
  runs: {
    invocations: {
      executionSuccessful: boolean;
      toolExecutionNotifications: { level: string; message: { text: string } }[];
    }[];
  }[];
}

const NOT_ROOT = 'not running as root';

/** A snapshot as a live scan not run as root records it: the host's sockets and the containers' /proc unread. */
function notRoot(snapshot: Snapshot, containersToo: boolean): Snapshot {
  return {
    ...snapshot,
    hostListeners: { available: false, reason: `the host's listening sockets not read from /proc: ${NOT_ROOT}` },
    ...(containersToo
      ? {
          containers: snapshot.containers.map((c) => ({ ...c, proc: { available: false as const, reason: NOT_ROOT } })),
        }
      : {}),
    notes: [
      ...(snapshot.notes ?? []),
      {
        source: 'proc',
        message:
          `container processes not read from /proc: ${NOT_ROOT}; env, sockets and bind-mounted files as containers ` +
          `see them, and the host's listening sockets, were not read: the rules on them are not checked`,
      },
    ],
  };
}

const demo = (): Snapshot => JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')) as Snapshot;

interface Outputs {
  code: number;
  stderr: string;
  text: string;
  json: JsonReport;
  sarif: SarifLog;
  prom: string;
}

/** Every format of one evaluation of `snapshot`, written to a fresh output folder. */
async function evaluateAll(snapshot: Snapshot, ...flags: string[]): Promise<Outputs> {
  const dir = tempDir();
  const file = join(dir, 'snapshot.json');
  writeFileSync(file, JSON.stringify(snapshot));
  const out = join(dir, 'reports');
  const prom = join(dir, 'mesh-audit.prom');
  const run = await runCli(['evaluate', file, '--out', out, '--format', 'json,sarif', '--prom-file', prom, ...flags]);
  const text = await runCli(['evaluate', file, '--out', '-', '--format', 'text', ...flags]);
  assert.is(text.code, run.code, 'the text run ends as the other formats');
  return {
    code: run.code,
    stderr: run.stderr,
    text: text.stdout,
    json: JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as JsonReport,
    sarif: JSON.parse(readFileSync(join(out, 'mesh-audit.sarif'), 'utf8')) as SarifLog,
    prom: readFileSync(prom, 'utf8'),
  };
}

const ma2009NotChecked = (o: Outputs) => (o.json.notChecked ?? []).filter((n) => n.ruleId === 'MA2009');

test('the demo host, its sockets not read (not root): MA2009 not checked in text, JSON, SARIF and the textfile; exit 3', async () => {
  const read = await evaluateAll(demo());
  assert.ok(read.json.summary.complete, 'read as root, the demo host is complete');
  const o = await evaluateAll(notRoot(demo(), false));
  assert.is(o.code, 3, o.stderr);
  assert.not.ok(o.json.summary.complete);
  assert.equal(
    ma2009NotChecked(o).map((n) => n.subject.kind),
    ['listener'],
  );
  assert.match(ma2009NotChecked(o)[0]!.reasons[0]!, NOT_ROOT);
  assert.ok(
    o.json.notifications.some((n) => n.level === 'error' && n.source === 'MA2009' && n.message.includes(NOT_ROOT)),
    JSON.stringify(o.json.notifications),
  );
  assert.match(o.text, /INCOMPLETE/);
  assert.match(
    o.text,
    /Not checked \(\d+\):\n(\s+- .*\n)*\s+- \[MA2009\] rule MA2009 not checked on listener .*not running as root/,
  );
  const invocation = o.sarif.runs[0]!.invocations[0]!;
  assert.is(invocation.executionSuccessful, false);
  assert.ok(
    invocation.toolExecutionNotifications.some((n) => n.level === 'error' && n.message.text.includes('MA2009')),
    JSON.stringify(invocation.toolExecutionNotifications),
  );
  assert.match(o.prom, 'mesh_audit_run_complete{host="edge-7"} 0');
  // What was read is unchanged: the same findings, none added or dropped by the sockets not read.
  assert.equal(
    o.json.findings.map((f) => `${f.ruleId} ${f.subject.id} ${f.severity}`),
    read.json.findings.map((f) => `${f.ruleId} ${f.subject.id} ${f.severity}`),
  );
});

test('every listener out of scope (listener:*): not read, said so, the run complete for them', async () => {
  const o = await evaluateAll(notRoot(demo(), false), '--exclude', 'listener:*');
  assert.is(o.code, 1, o.stderr + JSON.stringify(o.json.notifications));
  assert.ok(o.json.summary.complete);
  assert.equal(ma2009NotChecked(o), []);
  assert.is(o.json.summary.excluded?.listeners, 1, 'the sockets not read counted out of scope');
  assert.match(o.prom, 'mesh_audit_run_complete{host="edge-7"} 1');
  assert.is(o.sarif.runs[0]!.invocations[0]!.executionSuccessful, true);
  const said = o.json.notifications.filter((n) => n.source === 'scope');
  assert.is(said.length, 1, JSON.stringify(o.json.notifications));
  assert.is(said[0]!.level, 'note');
  assert.match(said[0]!.message, NOT_ROOT);
  assert.match(said[0]!.message, 'every listener is out of scope by listener:* (--exclude listener:*)');
  assert.match(o.text, 'every listener is out of scope by listener:*');
});

test('listener:* in an ignore file does the same; a narrower listener glob cannot speak for sockets not read', async () => {
  const dir = tempDir();
  const ignore = join(dir, 'ignore');
  writeFileSync(ignore, '# another system runs every socket here\nlistener:*\n');
  const ignored = await evaluateAll(notRoot(demo(), false), '--ignore-file', ignore);
  assert.is(ignored.code, 1, ignored.stderr);
  assert.match(ignored.json.notifications.find((n) => n.source === 'scope')?.message ?? '', `listener:* (${ignore}:2)`);
  const narrow = await evaluateAll(notRoot(demo(), false), '--exclude', 'listener:*:22');
  assert.is(narrow.code, 3, 'sockets not read may be on other ports');
  assert.equal(ma2009NotChecked(narrow).length, 1);
});

test('containers not read either (a whole non-root scan): listener:* leaves only the containers’ own facts not checked', async () => {
  const o = await evaluateAll(notRoot(demo(), true), '--exclude', 'listener:*');
  assert.is(o.code, 3, 'the containers on the host network: their sockets, env and mounts are not known');
  assert.equal(ma2009NotChecked(o), []);
  assert.ok(
    (o.json.notChecked ?? []).every((n) => n.subject.kind === 'container'),
    JSON.stringify(o.json.notChecked),
  );
});

test('a finding on a socket read as root is never dropped unread: it is not checked instead', async () => {
  const model = () =>
    new HostModel('listeners', '2026-12-01T03:00:00Z').ledger([]).hostListener({
      protocol: 'tcp',
      address: '0.0.0.0',
      port: 8080,
      holder: { pid: 4242, name: 'nginx', exe: '/usr/sbin/nginx', containerId: null },
    });
  const read = await evaluateAll(model().build());
  assert.equal(
    read.json.findings.filter((f) => f.ruleId === 'MA2009').map((f) => `${f.subject.id} ${f.severity}`),
    ['0.0.0.0:8080/tcp error'],
  );
  const unread = await evaluateAll(model().hostListenersUnavailable(NOT_ROOT, false).build());
  assert.is(unread.code, 3);
  assert.equal(
    unread.json.findings.filter((f) => f.ruleId === 'MA2009'),
    [],
  );
  assert.equal(ma2009NotChecked(unread).length, 1);
  assert.match(unread.prom, 'mesh_audit_run_complete{host="listeners"} 0');
});

test('a finding of a night the sockets were read is not absent on a night every listener was left out unread', async () => {
  const dir = tempDir();
  const model = () =>
    new HostModel('listeners', '2026-12-01T03:00:00Z').ledger([]).hostListener({
      protocol: 'tcp',
      address: '0.0.0.0',
      port: 8080,
      holder: { pid: 4242, name: 'nginx', exe: '/usr/sbin/nginx', containerId: null },
    });
  const readFile = join(dir, 'read.json');
  writeFileSync(readFile, JSON.stringify(model().build()));
  const baseline = join(dir, 'baseline.json');
  const first = await runCli(['evaluate', readFile, '--format', 'json', '--out', '-']);
  writeFileSync(baseline, first.stdout);
  const unreadFile = join(dir, 'unread.json');
  writeFileSync(unreadFile, JSON.stringify(model().hostListenersUnavailable(NOT_ROOT, false).build()));
  const night = await runCli([
    'evaluate',
    unreadFile,
    '--format',
    'json',
    '--out',
    '-',
    '--baseline',
    baseline,
    '--exclude',
    'listener:*',
  ]);
  const report = JSON.parse(night.stdout) as JsonReport & { absent?: { ruleId: string }[] };
  assert.ok(report.summary.complete, night.stderr);
  assert.equal(report.absent ?? [], [], 'out of scope, not gone: its alert is not resolved by a choice not to look');
});

/** A pack of one rule on a container's own sockets: none may listen on port 22. */
const CONTAINER_SSH_PACK = `schema: mesh-audit/policy@1
pack: { id: site, name: site rules, version: 1.0.0 }
rules:
  - id: SITE1
    name: no-ssh-in-containers
    title: No container listens on port 22 in its own namespace
    severity: warning
    subject: listeners
    where: {"===": [{"var": "namespace"}, "container"]}
    assert: {"!==": [{"var": "port"}, 22]}
    message: "{container} listens on {endpoint}"
    help: ssh belongs on the host, not in a container.
    remediation: remove sshd from the image.
    tags: [site]
    profiles: [nightly]
`;

test("a running container's own sockets not read stand as unknown: a rule on them is not checked, MA2009 undisturbed", async () => {
  const dir = tempDir();
  const pack = join(dir, 'site.yaml');
  writeFileSync(pack, CONTAINER_SSH_PACK);
  const model = (proc: string | { listening: { protocol: 'tcp'; address: string; port: number }[] }) =>
    new HostModel('listeners', '2026-12-01T03:00:00Z')
      .container({ name: 'app', labels: {}, network: 'bridge', proc })
      .container({ name: 'stopped', labels: {}, network: 'bridge', running: false, proc: NOT_ROOT })
      .ledger([{ id: 'app.server', type: 'container', target: 'app' }])
      .build();
  const read = await evaluateAll(
    model({ listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 22 }] }),
    '--policy',
    pack,
  );
  assert.equal(
    read.json.findings.filter((f) => f.ruleId === 'SITE1').map((f) => f.subject.id),
    ['app/0.0.0.0:22/tcp'],
  );
  const unread = await evaluateAll(model('its pid is in another cgroup: not this container'), '--policy', pack);
  assert.is(unread.code, 3, unread.stderr);
  assert.equal(
    unread.json.findings.filter((f) => f.ruleId === 'SITE1'),
    [],
  );
  const notChecked = (unread.json.notChecked ?? []).filter((n) => n.ruleId === 'SITE1');
  assert.equal(
    notChecked.map((n) => n.subject.id),
    ['app/sockets not read'],
    'the stopped container has no socket: nothing unknown',
  );
  assert.match(notChecked[0]!.reasons[0]!, '/proc of app not read: its pid is in another cgroup');
  assert.equal(ma2009NotChecked(unread), [], 'MA2009 speaks of the host namespace only');
});

test.run();
