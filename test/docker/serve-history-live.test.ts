import { chmodSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { lockOutputFolder, type OutputLock } from '../../src/write/lock.js';
import { runClaimedFromEnvFile } from '../support/claimed-container.js';
import { spawnCli, tempDir } from '../support/cli.js';
import { startServe, type ServeChild } from '../support/serve-child.js';
import { forEachEngine, removeContainers, type Engine } from './engine.js';
import { LiveHost } from './live-host.js';

/*
 * Issue 44, "the history keeps one snapshot per full re-read, bounded as now", on each real engine: `serve --out DIR`
 * keeps each whole read's snapshot in DIR's history as `scan --out DIR` keeps its own (the same names, run numbers,
 * pruning to --keep and index), and a read that took from the one before it (an event's) keeps none. The folder's
 * lock is taken only to keep: held by another run (flock(1) here, as a nightly scan holds it), that keep is skipped
 * and said, and serve answers as before; a keep that fails makes the answer incomplete, naming why, until one
 * succeeds. A scan of the folder afterwards reads serve's snapshots as its own history, from their index.
 */
forEachEngine('serve --out keeps its whole reads as history', (e, it) => scenario(e, it));

/** A read of this small host: well under a second, but Podman on a loaded machine can take several. */
const READ_MS = 30_000;

interface Status {
  state: string;
  lastRead: string | null;
  lastFullRead: string | null;
  notChecked: string[];
}
const statusOf = (body: string): Status => JSON.parse(body) as Status;

function scenario(e: Engine, it: Test): void {
  it('serve --out: one snapshot per whole read, none per event, bounded by --keep; busy lock skipped; scan reads them', async () => {
    const host = new LiveHost();
    const APP = `maserve-hist-${e.kind}-${process.pid}`;
    const HOSTNAME = `serve-hist-${e.kind}`;
    const app = runClaimedFromEnvFile(e, host, APP, { env: { APP_MODE: 'prod' } });
    host.ledger([app.claim, app.declared]);
    const out = tempDir('ma-serve-out-', '/tmp');
    const kept = join(out, 'history', HOSTNAME);
    const snapshots = () =>
      readdirSync(kept)
        .filter((n) => /^snapshot-\d{6}-.*\.json$/.test(n))
        .sort();
    const socket = join(tempDir('ma-serve-hist-', '/tmp'), 'serve.sock');
    let serve: ServeChild | undefined;
    let holder: OutputLock | undefined;
    try {
      serve = startServe(
        [
          '--docker-host',
          e.dockerHost,
          '--ledger',
          host.ledgerPath,
          '--managed-root',
          host.managedRoot,
          '--hostname',
          HOSTNAME,
          '--exclude',
          'listener:*',
          '--out',
          out,
          '--keep',
          '2',
          '--verbose',
        ],
        socket,
      );
      const s = serve;
      const status = async () => statusOf((await s.get('/v1/status')).body);
      /** SIGHUP (a whole read, as a resync's), then the status once that read ended. */
      const wholeRead = async (what: string): Promise<Status> => {
        const before = (await status()).lastFullRead ?? '';
        s.child.kill('SIGHUP');
        const read = await s.until(
          what,
          '/v1/status',
          (a) => a.code === 200 && (statusOf(a.body).lastFullRead ?? '') > before,
          READ_MS,
        );
        return statusOf(read.body);
      };

      await s.until(
        'clean after the first read',
        '/v1/status',
        (a) => a.code === 200 && statusOf(a.body).state === 'clean',
        60_000,
      );
      assert.is(snapshots().length, 1, `the first read kept one snapshot: ${snapshots().join(', ')}`);
      const first = snapshots()[0]!;

      // An event answered from the cache: the restarted container inspected again, the rest as the last read saw it.
      const fullBefore = (await status()).lastFullRead;
      const restartedAt = new Date().toISOString();
      e.docker(['restart', '-t', '0', APP]);
      await s.until(
        'a read after the restart',
        '/v1/status',
        (a) => (statusOf(a.body).lastRead ?? '') > restartedAt,
        READ_MS,
      );
      assert.is((await status()).lastFullRead, fullBefore, 'the read after the event was not a whole read');
      assert.equal(snapshots(), [first], 'a read that was not whole kept nothing');

      // A whole read: a second snapshot, with a later run number.
      assert.is((await wholeRead('a whole read after SIGHUP')).state, 'clean');
      assert.is(snapshots().length, 2, `the whole read kept its snapshot: ${snapshots().join(', ')}`);
      const second = snapshots()[1]!;
      assert.ok(second > first, `${second} is numbered after ${first}`);

      // The folder held by another run, as a nightly scan holds it (the same lock, taken by this test's process): the
      // keep is skipped and said, the answer stays current and complete.
      holder = await lockOutputFolder(out, 0);
      const busy = await wholeRead('a whole read while the folder is held');
      assert.is(busy.state, 'clean', `a skipped keep leaves the answer as it is: ${busy.notChecked.join('; ')}`);
      assert.match(
        s.stderr(),
        `is held by another mesh-audit run (pid ${process.pid}): this whole read's snapshot not kept`,
      );
      assert.equal(snapshots(), [first, second], 'nothing kept while the folder was held');
      await holder.release();
      holder = undefined;

      // A keep that fails (the host's folder made world-writable: unsafe to write in): incomplete, the cause named.
      chmodSync(kept, 0o777);
      const failed = await wholeRead('a whole read whose snapshot cannot be kept');
      assert.is(failed.state, 'incomplete', s.stderr());
      assert.ok(
        failed.notChecked.some((m) => m.includes('history snapshot not kept') && m.includes('world-writable')),
        `the cause named: ${failed.notChecked.join('; ')}`,
      );
      assert.equal(snapshots(), [first, second]);
      // Safe again: the next whole read keeps its snapshot, the oldest is pruned (--keep 2), the answer complete.
      chmodSync(kept, 0o750);
      const again = await wholeRead('a whole read once the folder is safe');
      assert.is(again.state, 'clean', `complete again once kept: ${again.notChecked.join('; ')}`);
      const now = snapshots();
      assert.is(now.length, 2, `bounded by --keep 2: ${now.join(', ')}`);
      assert.is(now[0], second, 'the oldest pruned');
      assert.ok(now[1]! > second);
      assert.is(await s.stop(), 0, s.stderr());

      // The nightly scan of the same folder reads serve's snapshots as its own history, from the index serve wrote.
      const scan = spawnCli(
        host.scanArgs(e.dockerHost, HOSTNAME, out, ['--exclude', 'listener:*', '--keep', '2', '--verbose']),
      );
      assert.ok(scan.code === 0 || scan.code === 1, scan.stderr);
      assert.match(scan.stderr, `history ${kept}: 2 snapshots, 2 known from its index, 0 parsed`);
      const afterScan = snapshots();
      assert.is(afterScan.length, 2, 'the scan keeps to the same bound');
      assert.ok(afterScan[1]! > now[1]!, "the scan's snapshot numbered after serve's");
    } finally {
      await holder?.release();
      await serve?.stop();
      removeContainers(e, [APP]);
    }
  });
}
