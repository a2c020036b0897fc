import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { engineAddedKeys } from '../src/engine-env.js';
import { auditSnapshot } from '../src/pipeline.js';
import { loadPolicies } from '../src/policy/load.js';
import { parseSnapshot } from '../src/snapshot/load.js';
import type { EngineKind, Snapshot } from '../src/snapshot/types.js';
import { HostModel } from './support/host-model.js';

/*
 * MA1004 and the keys an engine writes into a container by itself (issue 30). A container made from an
 * image that sets no env (an imported or FROM scratch image), from an env file that never named PATH:
 * on Podman it holds Podman's own PATH, TERM, container, HOME and HOSTNAME (as measured live by
 * test/docker/engine-env.test.ts); on Docker it holds the file's keys only.
 */

const rules = (await loadPolicies([])).flatMap((p) => p.rules);
const PODMAN_ADDS = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', TERM: 'xterm', container: 'podman', HOME: '/root', HOSTNAME: '4f2a9c01d3e7' };

/** The host on `kind`'s engine (undefined: a snapshot made before the kind was recorded). */
function host(kind: EngineKind | undefined, env: Record<string, string>, file = 'DB=x\n', takenAt = '2026-10-02T03:00:00Z'): Snapshot {
  const snapshot = new HostModel('n1', takenAt)
    .file('/etc/mesh/svc.env', file)
    .container({ name: 'svc', env, labels: { 'mesh.sources': '/etc/mesh/svc.env' } })
    .ledger([{ id: 'svc.server', type: 'container', target: 'svc', origin: 'declared', sources: ['/etc/mesh/svc.env'] }])
    .build();
  // The image sets no env at all, and was read.
  const containers = snapshot.containers.map((c) => ({ ...c, imageEnv: {} }));
  const docker = kind === undefined ? { endpoint: 'unix:///var/run/docker.sock', serverVersion: '4.3.1', apiVersion: '1.41', local: true } : { ...snapshot.docker!, kind };
  return { ...snapshot, docker, containers };
}
const dropped = (snapshot: Snapshot, history: Snapshot[] = []) =>
  auditSnapshot(snapshot, history, rules).findings.filter((f) => f.ruleId === 'MA1004').map((f) => `${f.discriminator ?? ''} ${f.message.replace(/.*\((.*)\)$/, '$1')}`);

test('on Podman, the keys Podman writes itself are no finding; a key only the old file gave still is', () => {
  const clean = host('podman', { DB: 'x', ...PODMAN_ADDS });
  assert.equal(auditSnapshot(clean, [], rules).findings, [], 'a clean container of a PATH-less image on Podman has no finding at all');
  assert.equal(dropped(host('podman', { DB: 'x', FEATURE_X: 'on', ...PODMAN_ADDS })), ['/etc/mesh/svc.env#FEATURE_X the image does not set it']);
});

test('on Podman, an engine key that an earlier snapshot of the file named is still reported, by its history', () => {
  const before = host('podman', { DB: 'x', ...PODMAN_ADDS, PATH: '/opt/svc/bin', TERM: 'dumb' }, 'DB=x\nPATH=/opt/svc/bin\nTERM=dumb\n', '2026-10-01T03:00:00Z');
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
    assert.equal(dropped(withImage).filter((d) => d.includes('TERM')), ['/etc/mesh/svc.env#TERM the image sets another value'], kind);
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
  assert.equal([...engineAddedKeys('unknown')].sort(), [...new Set([...engineAddedKeys('docker'), ...engineAddedKeys('podman')])].sort());
  for (const kind of ['unknown', undefined] as const) {
    assert.equal(auditSnapshot(host(kind, { DB: 'x', ...PODMAN_ADDS }), [], rules).findings, [], String(kind));
    assert.equal(dropped(host(kind, { DB: 'x', FEATURE_X: 'on', ...PODMAN_ADDS })), ['/etc/mesh/svc.env#FEATURE_X the image does not set it'], String(kind));
  }
});

test('a snapshot with the engine kind, and one without (made before it was kept), both load', () => {
  for (const kind of ['podman', undefined] as const) {
    const loaded = parseSnapshot(JSON.parse(JSON.stringify(host(kind, { DB: 'x' }))), 'snap.json');
    assert.is(loaded.docker?.kind, kind);
  }
  assert.throws(() => parseSnapshot(JSON.parse(JSON.stringify(host('lxc' as EngineKind, { DB: 'x' }))), 'snap.json'), /not a valid mesh-audit\/snapshot@1/);
});

test.run();
