import { readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { historyReading } from '../src/acquire.js';
import { pastOf } from '../src/facts/history.js';
import { auditSnapshot } from '../src/pipeline.js';
import { loadPolicies } from '../src/policy/load.js';
import { loadHistory } from '../src/snapshot/history.js';
import { decodeHistoryIndex, encodeHistoryIndex, HISTORY_INDEX_FILE } from '../src/snapshot/history-index.js';
import { historyDirOf } from '../src/snapshot/history-store.js';
import { loadSnapshot } from '../src/snapshot/load.js';
import type { Snapshot } from '../src/snapshot/types.js';
import { TOOL_VERSION } from '../src/version.js';
import { LiveHost } from './docker/live-host.js';
import { example, spawnCli } from './support/cli.js';
import { HostModel } from './support/host-model.js';

/*
 * Issue 32: a scan reads what it needs of its history from the index beside the kept snapshots
 * (src/snapshot/history-index.ts), whatever --keep is; the index is checked against the files, rebuilt
 * when missing or damaged, and what it carries gives the very findings the snapshots give.
 */

const rules = (await loadPolicies()).flatMap((p) => p.rules);

/** The history as a later run has it through the index: each snapshot's lean form, written and read back. */
function throughIndex(history: readonly Snapshot[]) {
  const text = encodeHistoryIndex(
    history.map((s, i) => ({ file: `snapshot-${i}.json`, size: 1, mtimeMs: 1, past: pastOf(s) })),
    { file: `snapshot-${history.length - 1}.json`, sha256: '0'.repeat(64) },
    TOOL_VERSION,
  );
  const index = decodeHistoryIndex(text, 'index', TOOL_VERSION);
  if (!index.usable) throw new Error(index.reason);
  return [...index.snapshots.values()].map((e) => e.past);
}

const withoutTiming = (e: ReturnType<typeof auditSnapshot>) => ({ ...e, durationMs: 0 });

test('the examples with history: the same evaluation from the snapshots and from the index', async () => {
  for (const name of ['097', 'adopted-node']) {
    const current = await loadSnapshot(example(name, 'snapshot.json'));
    const folder = example(name, 'history');
    const snapshots = await Promise.all(
      readdirSync(folder)
        .filter((n) => n.endsWith('.json'))
        .sort()
        .map((n) => loadSnapshot(join(folder, n))),
    );
    const full = withoutTiming(auditSnapshot(current, snapshots, rules));
    assert.ok(full.findings.length > 0, name);
    assert.equal(withoutTiming(auditSnapshot(current, throughIndex(snapshots), rules)), full, name);
  }
});

test("MA1004's evidence from history (a key only an earlier snapshot's file named) is carried by the index", () => {
  const path = '/etc/mesh/app/app.env';
  const at = (takenAt: string, file: string, env: Record<string, string>) =>
    new HostModel('n1', takenAt)
      .file(path, file)
      .container({ name: 'app', labels: { 'mesh.module': 'app', 'mesh.sources': path }, env })
      .ledger([{ id: 'app.server', type: 'container', target: 'app', sources: [path] }])
      .build();
  const before = at('2026-09-21T00:00:00Z', 'FEATURE=on\nPLAIN=p\n', { FEATURE: 'on', PLAIN: 'p' });
  const now = at('2026-09-22T00:00:00Z', 'PLAIN=p\n', { FEATURE: 'on', PLAIN: 'p' });
  const dropped = (e: ReturnType<typeof auditSnapshot>) =>
    e.findings.filter((f) => f.ruleId === 'MA1004').map((f) => f.message);
  const full = dropped(auditSnapshot(now, [before], rules));
  assert.is(full.length, 1);
  assert.match(full[0]!, 'an earlier snapshot of the file named it');
  assert.equal(dropped(auditSnapshot(now, throughIndex([before]), rules)), full);
});

/** The findings a user would compare night to night. */
const findingsOf = (run: ReturnType<LiveHost['scan']>) =>
  run.report.findings.map((f) => `${f.ruleId} ${f.fingerprint} ${(f as { message?: string }).message ?? ''}`).sort();
const historyLine = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('mesh-audit: history '));

