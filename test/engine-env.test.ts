import { createServer } from 'node:http';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { collectDocker } from '../src/collect/docker.js';
import { engineKindOf, type EngineVersion } from '../src/collect/docker-api.js';
import { resolveEndpoint } from '../src/collect/docker-endpoint.js';
import { engineAddedKeys } from '../src/engine/engine-env.js';
import { createSafeValueMaker } from '../src/secret/value.js';
import { auditSnapshot } from '../src/pipeline.js';
import { loadPolicies } from '../src/policy/load.js';
import { parseSnapshot } from '../src/snapshot/load.js';
import type { EngineKind, Snapshot } from '../src/snapshot/types.js';
import { HostModel } from './support/host-model.js';
import { tempDir } from './support/cli.js';

/*
 * MA1004 and the keys an engine writes into a container by itself (issue 30). A container made from an
 * image that sets no env (an imported or FROM scratch image), from an env file that never named PATH:
 * on Podman it holds Podman's own PATH, TERM, container, HOME and HOSTNAME (as measured live by
 * test/docker/engine-env.test.ts); on Docker it holds the file's keys only.
 */

const rules = (await loadPolicies()).flatMap((p) => p.rules);
const PODMAN_ADDS = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  TERM: 'xterm',
  container: 'podman',
  HOME: '/root',
  HOSTNAME: '4f2a9c01d3e7',
};

/** The host on `kind`'s engine (undefined: a snapshot made before the kind was recorded). */
function host(
  kind: EngineKind | undefined,
  env: Record<string, string>,
  file = 'DB=x\n',
  takenAt = '2026-10-02T03:00:00Z',
): Snapshot {
  const snapshot = new HostModel('n1', takenAt)
    .file('/etc/mesh/svc.env', file)
    .container({ name: 'svc', env, labels: { 'mesh.sources': '/etc/mesh/svc.env' } })
    .ledger([
      { id: 'svc.server', type: 'container', target: 'svc', origin: 'declared', sources: ['/etc/mesh/svc.env'] },
    ])
    .build();
  // The image sets no env at all, and was read.
  const containers = snapshot.containers.map((c) => ({ ...c, imageEnv: {} }));
  const docker =
    kind === undefined
      ? { endpoint: 'unix:///var/run/docker.sock', serverVersion: '4.3.1', apiVersion: '1.41', local: true }
      : { ...snapshot.docker!, kind };
  return { ...snapshot, docker, containers };
}
const dropped = (snapshot: Snapshot, history: Snapshot[] = []) =>
  auditSnapshot(snapshot, history, rules)
    .findings.filter((f) => f.ruleId === 'MA1004')
    .map((f) => `${f.discriminator ?? ''} ${f.message.replace(/.*\((.*)\)$/, '$1')}`);

test('on Podman, the keys Podman writes itself are no finding; a key only the old file gave still is', () => {
  const clean = host('podman', { DB: 'x', ...PODMAN_ADDS });
  assert.equal(
    auditSnapshot(clean, [], rules).findings,
    [],
    'a clean container of a PATH-less image on Podman has no finding at all',
  );
  assert.equal(dropped(host('podman', { DB: 'x', FEATURE_X: 'on', ...PODMAN_ADDS })), [
    '/etc/mesh/svc.env#FEATURE_X the image does not set it',
  ]);
});

test('on Podman, an engine key that an earlier snapshot of the file named is still reported, by its history', () => {
  const before = host(
    'podman',
    { DB: 'x', ...PODMAN_ADDS, PATH: '/opt/svc/bin', TERM: 'dumb' },
    'DB=x\nPATH=/opt/svc/bin\nTERM=dumb\n',
    '2026-10-01T03:00:00Z',
  );
  const now = host('podman', { DB: 'x', ...PODMAN_ADDS, PATH: '/opt/svc/bin', TERM: 'dumb' });
  assert.equal(dropped(now, [before]), [
    '/etc/mesh/svc.env#PATH an earlier snapshot of the file named it',
    '/etc/mesh/svc.env#TERM an earlier snapshot of the file named it',
  ]);
  // Without the history nothing tells the file gave them: not reported (never a guess).
  assert.equal(dropped(now), []);
});

test('an image that sets another value is evidence on every engine (an engine never overrides the image)', () => {
  for (const kind of ['docker', 'podman', 'unknown'] as const) {
    const snapshot = host(kind, { DB: 'x', ...PODMAN_ADDS, TERM: 'vt100' });
    const svc = snapshot.containers[0]!;
    const imageTerm = { ...svc.env['TERM']!, digest: `hmac-sha256:${'0'.repeat(64)}` };
    const withImage = { ...snapshot, containers: [{ ...svc, imageEnv: { TERM: imageTerm } }] };
    assert.equal(
      dropped(withImage).filter((d) => d.includes('TERM')),
      ['/etc/mesh/svc.env#TERM the image sets another value'],
      kind,
    );
  }
});

test('on Docker, which writes no key itself, a PATH held from no file and no image is reported', () => {
  assert.equal(auditSnapshot(host('docker', { DB: 'x' }), [], rules).findings, []);
  assert.equal(dropped(host('docker', { DB: 'x', PATH: '/opt/svc/bin', HOSTNAME: 'h' })), [
    '/etc/mesh/svc.env#HOSTNAME the image does not set it',
    '/etc/mesh/svc.env#PATH the image does not set it',
  ]);
});

