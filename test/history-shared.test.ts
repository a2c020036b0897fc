import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formerTargets, pastOf, withMemory } from '../src/facts/history.js';
import { auditSnapshot } from '../src/pipeline.js';
import { loadPolicies } from '../src/policy/load.js';
import { decodeHistoryIndex, encodeHistoryIndex, HISTORY_INDEX_SCHEMA } from '../src/snapshot/history-index.js';
import type { Snapshot } from '../src/snapshot/types.js';
import { TOOL_VERSION } from '../src/version.js';
import { HostModel } from './support/host-model.js';

/*
 * Issue 32: the history's index writes once what several nights share (an unchanged ledger, the same env
 * files, the same memory) and reads it back as one shared list, which the facts follow once
 * (src/facts/history.ts). Following a shared list once must give what following every night gives:
 * moves there and back, a night whose ledger was not read, a key only older nights' env file named.
 */

const rules = (await loadPolicies()).flatMap((p) => p.rules);
const path = '/etc/mesh/app/app.env';

/** One night: the ledger claims `target` for app.server (null: ledger not read); the env file as given. */
function night(day: number, target: string | null, envFile: string): Snapshot {
  const model = new HostModel('n1', `2026-09-${String(day).padStart(2, '0')}T00:00:00Z`)
    .file(path, envFile)
    .container({ name: 'app-a', labels: { 'mesh.module': 'app', 'mesh.sources': path }, env: { FEATURE: 'on' } })
    .container({ name: 'app-b', labels: { 'mesh.module': 'app', 'mesh.sources': path }, env: { FEATURE: 'on' } });
  return (
    target === null
      ? model.ledgerUnavailable('ledger: EACCES')
      : model.ledger([{ id: 'app.server', type: 'container', target, sources: [path] }])
  ).build();
}

/** Nights as the scanner keeps them: each carries its memory, worked out against the nights before it. */
function nights(plan: readonly [string | null, string][]): Snapshot[] {
  const kept: Snapshot[] = [];
  plan.forEach(([target, envFile], i) => kept.push(withMemory(night(i + 1, target, envFile), kept)));
  return kept;
}

function throughIndex(history: readonly Snapshot[]) {
  const text = encodeHistoryIndex(
    history.map((s, i) => ({ file: `snapshot-${i}.json`, size: 1, mtimeMs: 1, past: pastOf(s) })),
    { file: `snapshot-${history.length - 1}.json`, sha256: '0'.repeat(64) },
    TOOL_VERSION,
  );
  const index = decodeHistoryIndex(text, 'index', TOOL_VERSION);
  if (!index.usable) throw new Error(index.reason);
  return { text, past: [...index.snapshots.values()].map((e) => e.past) };
}

const withoutTiming = (e: ReturnType<typeof auditSnapshot>) => ({ ...e, durationMs: 0 });

test('nights that share their lists in the index give the findings and memory every night gives', () => {
  const named = 'FEATURE=on\nPLAIN=p\n';
  const dropped = 'PLAIN=p\n';
  const history = nights([
    ['app-a', named],
    ['app-a', named],
    ['app-a', named],
    [null, dropped],
    ['app-a', dropped],
    ['app-b', dropped],
    ['app-b', dropped],
    ['app-a', dropped],
    ['app-a', dropped],
    ['app-b', dropped],
  ]);
  const current = night(20, 'app-b', dropped);
  const { text, past } = throughIndex(history);
  const written = JSON.parse(text) as { ledgerLists: unknown[]; envFileLists: unknown[]; snapshots: unknown[] };
  assert.is(written.snapshots.length, 10);
  assert.is(written.ledgerLists.length, 3, 'app-a, app-b and the night the ledger was not read: each written once');
  assert.is(written.envFileLists.length, 2, 'the env file before and after FEATURE was dropped');
  // The same lists read back as one object: what the facts follow once.
  assert.ok(past[0]!.ledger.entries === past[2]!.ledger.entries);
  assert.ok(past[4]!.ledger.entries === past[7]!.ledger.entries);

  const remembered = formerTargets(current, history);
  assert.equal(
    remembered.map((f) => [f.target, f.last_seen, f.changed_at]),
    [['app-a', '2026-09-09T00:00:00Z', '2026-09-06T00:00:00Z']],
  );
  assert.equal(formerTargets(current, past), remembered);
  assert.equal(withMemory(current, past).memory, withMemory(current, history).memory);

  const full = withoutTiming(auditSnapshot(current, history, rules));
  const evidence = full.findings.filter((f) => f.ruleId === 'MA1004').map((f) => f.message);
  assert.ok(
    evidence.some((m) => m.includes('an earlier snapshot of the file named it')),
    `MA1004 from the nights before FEATURE was dropped: ${evidence.join('\n')}`,
  );
  assert.equal(withoutTiming(auditSnapshot(current, past, rules)), full);
});

test("an index in another layout (an older mesh-audit's) is not used, and says which it is", () => {
  const index = decodeHistoryIndex(
    JSON.stringify({ schema: 'mesh-audit/history-index@1', tool: TOOL_VERSION, snapshots: [] }),
    'index',
    TOOL_VERSION,
  );
  assert.equal(index, {
    usable: false,
    reason: `it is a mesh-audit/history-index@1, this mesh-audit reads ${HISTORY_INDEX_SCHEMA}`,
  });
});

test.run();