test('with 30 kept snapshots a scan parses none of them; an index deleted or damaged is rebuilt, same findings', () => {
  const host = new LiveHost();
  const HOSTNAME = 'kept-thirty';
  const old = host.write(host.path('app', 'old.ini'), 'x=1\n');
  const moved = host.write(host.path('app', 'new.ini'), 'x=2\n');
  host.ledger([{ id: 'app.ini', type: 'file', origin: 'declared', target: old }]);
  // No engine: the ledger and the files are still read, and the history kept (the run is incomplete, exit 3).
  const scan = () => host.scan('unix:///nonexistent/docker.sock', HOSTNAME, ['--keep', '30', '--verbose']);
  assert.is(scan().code, 3);
  // 28 more nights kept as the scanner keeps them (run numbers in the names; each its own time).
  const dir = historyDirOf(host.out, HOSTNAME);
  const [first] = readdirSync(dir).filter((n) => n.endsWith('.json'));
  const text = readFileSync(join(dir, first!), 'utf8');
  const takenAt = /"takenAt": ?"([^"]+)"/.exec(text)![1]!;
  for (let night = 2; night <= 29; night++) {
    const time = new Date(Date.parse(takenAt) + night).toISOString();
    writeFileSync(
      join(dir, `snapshot-${String(night).padStart(6, '0')}-${time.replace(/[-:.]/g, '')}.json`),
      text.replace(takenAt, time),
    );
  }
  // The ledger moves the id: its former target, still on the host, is remembered (097).
  host.ledger([{ id: 'app.ini', type: 'file', origin: 'declared', target: moved }]);
  const catchUp = scan();
  assert.match(
    historyLine(catchUp.stderr) ?? '',
    /29 snapshots, 1 known from its index, 28 parsed \(28 not in the index\)/,
  );

  const indexed = scan();
  assert.match(historyLine(indexed.stderr) ?? '', /: 30 snapshots, 30 known from its index, 0 parsed$/);
  assert.equal(readdirSync(dir).filter((n) => n.endsWith('.json')).length, 30, '--keep 30');
  assert.ok(
    indexed.report.findings.some((f) => f.subject.id === old),
    `the former target is known: ${findingsOf(indexed).join('\n')}`,
  );

  unlinkSync(join(dir, HISTORY_INDEX_FILE));
  const rebuilt = scan();
  assert.match(
    historyLine(rebuilt.stderr) ?? '',
    /30 snapshots, 0 known from its index, 30 parsed \(30 no index to use: there is none\)/,
  );
  assert.equal(findingsOf(rebuilt), findingsOf(indexed));
  assert.match(historyLine(scan().stderr) ?? '', /30 known from its index, 0 parsed$/, 'written again');

  writeFileSync(join(dir, HISTORY_INDEX_FILE), '{"schema": "mesh-audit/history-index@1", "tool"');
  const repaired = scan();
  assert.match(historyLine(repaired.stderr) ?? '', /30 parsed \(30 no index to use: it is not JSON\)/);
  assert.equal(findingsOf(repaired), findingsOf(indexed));

  // A snapshot changed after it was indexed is read from the file, not from the index.
  const newest = join(
    dir,
    readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort()
      .at(-1)!,
  );
  writeFileSync(newest, readFileSync(newest, 'utf8') + ' \n');
  const changed = scan();
  assert.match(
    historyLine(changed.stderr) ?? '',
    /29 known from its index, 1 parsed \(1 changed since it was indexed\)/,
  );
  assert.equal(findingsOf(changed), findingsOf(indexed));
});

test('evaluate --history on a scan output folder reads the index there, and writes nothing into it', async () => {
  const host = new LiveHost();
  host.ledger([]);
  for (let i = 0; i < 3; i++) host.scan('unix:///nonexistent/docker.sock', 'eval-host', ['--keep', '5']);
  const before = readFileSync(join(historyDirOf(host.out, 'eval-host'), HISTORY_INDEX_FILE), 'utf8');
  const lines: string[] = [];
  const history = await loadHistory(
    host.out,
    historyReading((l) => lines.push(l)),
  );
  assert.is(history.snapshots.length, 3);
  assert.match(lines.join('\n'), /3 snapshots, 3 known from its index, 0 parsed$/);
  const evaluated = spawnCli([
    'evaluate',
    example('clean', 'snapshot.json'),
    '--history',
    host.out,
    '--out',
    '-',
    '--format',
    'json',
    '--verbose',
  ]);
  assert.match(evaluated.stderr, /history .*eval-host: 3 snapshots, 3 known from its index, 0 parsed/);
  assert.is(readFileSync(join(historyDirOf(host.out, 'eval-host'), HISTORY_INDEX_FILE), 'utf8'), before);

  // The newest snapshot is checked by its digest: an index that names it with another one is not used for it.
  const index = JSON.parse(before) as { newest: { sha256: string } };
  index.newest.sha256 = '0'.repeat(64);
  writeFileSync(join(historyDirOf(host.out, 'eval-host'), HISTORY_INDEX_FILE), JSON.stringify(index));
  lines.length = 0;
  await loadHistory(
    host.out,
    historyReading((l) => lines.push(l)),
  );
  assert.match(
    lines.join('\n'),
    /2 known from its index, 1 parsed \(1 the newest, and not the one the index names by its digest\)/,
  );
});

test.run();
