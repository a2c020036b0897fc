import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_SETTINGS } from '../../src/config.js';
import { collectIsolated, type CollectContext, type Collector, type Slice } from '../../src/collect/contract.js';
import { daemonCollector } from '../../src/collect/daemon.js';
import { engineCollector } from '../../src/collect/docker.js';
import { resolveEndpoint } from '../../src/collect/docker-endpoint.js';
import { filesCollector } from '../../src/collect/files-collector.js';
import { listenersCollector } from '../../src/collect/host-listeners.js';
import { ledgerCollector } from '../../src/collect/ledger.js';
import { procCollector } from '../../src/collect/proc-reader.js';
import { createSafeValueMaker } from '../../src/secret/value.js';

/*
 * The collector contract (src/collect/contract.ts): a collector that throws gives its unread slice — every fact it
 * reads unknown, never empty, and a problem naming its source with the error's kind (never its text) — so the scan
 * goes on and is incomplete. Held for every collector src/scan.ts composes.
 */

const CANARY = 'CANARY-contract-7a41';

const context: CollectContext = {
  settings: { ...DEFAULT_SETTINGS, ledger: '/ledger.json', managedRoots: ['/srv/mesh'] },
  scope: undefined,
  endpoint: resolveEndpoint('unix:///nonexistent/docker.sock', {}),
  safe: createSafeValueMaker(Buffer.alloc(32, 7)),
  progress: () => undefined,
};
const ledger = {
  path: '/ledger.json',
  available: true,
  entries: [{ line: 1, valid: true, errors: [], entry: { id: 'a', type: 'file', target: '/etc/a.conf' } }],
};

/** The collector, its collect throwing as a defect would: with a message quoting what it read. */
function throwing<C extends CollectContext, P>(collector: Collector<C, P>): Collector<C, P> {
  return {
    ...collector,
    collect: () => {
      throw new TypeError(`cannot read ${CANARY}`);
    },
  };
}

async function unreadSlice<C extends CollectContext, P>(collector: Collector<C, P>, extra: C): Promise<Slice<P>> {
  const slice = await collectIsolated(throwing(collector), extra);
  assert.not.match(JSON.stringify(slice), CANARY);
  assert.ok(slice.problems.length > 0, 'a problem says the source was not read');
  for (const p of slice.problems) assert.match(p.message, 'its reader failed unexpectedly (TypeError)');
  return slice;
}

test('each collector that throws gives its source as not read, with a problem naming it, never as empty', async () => {
  const ledgerSlice = await unreadSlice(ledgerCollector, context);
  assert.is(ledgerSlice.part.available, false);
  assert.equal(
    ledgerSlice.problems.map((p) => p.source),
    ['ledger'],
  );

  const proc = await unreadSlice(procCollector, context);
  assert.ok(proc.part.reason !== null && proc.part.reader === undefined, 'no container /proc is read');
  assert.equal(
    proc.problems.map((p) => p.source),
    ['proc'],
  );

  const engine = await unreadSlice(engineCollector, { ...context, proc: { reason: 'x' } });
  assert.is(engine.part.docker, null);
  assert.is(engine.part.images.available, false);
  assert.is(engine.part.daemonInfo.available, false);
  assert.equal([engine.part.networks, engine.part.volumes], [null, null]);
  assert.equal(
    engine.problems.map((p) => p.source),
    ['docker'],
  );

  const listeners = await unreadSlice(listenersCollector, { ...context, procReason: null, ledger });
  assert.is(listeners.part.available, false);
  assert.equal(
    listeners.problems.map((p) => p.source),
    ['listeners'],
  );

  const daemon = await unreadSlice(daemonCollector, { ...context, procReason: null, engine: null });
  assert.equal([daemon.part.config.available, daemon.part.process.available], [false, false]);
  assert.equal(
    daemon.problems.map((p) => p.source),
    ['daemon'],
  );

  const files = await unreadSlice(filesCollector, {
    ...context,
    ledger,
    containers: [],
    earlier: [],
    compose: undefined,
  });
  // The ledger's files and the managed roots are there, unknown: none reads as missing.
  assert.equal(
    files.part.map((f) => [f.path, f.kind]),
    [
      ['/etc/a.conf', 'unknown'],
      ['/srv/mesh', 'unknown'],
    ],
  );
  assert.equal(
    files.problems.map((p) => p.source),
    ['files'],
  );
});

test('a collector that does not throw: its slice as it gave it', async () => {
  const slice = await collectIsolated(
    {
      collect: () => Promise.resolve({ part: 1, problems: [], notes: [] }),
      unread: () => ({ part: 0, problems: [{ source: 'files', message: 'unread' }], notes: [] }),
    },
    context,
  );
  assert.equal(slice, { part: 1, problems: [], notes: [] });
});

test.run();
