import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { runClaimedFromEnvFile } from '../support/claimed-container.js';
import { tempDir } from '../support/cli.js';
import { getOn } from '../support/serve-child.js';
import { waitUntil } from '../support/wait.js';
import { straceBinary, straceCli, treeState, writesOutside, type Violation } from '../support/strace.js';
import { forEachEngine, removeContainers, type Engine } from './engine.js';
import { envText, LiveHost } from './live-host.js';

/*
 * Read-only, for the resident command too (issue 44): `mesh-audit serve --out DIR` on a live host, under strace -f,
 * through its first read (a whole read: its snapshot kept in DIR's history), a change it answers (a composed file
 * rewritten) and a SIGTERM, writes nothing but its socket (in the folder it makes for it) and DIR, executes nothing, and
 * leaves the host's tree as it found it. The trace auditor itself is
 * tested in test/docker/strace.test.ts.
 */
const strace = straceBinary();
if (strace) forEachEngine('serve under strace', (e, it) => serveUnderStrace(strace, e, it));
else {
  // straceBinary throws in CI when strace is missing; outside CI there is nothing to run.
  process.stderr.write('serve under strace: skipped (no strace on this machine)\n');
}

const show = (v: readonly Violation[]): string => v.map((x) => `  line ${x.line}: ${x.why}\n    ${x.text}`).join('\n');

/** The pids of a process's children (strace's child is the traced node). */
function childrenOf(pid: number): number[] {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((t) =>
    readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
}

function serveUnderStrace(strace: string, e: Engine, it: Test): void {
  it('serve writes nothing but its socket and executes nothing, through a read, a change and SIGTERM', async () => {
    const host = new LiveHost();
    const APP = `maserve-strace-${e.kind}-${process.pid}`;
    const app = runClaimedFromEnvFile(e, host, APP, { env: { APP_MODE: 'prod' } });
    host.ledger([app.claim]);
    const socketDir = realpathSync(tempDir('ma-serve-strace-', '/tmp'));
    const socket = join(socketDir, 'run', 'serve.sock');
    // The output folder beside the socket's: the one folder the trace may show writes in.
    const out = join(socketDir, 'out');
    let tracer = 0;
    try {
      const traced = straceCli(
        strace,
        join(tempDir('ma-serve-trace-', '/tmp'), 'serve.trace'),
        [
          'serve',
          '--socket',
          socket,
          '--docker-host',
          e.dockerHost,
          '--ledger',
          host.ledgerPath,
          '--managed-root',
          host.managedRoot,
          '--hostname',
          'serve-strace',
          '--exclude',
          'listener:*',
          '--out',
          out,
        ],
        { timeoutMs: 120_000, onStart: (pid) => (tracer = pid) },
      );
      const status = async () => (await getOn(socket, '/v1/status')).body;
      await waitUntil('the first read', async () => (await status()).includes('"state": "clean"'), 60_000);
      host.replaceByRename(app.envFile, envText({ APP_MODE: 'staging' }));
      const before = treeState(host.dir, []);
      await waitUntil('the drift answered', async () => (await status()).includes('"state": "findings"'), 30_000);
      for (const pid of childrenOf(tracer)) process.kill(pid, 'SIGTERM');
      const run = await traced;
      assert.not.ok(run.timedOut, `serve did not stop on SIGTERM: ${run.stderr}`);
      assert.is(run.code, 0, run.stderr);
      const violations = writesOutside(run.trace, { outDir: socketDir, cwd: PACKAGE_ROOT });
      assert.equal(violations, [], `writes outside ${socketDir}:\n${show(violations)}`);
      assert.ok(
        readdirSync(join(out, 'history', 'serve-strace')).some((n) => /^snapshot-\d{6}-.*\.json$/.test(n)),
        'the first read was kept in the history of --out (the trace saw those writes allowed)',
      );
      assert.equal(treeState(host.dir, []), before, 'the host tree changed while serve ran');
      assert.ok(run.trace.includes(`bind(`) && run.trace.includes(socket), 'the trace saw the socket made');
    } finally {
      removeContainers(e, [APP]);
    }
  });
}
