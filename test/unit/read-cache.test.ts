import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, renameSync, utimesSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changeOf, eventLines, type EngineChange } from '../../src/collect/engine-events.js';
import { composeFacts } from '../../src/collect/compose-file.js';
import { ComposePool } from '../../src/collect/compose-pool.js';
import { ComposeStart } from '../../src/collect/compose-start.js';
import type { ContainerSummary } from '../../src/collect/docker-api.js';
import { collectDocker } from '../../src/collect/docker.js';
import { NOT_RUNNING } from '../../src/collect/proc.js';
import { resolveEndpoint } from '../../src/collect/docker-endpoint.js';
import { collectFiles } from '../../src/collect/files.js';
import { ReadCache } from '../../src/collect/read-cache.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { createSafeValueMaker } from '../../src/secret/value.js';
import type { Container, FileRecord } from '../../src/snapshot/types.js';
import { fakeEngine, type InspectBehaviour } from '../support/fake-engine.js';

/*
 * What serve keeps from one read for the next (src/collect/read-cache.ts): an object is taken again only when nothing
 * said it changed, a read under way never keeps what an event made stale, and the engine's event lines are read
 * for what they name, bounded.
 */

const ID = 'a'.repeat(64);
/** The ids of the fake engine's list (test/fixtures/inspect/containers-list.json): stopped, host-httpd, env-file. */
const listedIds = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'inspect', 'containers-list.json'), 'utf8')) as {
    Id: string;
  }[]
).map((c) => c.Id);
const entry = (name: string) => ({
  inspect: { Id: ID, Name: `/${name}`, State: { Status: 'running' } } as never,
  container: { name } as Container,
  attachment: { networks: [], volumes: [] },
});

test('a container is taken again until an event names it; a read that began before the event keeps nothing of it', () => {
  const cache = new ReadCache();
  const first = cache.begin();
  cache.keepContainer(first, ID, entry('web'));
  cache.begin();
  assert.is(cache.container(ID, 'running')?.container.name, 'web');
  const during = cache.begin();
  cache.forgetContainer(ID);
  assert.is(cache.container(ID, 'running'), undefined, 'forgotten');
  cache.keepContainer(during, ID, entry('web-read-before-the-event'));
  assert.is(cache.container(ID, 'running'), undefined, 'what a read began before the event saw is not kept');
  const after = cache.begin();
  cache.keepContainer(after, ID, entry('web-again'));
  assert.is(cache.container(ID, 'running')?.container.name, 'web-again');
  assert.is(cache.container(ID, 'exited'), undefined, 'listed in another state than its inspect said: read again');
});

test('renew drops everything and makes a new key; forgetEngine drops the engine only', () => {
  const cache = new ReadCache();
  const key = Buffer.from(cache.key);
  const t = cache.begin();
  cache.keepContainer(t, ID, entry('web'));
  cache.keepFile(t, '/etc/app.env', 'stamp', { path: '/etc/app.env', kind: 'file' });
  cache.forgetEngine();
  assert.is(cache.container(ID, 'running'), undefined);
  assert.ok(cache.file('/etc/app.env', 'stamp'), 'files are not the engine');
  cache.renew();
  assert.is(cache.file('/etc/app.env', 'stamp'), undefined);
  assert.not.equal(cache.key, key, 'a whole read digests under a new key');
});

/** collectDocker reads of `engine` through one cache (each under a new ticket unless given), and how often a path was asked. */
function cachedReads(engine: { dockerHost: string; requests: string[] }) {
  const cache = new ReadCache();
  const read = (ticket = cache.begin()) =>
    collectDocker({
      endpoint: resolveEndpoint(engine.dockerHost),
      safe: createSafeValueMaker(cache.key),
      cache: { store: cache, ticket },
    });
  const asked = (what: string) => engine.requests.filter((r) => r.split('?')[0]!.endsWith(what)).length;
  return { cache, read, asked };
}

test('a read after the first only pings the engine: its /version is kept until the engine is forgotten', async () => {
  // Podman answers /version by running dpkg, runc and conmon: 1.3 to 2 s of every read on a loaded machine.
  const engine = await fakeEngine({});
  const { cache, read, asked } = cachedReads(engine);
  try {
    const first = await read();
    assert.is(asked('/version'), 1);
    const second = await read();
    assert.is(asked('/version'), 1, 'not asked again');
    assert.is(asked('/_ping'), 2, 'the engine is still pinged at each read');
    assert.equal(second.docker, first.docker, 'the engine as the first read had it');
    cache.forgetEngine();
    await read();
    assert.is(asked('/version'), 2, 'the engine forgotten (an event not understood, the daemon reloaded): asked again');
    cache.renew();
    await read();
    assert.is(asked('/version'), 3, 'the events stream cut or resynced: asked again');
    const during = cache.begin();
    cache.forgetEngine();
    await read(during);
    await read();
    assert.is(asked('/version'), 5, 'what a read began before the engine was forgotten is not kept');
  } finally {
    await engine.close();
  }
});

