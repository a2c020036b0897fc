import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { historyReading } from '../src/acquire.js';
import { loadHistory } from '../src/snapshot/history.js';
import { historyDirOf, readOwnHistory } from '../src/snapshot/history-store.js';
import { HostModel } from './support/host-model.js';
import { tempDir } from './support/cli.js';

/* One memory for every command: a history folder is the scan's output folder, its history/, or one host's folder. */

function outputFolder(): string {
  const out = tempDir('mesh-history-');
  writeFileSync(join(out, 'mesh-audit.json'), '{"not": "a snapshot"}\n');
  for (const [host, times] of [
    ['n1', ['2026-10-01T03:00:00Z', '2026-10-02T03:00:00Z']],
    ['n2', ['2026-10-01T04:00:00Z']],
  ] as const) {
    const dir = historyDirOf(out, host);
    mkdirSync(dir, { recursive: true });
    for (const t of times)
      writeFileSync(
        join(dir, `snapshot-${t.replace(/[-:]/g, '')}.json`),
        JSON.stringify(new HostModel(host, t).build()),
      );
  }
  return out;
}

test('loadHistory reads the output folder, its history/ or a per-host folder alike, oldest first, never the reports', async () => {
  const out = outputFolder();
  const names = (r: Awaited<ReturnType<typeof loadHistory>>) => r.snapshots.map((s) => `${s.hostname}@${s.takenAt}`);
  const all = ['n1@2026-10-01T03:00:00Z', 'n1@2026-10-02T03:00:00Z', 'n2@2026-10-01T04:00:00Z'];
  for (const dir of [out, join(out, 'history')]) {
    const r = await loadHistory(dir, historyReading());
    assert.equal(r.problems, [], dir);
    assert.equal(names(r), all, dir);
  }
  assert.equal(names(await loadHistory(historyDirOf(out, 'n1'), historyReading())), all.slice(0, 2));
});

test('a history folder that exists but cannot be read is a problem of the run, not a first run', async () => {
  const out = tempDir('mesh-history-');
  mkdirSync(join(out, 'history'));
  // A file where the host's folder should be: readdir fails (ENOTDIR), as it would with EACCES.
  writeFileSync(historyDirOf(out, 'n1'), 'not a folder');
  const r = await readOwnHistory(out, 'n1', historyReading());
  assert.equal(r.snapshots, []);
  assert.is(r.problems.length, 1);
  assert.match(r.problems[0]!.message, /cannot read the history of this host \(ENOTDIR\)/);
  assert.equal(
    await readOwnHistory(tempDir('mesh-history-'), 'n1', historyReading()),
    { snapshots: [], problems: [], files: new Map() },
    'no folder yet: a first run',
  );
});

test.run();
