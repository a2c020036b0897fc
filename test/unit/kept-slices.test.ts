import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { pollListeners, type WatchChange } from '../../src/collect/host-watch.js';
import { descendantsOf, processSignature, processTreeOf, readProcessTable } from '../../src/collect/proc.js';
import { ReadCache, type KeptProc } from '../../src/collect/read-cache.js';
import type { Container } from '../../src/snapshot/types.js';
import { waitUntil } from '../support/wait.js';

/*
 * What serve keeps of one read for the next beyond the engine's objects (src/collect/read-cache.ts): the slices the
 * watches follow (ledger, files, daemon, the host's listeners), kept until a watch says their source changed, and each
 * running container's /proc, kept until an event names the container or the poll sees its processes or sockets move
 * (processSignature, src/collect/proc.ts). Real processes, not a made-up /proc.
 */

const ID = 'b'.repeat(64);
const HOST_ID = 'c'.repeat(64);
const entry = (name: string, networkMode = 'none', pid = 4242) => ({
  inspect: {
    Id: ID,
    Name: `/${name}`,
    State: { Status: 'running', Running: true, Pid: pid },
    HostConfig: { NetworkMode: networkMode },
  } as never,
  container: { name } as Container,
  attachment: { networks: [], volumes: [] },
});
const proc = (boundFiles: unknown[] = []): KeptProc => ({
  view: { available: true, env: {}, listening: [], boundFiles: boundFiles as never, processes: ['sleep'] },
  signature: 'sig',
});
const clean = { problems: [] as unknown[] };

test('a slice is taken again until a watch says one of its sources changed, or its key is another', () => {
  const cache = new ReadCache();
  const first = cache.begin();
  cache.keepSlice(first, 'ledger', 'k', ['files'], clean);
  cache.keepSlice(first, 'listeners', 'k', ['listeners', 'files'], clean);
  cache.begin();
  assert.is(cache.slice('ledger', 'k'), clean, 'nothing changed: the same slice');
  assert.is(cache.slice('ledger', 'another key'), undefined, 'read with something else: read again');
  cache.sourceChanged('listeners');
  assert.is(cache.slice('listeners', 'k'), undefined, 'the sockets moved: the listeners are read again');
  assert.is(cache.slice('ledger', 'k'), clean, 'the ledger does not come from the sockets');
  cache.sourceChanged('files');
  assert.is(cache.slice('ledger', 'k'), undefined, 'a watched folder changed: read again');
  assert.not.ok(cache.wasWhole(), 'a read that took slices again is not a whole read');
});

test('a slice with a problem is never kept; one read before a change is not kept either; renew drops them all', () => {
  const cache = new ReadCache();
  let t = cache.begin();
  cache.keepSlice(t, 'files', 'k', ['files'], { problems: [{ source: 'files', message: 'not read' }] });
  cache.begin();
  assert.is(cache.slice('files', 'k'), undefined, 'what could not be read is read again at every read');
  t = cache.begin();
  cache.sourceChanged('files'); // while the read was under way
  cache.keepSlice(t, 'files', 'k', ['files'], clean);
  assert.is(cache.slice('files', 'k'), undefined, 'read before the change: not kept');
  t = cache.begin();
  cache.keepSlice(t, 'daemon', 'k', ['daemon', 'files'], clean);
  cache.renew();
  assert.is(cache.slice('daemon', 'k'), undefined, 'a whole read reads everything');
});

test("a container's /proc is kept until an event names it, the poll sees it move, or a file bound into it changes", () => {
  const cache = new ReadCache();
  const t = cache.begin();
  cache.keepContainer(t, ID, entry('app'));
  cache.keepProc(t, ID, proc());
  cache.begin();
  assert.ok(cache.proc(ID), 'kept');
  assert.equal(cache.watchedProcesses(), [{ id: ID, pid: 4242, signature: 'sig' }], 'what the poll looks at');
  cache.forgetProc(ID);
  assert.is(cache.proc(ID), undefined, 'the poll saw it move: read again');
  assert.equal(cache.watchedProcesses(), []);

  const u = cache.begin();
  cache.keepProc(u, ID, proc([{ destination: '/etc/app.conf', source: '/srv/app.conf' }]));
  cache.begin();
  assert.ok(cache.proc(ID));
  cache.sourceChanged('files');
  assert.is(cache.proc(ID), undefined, 'a file changed: the file as the container sees it is read again');

  const v = cache.begin();
  cache.keepProc(v, ID, proc([{ destination: '/etc/app.conf', source: '/srv/app.conf', error: 'EACCES' }]));
  assert.is(cache.proc(ID), undefined, 'a bound file not read is tried again, never kept');
});