test("an image gone between two reads: its containers' env from it is unknown, not the earlier read's", async () => {
  const engine = await fakeEngine({});
  const { cache, read } = cachedReads(engine);
  try {
    const first = await read();
    const using = first.containers.filter((c) => c.imageId !== undefined);
    assert.ok(using.length > 0);
    for (const c of using) assert.ok(c.imageEnv !== undefined, `${c.name}: its image's env, read`);
    // `docker rmi -f` of an image only stopped containers use: an image event, and the containers stay.
    engine.setImageBehaviour('gone');
    cache.forgetImages();
    const second = await read();
    assert.equal(
      second.containers.map((c) => c.name),
      first.containers.map((c) => c.name),
    );
    for (const c of second.containers) assert.not.ok('imageEnv' in c, `${c.name}: imageEnv absent (unknown)`);
    assert.ok(second.notes.some((n) => n.message.includes('is gone from the engine')));
    for (const c of using) assert.ok(c.imageEnv !== undefined, 'what the first read gave is not changed under it');
    engine.setImageBehaviour('ok');
    cache.forgetImages();
    const third = await read();
    for (const c of third.containers.filter((c) => c.imageId !== undefined))
      assert.ok(c.imageEnv !== undefined, `${c.name}: the image is back, and so is its env`);
  } finally {
    await engine.close();
  }
});

