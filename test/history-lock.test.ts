import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, tempDir } from './support/cli.js';

/*
 * `evaluate --history DIR` on the history a nightly scan keeps (`<out>/history/<host>`) reads it under
 * a shared flock(2) of that output folder (src/write/lock.ts, lockForReading): never while a scan
 * holds the folder (prunes it, writes a snapshot), and readers do not block one another. The scan's
 * lock is played by flock(1), which takes the very lock mesh-audit takes.
 */
const BIN = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');

function outputFolderWithHistory(): { out: string; history: string } {
  const out = tempDir('ma-history-lock-');
  const history = join(out, 'history', 'demo');
  mkdirSync(history, { recursive: true });
  for (const name of readdirSync(example('demo', 'history')))
    copyFileSync(join(example('demo', 'history'), name), join(history, name));
  writeFileSync(join(out, '.mesh-audit.lock'), '4242\n');
  return { out, history };
}

/** flock(1) holding the folder's lock (`-x` as a scan does, `-s` as a reader) until told to stop. */
function holdLock(out: string, mode: '-x' | '-s'): { stop: () => Promise<void>; ended: () => boolean } {
  let done = false;
  // Its own process group: the sleeping child inherits the locked descriptor, so both must end.
  const child = spawn('flock', [mode, join(out, '.mesh-audit.lock'), 'sleep', '30'], {
    stdio: 'ignore',
    detached: true,
  });
  const exited = new Promise<void>((resolve) =>
    child.on('exit', () => {
      done = true;
      resolve();
    }),
  );
  return {
    stop: async () => {
      if (!done) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
    ended: () => done,
  };
}

/** Waits until flock(1) really holds the lock (an exclusive flock -n then fails, whichever kind it holds). */
function waitHeld(out: string): void {
  for (let i = 0; i < 200; i++) {
    if (spawnSync('flock', ['-n', '-x', join(out, '.mesh-audit.lock'), 'true']).status !== 0) return;
    spawnSync('sleep', ['0.05']);
  }
  throw new Error('flock(1) never took the lock');
}

const evaluate = (history: string, lockTimeout: string) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'evaluate',
        example('demo', 'snapshot.json'),
        '--history',
        history,
        '--lock-timeout',
        lockTimeout,
        '--format',
        'json',
        '--out',
        '-',
        '--fail-on',
        'none',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    child.on('close', (code) => resolve({ code, stderr }));
  });

test('evaluate --history on a folder a scan holds: --lock-timeout 0 gives up naming the holder (exit 3); with time it waits for the scan to end, then reads', async () => {
  const { out, history } = outputFolderWithHistory();
  const scan = holdLock(out, '-x');
  try {
    waitHeld(out);
    const gaveUp = await evaluate(history, '0');
    assert.is(gaveUp.code, 3, gaveUp.stderr);
    assert.match(
      gaveUp.stderr,
      `${history}: another mesh-audit run (pid 4242) is writing this history; gave up after waiting 0 s (--lock-timeout)`,
    );
    const waiting = evaluate(history, '60');
    // The reader is still waiting when the scan ends: it finishes only after, and reads the history whole.
    setTimeout(() => void scan.stop(), 1500);
    const waited = await waiting;
    assert.ok(scan.ended(), 'the reader finished only after the scan had let go');
    assert.is(waited.code, 0, waited.stderr);
  } finally {
    await scan.stop();
  }
});

test('readers do not block one another, and a folder without a lock file is read without one (nothing is created there)', async () => {
  const { out, history } = outputFolderWithHistory();
  const reader = holdLock(out, '-s');
  try {
    waitHeld(out);
    const r = await evaluate(history, '0');
    assert.is(r.code, 0, r.stderr);
  } finally {
    await reader.stop();
  }
  const plain = tempDir('ma-history-plain-');
  for (const name of readdirSync(example('demo', 'history')))
    copyFileSync(join(example('demo', 'history'), name), join(plain, name));
  const before = readdirSync(plain).sort();
  const r = await evaluate(plain, '0');
  assert.is(r.code, 0, r.stderr);
  assert.equal(readdirSync(plain).sort(), before);
});

test.run();