test("an event for a container that held one of the host's listeners, or one not known yet, reads them again", () => {
  const cache = new ReadCache();
  const SHARING_ID = 'e'.repeat(64);
  const HOLDER_ID = 'f'.repeat(64);
  const t = cache.begin();
  cache.keepSlice(t, 'listeners', 'k', ['listeners', 'files'], clean);
  cache.keepContainer(t, ID, entry('own-namespace'));
  cache.keepContainer(t, HOST_ID, entry('host-net', 'host'));
  cache.keepContainer(t, SHARING_ID, entry('beside-host-net', `container:${HOST_ID}`));
  cache.keepContainer(t, HOLDER_ID, entry('host-net-server', 'host'));
  const holder = { pid: 4243, name: 'httpd', exe: '/bin/httpd', containerId: HOLDER_ID };
  const view = { available: true as const, netns: 'net:[1]', sockets: [] };
  cache.keepHostListeners(
    t,
    { rows: 'r', holders: [{ pid: 4243, startTime: '1', holder: JSON.stringify(holder), inodes: [7] }], view },
    false,
  );
  cache.begin();
  cache.forgetContainer(ID);
  assert.is(cache.slice('listeners', 'k'), clean, 'its own network namespace: not the host sockets');
  cache.forgetContainer(HOST_ID);
  cache.forgetContainer(SHARING_ID);
  assert.is(cache.slice('listeners', 'k'), clean, "the host's network, but none of its listeners held there");
  cache.forgetContainer(HOST_ID);
  assert.is(
    cache.slice('listeners', 'k'),
    clean,
    'a second event for it (its inspect already dropped by the first): its network mode is still known',
  );
  cache.forgetContainer(HOLDER_ID);
  assert.is(cache.slice('listeners', 'k'), undefined, "it held one of the host's listeners: read again");

  const u = cache.begin();
  cache.keepSlice(u, 'listeners', 'k', ['listeners', 'files'], clean);
  cache.forgetContainer('d'.repeat(64));
  assert.is(cache.slice('listeners', 'k'), undefined, 'a container not seen yet may be on the host network');

  const v = cache.begin();
  cache.keepSlice(v, 'listeners', 'k', ['listeners', 'files'], clean);
  cache.keepHostListeners(v, undefined, false);
  cache.forgetContainer(HOST_ID);
  assert.is(cache.slice('listeners', 'k'), undefined, 'no holders kept: which are its is not known');
});

/**
 * A child that says `ready` once started, and opens a listening socket on loopback (and starts a child process of its
 * own) when told to on its stdin: what it does happens when the test says, whatever the machine's load.
 */
async function lateListener() {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `process.stdin.once('data', () => { require('net').createServer().listen(0, '127.0.0.1');
         require('child_process').spawn('sleep', ['30'], { stdio: 'ignore' }); });
       process.stdout.write('ready\\n');`,
    ],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve);
    child.once('exit', reject);
  });
  return { child, listen: () => child.stdin.write('go\n') };
}

/** A `sleep` started and exec'd (its name is sleep: before the exec it is its parent's). */
async function sleeper() {
  const quiet = spawn('sleep', ['30'], { stdio: 'ignore' });
  await waitUntil(
    'sleep runs',
    async () => ((await processSignature(quiet.pid!)) ?? '').includes(':sleep'),
    10_000,
    20,
  );
  return quiet;
}

test('the signature of a process tree moves when it opens a socket or starts a process; none once it is gone', async () => {
  const { child, listen } = await lateListener();
  try {
    const before = (await processSignature(child.pid!))!;
    assert.type(before, 'string');
    assert.is(await processSignature(child.pid!), before, 'nothing moved: the same signature');
    listen();
    await waitUntil('the signature moves', async () => (await processSignature(child.pid!)) !== before, 10_000, 50);
    await waitUntil(
      'its child is in the tree',
      async () => ((await processSignature(child.pid!)) ?? '').includes(':sleep'),
      10_000,
      50,
    );
    const after = (await processSignature(child.pid!))!;
    const fromTable = descendantsOf(await readProcessTable(), child.pid!);
    assert.equal(
      (await processTreeOf(child.pid!, '/proc', () => Promise.reject(new Error('the table is not needed')))).sort(),
      fromTable.sort(),
      'the tree from the children files is the process table’s',
    );
    const [processes, sockets] = after.split('|');
    assert.ok(processes!.split(' ').length >= 2, `the tree holds the child's child: ${processes}`);
    assert.ok(sockets!.length > 0, 'a socket is held');
  } finally {
    child.kill('SIGKILL');
  }
  await new Promise((r) => child.once('exit', r));
  assert.is(await processSignature(child.pid!), null, 'gone: no signature (its /proc is read again)');
});

test("a single-threaded process's children are in its signature, as the process table has them", async () => {
  // sh has one thread: its children are read from that thread's children file alone (its threads not listed).
  const shell = spawn('sh', ['-c', 'sleep 30 & sleep 30 & wait'], { stdio: 'ignore', detached: true });
  try {
    await waitUntil(
      'both sleeps run',
      async () => ((await processSignature(shell.pid!)) ?? '').split(':sleep').length === 3,
      10_000,
      20,
    );
    const [processes] = (await processSignature(shell.pid!))!.split('|');
    const pids = processes!.split(' ').map((p) => Number(p.split(':')[0]));
    assert.equal(pids.sort(), descendantsOf(await readProcessTable(), shell.pid!).sort());
    assert.is(pids.length, 3, processes);
  } finally {
    process.kill(-shell.pid!, 'SIGKILL'); // its sleeps with it
  }
});

test('the poll tells a container whose processes moved, and no other', async () => {
  const { child, listen } = await lateListener();
  const quiet = await sleeper();
  const changes: WatchChange[] = [];
  let poll: { stop(): void } | undefined;
  try {
    const watched = [
      { id: 'moving', pid: child.pid!, signature: (await processSignature(child.pid!))! },
      { id: 'quiet', pid: quiet.pid!, signature: (await processSignature(quiet.pid!))! },
    ];
    poll = pollListeners('/', 50, { changed: (c) => changes.push(c) }, () => watched);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(
      changes.filter((c) => c.type === 'processes'),
      [],
      'nothing moved yet: nothing told',
    );
    listen();
    await waitUntil('the poll tells the one that moved', () => changes.some((c) => c.type === 'processes'), 10_000, 20);
    const told = changes.flatMap((c) => (c.type === 'processes' ? [c.id] : []));
    assert.equal([...new Set(told)], ['moving'], 'only the container whose processes moved');
  } finally {
    poll?.stop();
    child.kill('SIGKILL');
    quiet.kill('SIGKILL');
  }
});

test.run();