test('a container not running, kept: its record taken again without its /proc asked for, until an event names it', async () => {
  const engine = await fakeEngine({});
  const cache = new ReadCache();
  const procAsked: string[] = [];
  const read = () =>
    collectDocker({
      endpoint: resolveEndpoint(engine.dockerHost),
      safe: createSafeValueMaker(cache.key),
      cache: { store: cache, ticket: cache.begin() },
      // As the /proc reader answers (src/collect/proc.ts): a container not running has no view to read.
      readProc: (inspect) => {
        procAsked.push(inspect.Name.replace(/^\//, ''));
        return Promise.resolve(
          inspect.State?.Running
            ? { available: false, reason: 'its /proc not read: a test' }
            : { available: false, reason: NOT_RUNNING },
        );
      },
    });
  try {
    const first = await read();
    const stopped = first.containers.find((c) => !c.proc.available && c.proc.reason === NOT_RUNNING);
    assert.ok(stopped, 'the fake engine lists a container that is not running');
    assert.ok(procAsked.includes(stopped.name), 'asked at the first read');
    procAsked.length = 0;
    const second = await read();
    assert.not.ok(procAsked.includes(stopped.name), 'not asked again');
    assert.ok(procAsked.length > 0, 'the running ones are: their /proc was not kept');
    assert.is(
      second.containers.find((c) => c.name === stopped.name),
      stopped,
      'the same record, so that what compares reads knows it unchanged by identity',
    );
    // Started, or anything else an event says of it: inspected again, and its /proc asked for again.
    cache.forgetContainer(stopped.id);
    procAsked.length = 0;
    const third = await read();
    assert.ok(procAsked.includes(stopped.name), 'named by an event: asked again');
    assert.is.not(
      third.containers.find((c) => c.name === stopped.name),
      stopped,
    );
  } finally {
    await engine.close();
  }
});

test('the image list and /info are kept until an image event, or one that forgets the engine', async () => {
  const engine = await fakeEngine({});
  const { cache, read, asked } = cachedReads(engine);
  try {
    const first = await read();
    const second = await read();
    assert.equal([asked('/images/json'), asked('/info')], [1, 1], 'not asked again');
    assert.equal(second.images, first.images, 'the images as the first read had them');
    assert.equal(second.daemonInfo, first.daemonInfo, "the daemon's settings as the first read had them");
    cache.forgetContainer(ID);
    await read();
    assert.equal([asked('/images/json'), asked('/info')], [1, 1], "a container's event moves neither");
    cache.forgetImages();
    await read();
    assert.equal([asked('/images/json'), asked('/info')], [2, 1], 'an image event: the list asked again');
    cache.forgetEngine();
    await read();
    assert.equal([asked('/images/json'), asked('/info')], [3, 2], 'the engine forgotten (a reload): both asked again');
    const during = cache.begin();
    cache.forgetImages();
    await read(during);
    await read();
    assert.is(asked('/images/json'), 5, 'a list a read began before an image event asked for is not kept');
  } finally {
    await engine.close();
  }
});

test('a file is read again when its lstat changes, even with the same size and modification time', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ma-read-cache-'));
  const file = join(dir, 'app.env');
  writeFileSync(file, 'TOKEN=aaaa\n');
  const cache = new ReadCache();
  const read = async () => {
    const files = await collectFiles({
      root: '/',
      paths: [],
      envPaths: [file],
      managedRoots: [],
      safe: createSafeValueMaker(cache.key),
      cache: { store: cache, ticket: cache.begin() },
    });
    return files.files.find((f) => f.path === file) as FileRecord;
  };
  const first = await read();
  assert.is(cache.use().filesRead, 1);
  const second = await read();
  assert.equal(cache.use(), { ...cache.use(), filesReused: 1, filesRead: 0 }, 'unchanged: taken again');
  assert.is(second, first);
  assert.not.ok(cache.wasWhole(), 'a read that took a file again is not whole');
  // Same length, same mtime put back: only the change time (and the inode, by rename) tells.
  const { mtime } = statSync(file);
  writeFileSync(join(dir, 'next'), 'TOKEN=bbbb\n');
  renameSync(join(dir, 'next'), file);
  utimesSync(file, mtime, mtime);
  const third = await read();
  assert.is(cache.use().filesRead, 1, 'changed: read again');
  assert.not.equal(third.env?.[0]?.value?.digest, first.env?.[0]?.value?.digest);
  // In place, same length and mtime put back: the change time still moves.
  writeFileSync(file, 'TOKEN=cccc\n');
  utimesSync(file, mtime, mtime);
  const fourth = await read();
  assert.is(cache.use().filesRead, 1, 'written in place: read again');
  assert.not.equal(fourth.env?.[0]?.value?.digest, third.env?.[0]?.value?.digest);
});

/** A Compose reader that counts the files it is asked to read. */
function countingPool(): { pool: ComposePool; parsed: () => number } {
  let parsed = 0;
  const pool = Object.assign(Object.create(ComposePool.prototype) as ComposePool, {
    facts: (content: Uint8Array) => {
      parsed++;
      return Promise.resolve(composeFacts(content));
    },
    close: () => Promise.resolve(),
  });
  return { pool, parsed: () => parsed };
}

test("a Compose file's facts are taken again while its lstat is the same; rewritten, or read as another kind, it is parsed again", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ma-read-cache-compose-'));
  const app = join(dir, 'app.yml');
  const base = join(dir, 'base.yml');
  writeFileSync(app, `services:\n  web:\n    extends: { service: base, file: base.yml }\n    environment: [A=1]\n`);
  writeFileSync(base, 'services:\n  base:\n    environment: { B: 2 }\n');
  const cache = new ReadCache();
  const counting = countingPool();
  const read = async (paths: string[] = []) => {
    const { files } = await collectFiles({
      root: '/',
      paths,
      envPaths: [],
      composePaths: [app],
      managedRoots: [],
      safe: createSafeValueMaker(cache.key),
      compose: counting.pool,
      cache: { store: cache, ticket: cache.begin() },
    });
    return new Map(files.map((f) => [f.path, f]));
  };
  const first = await read();
  assert.is(counting.parsed(), 2, 'the file and the one it extends, parsed');
  assert.equal(first.get(base)?.compose, { services: { base: { environment: ['B'] } } });
  const second = await read();
  assert.is(counting.parsed(), 2, 'unchanged: neither parsed again');
  assert.is(second.get(app), first.get(app), 'the same record, its facts in it');
  assert.equal(second.get(base)?.compose, first.get(base)?.compose, 'the file it extends still followed');
  assert.equal(cache.use(), { ...cache.use(), filesReused: 2, filesRead: 0 });
  writeFileSync(base, 'services:\n  base:\n    environment: { C: 3 }\n');
  const third = await read();
  assert.is(counting.parsed(), 3, 'rewritten: that file parsed again, the other not');
  assert.equal(third.get(base)?.compose, { services: { base: { environment: ['C'] } } });
  // Named as a plain file too: a record read as a plain file is not the Compose file's.
  cache.renew();
  const plainFirst = await collectFiles({
    root: '/',
    paths: [base],
    envPaths: [],
    managedRoots: [],
    safe: createSafeValueMaker(cache.key),
    compose: counting.pool,
    cache: { store: cache, ticket: cache.begin() },
  });
  assert.is(plainFirst.files[0]?.compose, undefined);
  const asCompose = await read([base]);
  assert.equal(asCompose.get(base)?.compose, { services: { base: { environment: ['C'] } } }, 'read as a Compose file');
});

