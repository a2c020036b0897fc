import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from '../support/cli.js';
import { hostHttpd } from './host-httpd.js';
import { forEachEngine, type Engine } from './engine.js';
import { LiveHost, type LiveReport } from './live-host.js';

/*
 * Issue 46 on a real engine: the scan run as a non-root user in the engine socket's group (as an operator may run
 * it from cron) reads the engine, but not the host's listening sockets (nor the containers' /proc). A socket that
 * the same host scanned as root reports as MA2009 is then not checked: listed as such, the run incomplete (exit 3),
 * never exit 0 with the rule silently passing. `listener:*` puts every listener out of scope, and the report says so.
 * The test runs as root (CI does) and makes the user and group itself; with CI=true, not being root is a failure.
 */

const BIN = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
const ci = process.env['CI'] === 'true';
const isRoot = process.geteuid?.() === 0;

interface NotChecked {
  ruleId: string;
  subject: { kind: string; id: string };
  reasons: string[];
}
type Report = Omit<LiveReport, 'notifications' | 'summary'> & {
  notChecked?: NotChecked[];
  notifications: { level: string; source: string; message: string }[];
  summary: { complete: boolean; excluded?: { listeners: number } };
};

/** A user and its group, made for this test process and removed at its exit: the engine socket's group. */
function socketGroupUser(): { uid: number; gid: number; name: string } {
  const name = `ma-nr-${process.pid}`;
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  if (spawnSync('getent', ['passwd', name]).status !== 0) {
    run('groupadd', [name]);
    run('useradd', ['--no-create-home', '--gid', name, '--shell', '/usr/sbin/nologin', name]);
    process.once('exit', () => {
      spawnSync('userdel', [name]);
      spawnSync('groupdel', [name]);
    });
  }
  return { uid: Number(run('id', ['-u', name]).trim()), gid: Number(run('id', ['-g', name]).trim()), name };
}

/** The engine's socket opened to `gid` (group read and write, its folder traversable by the group). */
function openSocketTo(e: Engine, gid: number): void {
  const socket = e.dockerHost.replace(/^unix:\/\//, '');
  chownSync(socket, statSync(socket).uid, gid);
  chmodSync(socket, 0o660);
  const folder = dirname(socket);
  const mode = statSync(folder).mode & 0o777;
  if ((mode & 0o001) === 0) {
    chownSync(folder, statSync(folder).uid, gid);
    chmodSync(folder, mode | 0o010);
  }
}

forEachEngine('the host listeners, scanned as a non-root user of the engine group', (e, it, index) => {
  const host = new LiveHost();
  const base = 45000 + ((process.pid * 2 + index) % 10000);
  const OPEN = base;
  const hostname = `live-nonroot-${e.kind}`;
  const processes: ChildProcess[] = [];
  let user: { uid: number; gid: number; name: string } | undefined;
  let asRoot: Report | undefined;

  /** The scan as the user, into an output folder of its own; its JSON report and exit code. */
  function scanAsUser(extra: string[]): { code: number; stderr: string; report: Report } {
    const home = tempDir('ma-nonroot-', '/tmp');
    chownSync(home, user!.uid, user!.gid);
    const out = join(home, 'reports');
    mkdirSync(out, { mode: 0o750 });
    chownSync(out, user!.uid, user!.gid);
    const r = spawnSync(process.execPath, [BIN, ...host.scanArgs(e.dockerHost, hostname, out, extra)], {
      uid: user!.uid,
      gid: user!.gid,
      cwd: home,
      env: { ...process.env, HOME: home },
      encoding: 'utf8',
      timeout: 120_000,
    });
    let report: Report;
    try {
      report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as Report;
    } catch {
      throw new Error(`the scan as ${user!.name} wrote no report (exit ${r.status ?? r.signal}): ${r.stderr}`);
    }
    return { code: r.status ?? -1, stderr: r.stderr, report };
  }

  const ma2009On = (report: Report, port: number) =>
    report.findings.filter((f) => f.ruleId === 'MA2009' && f.subject.id.includes(`:${port}/`));

  it('set-up, as root: a user in the engine socket group; a host process on every interface, MA2009 when read', () => {
    assert.ok(isRoot || !ci, 'CI=true: this test must run as root to make a user and open the engine socket to it');
    if (!isRoot) return;
    user = socketGroupUser();
    openSocketTo(e, user.gid);
    // The scan reads what the ledger names as that user: the ledger and its folder readable by it.
    host.ledger([]);
    chmodSync(host.dir, 0o755);
    chmodSync(host.ledgerPath, 0o644);
    processes.push(hostHttpd('0.0.0.0', OPEN));
    asRoot = host.scan(e.dockerHost, hostname).report as Report;
    assert.equal(
      ma2009On(asRoot, OPEN).map((f) => f.severity),
      ['error'],
      'read as root, the undeclared socket on every interface is an error',
    );
  });

  it('as the user: exit 3, MA2009 not checked for the sockets not read (not root), no finding dropped silently', () => {
    if (!isRoot) return;
    const run = scanAsUser([]);
    assert.is(run.code, 3, run.stderr);
    assert.not.ok(run.report.summary.complete);
    assert.equal(ma2009On(run.report, OPEN), [], 'no finding on what was not read');
    const listeners = (run.report.notChecked ?? []).filter((n) => n.ruleId === 'MA2009');
    assert.equal(
      listeners.map((n) => n.subject.kind),
      ['listener'],
      JSON.stringify(run.report.notChecked),
    );
    assert.match(listeners[0]!.reasons[0]!, 'not running as root');
    assert.ok(
      run.report.notifications.some(
        (n) => n.level === 'error' && n.source === 'MA2009' && n.message.includes('not running as root'),
      ),
      JSON.stringify(run.report.notifications),
    );
  });

  it('as the user with listener:*: the listeners out of scope, not listed as not checked, and said so', () => {
    if (!isRoot) return;
    const run = scanAsUser(['--exclude', 'listener:*']);
    assert.equal(
      (run.report.notChecked ?? []).filter((n) => n.subject.kind === 'listener'),
      [],
      JSON.stringify(run.report.notChecked),
    );
    assert.ok(
      run.report.notifications.some(
        (n) => n.source === 'scope' && n.message.includes('every listener is out of scope'),
      ),
      JSON.stringify(run.report.notifications),
    );
    assert.is(run.report.summary.excluded?.listeners, 1);
    // What else a non-root scan leaves unread (the containers' /proc) may still make it incomplete: never the listeners.
    assert.is(run.code === 3, !run.report.summary.complete, run.stderr);
    assert.not.ok(
      run.report.notifications.some((n) => n.level === 'error' && /listen/.test(n.message)),
      JSON.stringify(run.report.notifications),
    );
  });

  it('tear-down', () => {
    for (const p of processes) p.kill('SIGKILL');
  });
});
