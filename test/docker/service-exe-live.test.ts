import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { hostHttpd } from './host-httpd.js';
import { forEachEngine, type Engine } from './engine.js';
import { LiveHost } from './live-host.js';

/*
 * A `service` entry naming its executable by a path through a symlinked folder (issue 47): a merged-/usr host's
 * `/bin/busybox` is `/usr/bin/busybox`, and /proc/PID/exe names the latter. Two host processes (busybox httpd,
 * never connected to) listen on every interface: one declared by an entry whose path goes through a folder
 * symlink to busybox's real folder, one by an entry whose path goes through a symlink loop (not known: its
 * socket is not checked, never an undeclared listener). Run on each engine, as every scan needs one.
 */
forEachEngine('a service entry through a symlinked folder', scenario);

function scenario(e: Engine, it: Test, index: number): void {
  const host = new LiveHost();
  const base = 40000 + ((process.pid * 4 + index * 2) % 10000);
  const [VIA_LINK, VIA_LOOP] = [base, base + 1];
  const processes: ChildProcess[] = [];

  it('the socket of the entry naming busybox through a symlinked folder is declared; one through a loop is not checked', () => {
    // The folder busybox really is in (/usr/bin on a merged-/usr host), reached through a folder symlink.
    const links = host.path('links');
    mkdirSync(links, { recursive: true });
    symlinkSync(dirname(realpathSync('/bin/busybox')), join(links, 'bin'));
    symlinkSync(join(links, 'loop'), join(links, 'loop'));
    processes.push(hostHttpd('0.0.0.0', VIA_LINK), hostHttpd('0.0.0.0', VIA_LOOP));
    host.ledger([
      { id: 'edge.linked', type: 'service', module: 'edge', target: join(links, 'bin', 'busybox'), holds: [VIA_LINK] },
      { id: 'edge.looped', type: 'service', module: 'edge', target: join(links, 'loop', 'busybox'), holds: [VIA_LOOP] },
    ]);
    try {
      const run = host.scan(e.dockerHost, `live-service-exe-${e.kind}`);
      const about = (port: number) => run.report.findings.filter((f) => f.subject.id === `0.0.0.0:${port}/tcp`);
      assert.equal(about(VIA_LINK), [], 'declared through the symlinked folder: no MA2009');
      assert.equal(about(VIA_LOOP), [], 'a path that cannot be resolved is no mismatch');
      const unchecked = run.report.notifications.filter(
        (n) => n.message.includes('MA2009') && n.message.includes(`0.0.0.0:${VIA_LOOP}/tcp`),
      );
      assert.is(unchecked.length, 1, JSON.stringify(run.report.notifications, null, 1));
      assert.match(unchecked[0]!.message, 'symlinks');
      assert.is(run.code, 3, 'a socket not checked: the run is incomplete');
    } finally {
      for (const p of processes) p.kill('SIGKILL');
    }
  });
}