test("serve's Compose reader is the cache's: made once, kept across reads, closed with the cache", async () => {
  const cache = new ReadCache();
  const summaries = Array.from({ length: 20 }, (_, i) => ({
    Id: String(i),
    Names: [`/c${i}`],
    Labels: {
      'com.docker.compose.service': 'web',
      'com.docker.compose.project.config_files': `/srv/c${i}/compose.yml`,
    },
  })) as unknown as ContainerSummary[];
  const first = new ComposeStart(undefined, cache);
  first.listed(summaries);
  await first.close();
  const second = new ComposeStart(undefined, cache);
  second.listed(summaries);
  assert.ok(first.pool !== undefined && first.pool === second.pool, 'one reader for both reads');
  await cache.close();
  const third = new ComposeStart(undefined, cache);
  third.listed(summaries);
  assert.ok(third.pool !== second.pool, 'closed with the cache: the next read makes another');
  await cache.close();
});

test('the network and volume lists are kept until a network or volume event, or one that forgets the engine', async () => {
  const engine = await fakeEngine({});
  const { cache, read, asked } = cachedReads(engine);
  const lists = () => [asked('/networks'), asked('/volumes')];
  try {
    const first = await read();
    const second = await read();
    assert.equal(lists(), [1, 1], 'not asked again');
    assert.equal([second.networks, second.volumes], [first.networks, first.volumes], 'as the first read had them');
    // The very records (no label digested again), so that the subjects made of them are taken whole.
    assert.ok(second.networks!.length > 0 && second.networks!.every((n, i) => n === first.networks![i]));
    cache.forgetContainer(ID);
    cache.forgetImages();
    const third = await read();
    assert.equal(lists(), [1, 1], "a container's event (its connect, its disconnect) or an image's moves neither");
    assert.ok(
      third.networks!.every((n, i) => n === first.networks![i]),
      'used by the same containers: the same',
    );
    cache.forgetListed();
    const fourth = await read();
    assert.equal(lists(), [2, 2], 'a network or a volume made or removed: both asked again');
    assert.equal(fourth.networks, first.networks);
    assert.ok(fourth.networks![0] !== first.networks![0], 'records made of the list asked again');
    cache.forgetEngine();
    await read();
    assert.equal(lists(), [3, 3], 'the engine forgotten: asked again');
    const during = cache.begin();
    cache.forgetListed();
    await read(during);
    await read();
    assert.equal(lists(), [5, 5], 'lists a read began before a network event asked for are not kept');
  } finally {
    await engine.close();
  }
});

test("while the engine's events are heard, the container list is the last read's, each container an event named inspected again", async () => {
  const behaviour: Record<string, InspectBehaviour> = {};
  const engine = await fakeEngine(behaviour);
  const { cache, read, asked } = cachedReads(engine);
  const names = (c: { containers: Container[] }) => c.containers.map((x) => x.name);
  const stopped = listedIds[0]!;
  const httpd = listedIds[1]!;
  try {
    const all = names(await read());
    await read();
    assert.is(asked('/containers/json'), 2, 'events not heard: the list is asked for at each read');
    cache.eventsHeard();
    await read();
    const inspects = asked(`/containers/${httpd}/json`);
    assert.equal(names(await read()), all, 'the same containers');
    assert.is(asked('/containers/json'), 3, 'heard: the list asked once more (the first read since), then not');

    cache.forgetContainer(httpd);
    assert.equal(names(await read()), all);
    assert.equal([asked('/containers/json'), asked(`/containers/${httpd}/json`)], [3, inspects + 1], 'inspected');
    await read();
    assert.is(asked(`/containers/${httpd}/json`), inspects + 1, 'once: the event is answered');

    behaviour['ma-fixture-stopped'] = 'gone';
    cache.forgetContainer(stopped);
    cache.forgetContainer('f'.repeat(64));
    const gone = await read();
    assert.equal(
      names(gone),
      all.filter((n) => n !== 'ma-fixture-stopped'),
      'removed: no longer listed',
    );
    assert.equal([gone.problems, gone.notes], [[], []], 'a container removed is no problem and no note');
    assert.is(asked('/containers/json'), 3, 'still not listed');
    cache.forgetContainer('f'.repeat(64));
    behaviour['ma-fixture-host-httpd'] = 'error';
    cache.forgetContainer(httpd);
    const refused = await read();
    assert.match(refused.problems.map((p) => p.message).join('\n'), /cannot inspect container 95c47aaad3d4/);
    behaviour['ma-fixture-host-httpd'] = 'ok';
    await read();
    assert.is(asked('/containers/json'), 4, 'a container that could not be inspected: the next read lists again');
    await read();
    assert.is(asked('/containers/json'), 4);

    cache.eventsLost();
    await read();
    await read();
    assert.is(asked('/containers/json'), 6, 'the events lost: the list is asked for at each read');
    cache.eventsHeard();
    const during = cache.begin();
    cache.eventsLost();
    cache.eventsHeard();
    await read(during);
    await read();
    assert.is(asked('/containers/json'), 8, 'a list a read began before the events were heard again is not kept');
  } finally {
    await engine.close();
  }
});