test('an engine of unknown kind, or a snapshot from before the kind was kept, is read as any engine: no finding from what one might add', () => {
  assert.equal(
    [...engineAddedKeys('unknown')].sort(),
    [...new Set([...engineAddedKeys('docker'), ...engineAddedKeys('podman')])].sort(),
  );
  for (const kind of ['unknown', undefined] as const) {
    assert.equal(auditSnapshot(host(kind, { DB: 'x', ...PODMAN_ADDS }), [], rules).findings, [], String(kind));
    assert.equal(
      dropped(host(kind, { DB: 'x', FEATURE_X: 'on', ...PODMAN_ADDS })),
      ['/etc/mesh/svc.env#FEATURE_X the image does not set it'],
      String(kind),
    );
  }
});

test('a snapshot with the engine kind, and one without (made before it was kept), both load', () => {
  for (const kind of ['podman', undefined] as const) {
    const loaded = parseSnapshot(JSON.parse(JSON.stringify(host(kind, { DB: 'x' }))), 'snap.json');
    assert.is(loaded.docker?.kind, kind);
  }
  assert.throws(
    () => parseSnapshot(JSON.parse(JSON.stringify(host('lxc' as EngineKind, { DB: 'x' }))), 'snap.json'),
    /not a valid mesh-audit\/snapshot@2/,
  );
});

// GET /version as the two engines answer it (Docker 20.10 from Debian, Podman 4.3's compatible API), trimmed.
const DOCKER_VERSION = {
  Platform: { Name: '' },
  Components: [
    { Name: 'Engine', Version: '20.10.24+dfsg1', Details: { ApiVersion: '1.41' } },
    { Name: 'containerd', Version: '1.6.20~ds1' },
    { Name: 'runc', Version: '1.1.5+ds1' },
    { Name: 'docker-init', Version: '0.19.0' },
  ],
  Version: '20.10.24+dfsg1',
  ApiVersion: '1.41',
  MinAPIVersion: '1.12',
};
const PODMAN_VERSION = {
  Platform: { Name: 'linux/amd64/debian-12' },
  Components: [
    { Name: 'Podman Engine', Version: '4.3.1', Details: { APIVersion: '4.3.1' } },
    { Name: 'Conmon', Version: 'conmon version 2.1.6, commit: unknown' },
    { Name: 'OCI Runtime (runc)', Version: 'runc version 1.1.5+ds1' },
  ],
  Version: '4.3.1',
  ApiVersion: '1.41',
  MinAPIVersion: '1.24',
};

test('the engine kind is what the engine names among its components; anything else is unknown', () => {
  assert.is(engineKindOf(DOCKER_VERSION), 'docker');
  assert.is(engineKindOf(PODMAN_VERSION), 'podman');
  assert.is(engineKindOf({ Version: '1.0', ApiVersion: '1.41' }), 'unknown');
  assert.is(engineKindOf({ Version: '1.0', ApiVersion: '1.41', Components: [{ Name: 'containerd' }] }), 'unknown');
  assert.is(
    engineKindOf({ Version: '1.0', ApiVersion: '1.41', Components: 'Engine' } as unknown as EngineVersion),
    'unknown',
  );
});

/** A collection from an engine answering `version` to GET /version, with no container. */
async function collectFrom(version: unknown) {
  const socket = join(tempDir('ma-kind-', '/tmp'), 'engine.sock');
  const server = createServer((req, res) => {
    const path = (req.url ?? '').replace(/^\/v[\d.]+/, '').split('?')[0];
    res.setHeader('content-type', 'application/json');
    if (path === '/_ping') return res.end('OK');
    if (path === '/version') return res.end(JSON.stringify(version));
    if (path === '/containers/json' || path === '/images/json' || path === '/networks') return res.end('[]');
    if (path === '/volumes') return res.end('{"Volumes":[],"Warnings":null}');
    if (path === '/info') return res.end('{}');
    res.statusCode = 404;
    res.end('{"message":"no"}');
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  try {
    return await collectDocker({ endpoint: resolveEndpoint(`unix://${socket}`, {}), safe: createSafeValueMaker() });
  } finally {
    server.close();
  }
}

test('a scan keeps the engine kind; an engine of unknown kind is a note that says what MA1004 then reports', async () => {
  const podman = await collectFrom(PODMAN_VERSION);
  assert.is(podman.docker?.kind, 'podman');
  assert.equal(podman.notes, []);
  assert.is((await collectFrom(DOCKER_VERSION)).docker?.kind, 'docker');
  const other = await collectFrom({ Version: '1.0', ApiVersion: '1.41' });
  assert.is(other.docker?.kind, 'unknown');
  assert.equal(other.problems, [], 'not knowing the engine is no failure');
  assert.is(other.notes.length, 1);
  assert.match(
    other.notes[0]!.message,
    /names neither Docker nor Podman .*MA1004 reports a key an engine may write .*PATH.* only when an earlier snapshot of the file named it/,
  );
});

test.run();