test('event lines: a container event names its id; images, others and anything not understood are told apart', () => {
  const told: EngineChange[] = [];
  const feed = eventLines((c) => told.push(c), 200);
  const event = JSON.stringify({ Type: 'container', Action: 'start', Actor: { ID, Attributes: { name: 'w' } } });
  // Cut mid-line, and mid-character (é is two bytes).
  const bytes = Buffer.from(`${event}\n{"Type":"image","Action":"tag","Actor":{"ID":"sha256:é"}}\n`);
  feed(bytes.subarray(0, 30));
  feed(bytes.subarray(30, event.length + 40));
  feed(bytes.subarray(event.length + 40));
  assert.equal(told, [{ type: 'container', id: ID, going: 'up' }, { type: 'image' }], 'a start: the container is up');
  told.length = 0;
  feed('x'.repeat(150));
  feed(`${'y'.repeat(150)}\n`);
  feed('{"Type":"network","Action":"connect","Actor":{"ID":"n"}}\nnot json\n');
  feed('{"Type":"container","Actor":{"ID":"../x"}}\n{"Type":"daemon","Action":"reload"}\n');
  assert.equal(
    told,
    [{ type: 'engine' }, { type: 'engine' }, { type: 'engine' }, { type: 'engine' }, { type: 'engine' }],
    'an overlong line, a connect naming no container, a broken line, an id that is not one, the daemon: unnamed',
  );
  told.length = 0;
  feed(`{"Type":"network","Action":"disconnect","Actor":{"ID":"n","Attributes":{"container":"${ID}"}}}\n`);
  feed('{"Type":"network","Action":"create","Actor":{"ID":"n"}}\n{"Type":"volume","Action":"destroy"}\n');
  assert.equal(
    told,
    [{ type: 'container', id: ID }, { type: 'listed' }, { type: 'listed' }],
    'a container disconnected is that container; networks and volumes made or removed are listed again anyway',
  );
  assert.equal(changeOf('null'), { type: 'engine' });
  const action = (a: string) => changeOf(JSON.stringify({ Type: 'container', Action: a, Actor: { ID } }));
  assert.equal(
    ['die', 'stop', 'destroy', 'health_status', 'hasOwnProperty'].map(action),
    [
      { type: 'container', id: ID, going: 'down' },
      { type: 'container', id: ID, going: 'down' },
      { type: 'container', id: ID, going: 'up' },
      { type: 'container', id: ID },
      { type: 'container', id: ID },
    ],
    'died or stopped: going down (a start may follow); destroyed: gone for good; other actions say nothing of it',
  );
});

test("Podman's events of `rm -f` (recorded from Podman 4.3's compatible API) each name the container", () => {
  // Its actions are its own (remove, not destroy): the container's id is what is read, whatever the action.
  const podman = (action: string) =>
    JSON.stringify({
      status: action,
      id: ID,
      from: 'localhost/mesh-audit-fixture:1',
      Type: 'container',
      Action: action,
      Actor: { ID, Attributes: { containerExitCode: '0', image: 'localhost/mesh-audit-fixture:1', name: 'app' } },
      scope: 'local',
      time: 1796627699,
    });
  const told: EngineChange[] = [];
  eventLines((c) => told.push(c))(['stop', 'die', 'remove'].map((a) => `${podman(a)}\n`).join(''));
  assert.equal(told, [
    { type: 'container', id: ID, going: 'down' },
    { type: 'container', id: ID, going: 'down' },
    { type: 'container', id: ID, going: 'up' },
  ]);
});

test.run();
