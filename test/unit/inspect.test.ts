import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { containerFromInspect, type ContainerInspect } from '../../src/collect/inspect.js';
import { createSafeValueMaker } from '../../src/secret/value.js';
import { packageFile } from '../../src/paths.js';

/** A recorded `GET /containers/{id}/json`: an array of one object (docker inspect) or the object. */
function fixture(name: string): ContainerInspect {
  const parsed = JSON.parse(readFileSync(packageFile('test', 'fixtures', 'inspect', name), 'utf8')) as unknown;
  const one = Array.isArray(parsed) ? (parsed[0] as unknown) : parsed;
  assert.ok(one !== null && typeof one === 'object', `${name} holds an inspect object`);
  return structuredClone(one) as ContainerInspect;
}

const rawEnvValues = (inspect: ContainerInspect): string[] =>
  (inspect.Config?.Env ?? []).map((line) => line.slice(line.indexOf('=') + 1));

const envFile = suite('env-file-container');

envFile('name loses its leading slash', () => {
  const inspect = fixture('env-file-container.json');
  assert.ok(inspect.Name.startsWith('/'), 'the fixture name starts with /');
  const c = containerFromInspect(inspect, createSafeValueMaker());
  assert.is(c.name, inspect.Name.slice(1));
  assert.is(c.name, 'ma-fixture-env-file');
  assert.is(c.id, inspect.Id);
});

envFile('every env key is present and its value is {digest, shape}', () => {
  const inspect = fixture('env-file-container.json');
  const safe = createSafeValueMaker();
  const c = containerFromInspect(inspect, safe);
  const keys = (inspect.Config?.Env ?? []).map((line) => line.slice(0, line.indexOf('=')));
  assert.ok(keys.includes('DATABASE_URL'));
  assert.equal(Object.keys(c.env).sort(), [...keys].sort());
  for (const line of inspect.Config?.Env ?? []) {
    const key = line.slice(0, line.indexOf('='));
    const value = c.env[key]!;
    assert.equal(Object.keys(value).sort(), ['digest', 'shape']);
    assert.match(value.digest, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.equal(value, safe(line.slice(line.indexOf('=') + 1)), key);
  }
  assert.is(c.env['DATABASE_URL']!.shape, 'postgresql://…@:20000/…');
});

envFile('no raw env value from the fixture appears anywhere in the result', () => {
  const inspect = fixture('env-file-container.json');
  const json = JSON.stringify(containerFromInspect(inspect, createSafeValueMaker()));
  const secrets = rawEnvValues(inspect).filter((v) => v.length >= 6);
  assert.ok(secrets.length >= 3, 'the fixture has values worth checking');
  for (const raw of secrets) assert.not.ok(json.includes(raw), `raw value leaked: ${raw.slice(0, 4)}…`);
  assert.not.ok(json.includes('fake-pass'));
});

envFile('labels are copied, including dotted keys', () => {
  const inspect = fixture('env-file-container.json');
  const c = containerFromInspect(inspect, createSafeValueMaker());
  assert.equal(c.labels, inspect.Config?.Labels);
  assert.is(c.labels['mesh.module'], 'gitea');
  assert.is(c.labels['mesh.resource'], 'gitea.server');
});

envFile('network mode, bind mount, running state; zero FinishedAt becomes null', () => {
  const inspect = fixture('env-file-container.json');
  const c = containerFromInspect(inspect, createSafeValueMaker());
  assert.is(c.networkMode, 'none');
  assert.equal(c.mounts, [
    {
      type: 'bind',
      source: '/tmp/mesh-audit-fixtures/gitea/app.env',
      destination: '/etc/app/app.env',
      rw: false,
      propagation: 'rprivate',
      mode: 'ro',
    },
  ]);
  assert.is(c.state.running, true);
  assert.is(c.state.status, 'running');
  assert.is(c.state.pid, inspect.State?.Pid);
  assert.ok(c.state.pid > 0);
  assert.is(c.state.startedAt, inspect.State?.StartedAt);
  assert.is(inspect.State?.FinishedAt, '0001-01-01T00:00:00Z');
  assert.is(c.state.finishedAt, null);
  assert.equal(c.ports, []);
  assert.is(c.proc.available, false);
});

envFile.run();

const others = suite('other recorded containers');

others('host-network container: network mode host', () => {
  const c = containerFromInspect(fixture('host-network-httpd.json'), createSafeValueMaker());
  assert.is(c.name, 'ma-fixture-host-httpd');
  assert.is(c.networkMode, 'host');
  assert.is(c.labels['mesh.module'], 'web');
  assert.equal(c.mounts, []);
});

others('stopped container: not running, finishedAt set, startedAt kept', () => {
  const inspect = fixture('stopped-container.json');
  const c = containerFromInspect(inspect, createSafeValueMaker());
  assert.is(c.name, 'ma-fixture-stopped');
  assert.is(c.state.running, false);
  assert.is(c.state.status, 'exited');
  assert.is(c.state.pid, 0);
  assert.ok(c.state.finishedAt !== null);
  assert.is(c.state.finishedAt, inspect.State?.FinishedAt);
  assert.is(c.state.startedAt, inspect.State?.StartedAt);
  assert.ok(c.state.startedAt !== null);
});

others('zero times become null (a container created but never started)', () => {
  const inspect = fixture('stopped-container.json');
  inspect.State = {
    ...inspect.State,
    Status: 'created',
    Running: false,
    StartedAt: '0001-01-01T00:00:00Z',
    FinishedAt: '0001-01-01T00:00:00Z',
  };
  const c = containerFromInspect(inspect, createSafeValueMaker());
  assert.is(c.state.startedAt, null);
  assert.is(c.state.finishedAt, null);
  assert.is(c.state.status, 'created');
});

others('one maker gives equal digests for equal values across containers', () => {
  const safe = createSafeValueMaker();
  const a = containerFromInspect(fixture('env-file-container.json'), safe);
  const b = containerFromInspect(fixture('published-ports.json'), safe);
  assert.is(a.env['DATABASE_URL']!.digest, b.env['DATABASE_URL']!.digest);
  assert.is.not(a.env['DATABASE_URL']!.digest, a.env['GITEA__server__DOMAIN']!.digest);
});

others.run();

const ports = suite('published ports');

ports('a running container reports what was bound: 0.0.0.0:8080, 127.0.0.1:8443, udp 5353 on 0.0.0.0 and ::', () => {
  const c = containerFromInspect(fixture('published-ports.json'), createSafeValueMaker());
  const key = (p: { hostIp: string; hostPort: number; protocol: string; containerPort: number }) =>
    `${p.protocol} ${p.hostIp}:${p.hostPort}->${p.containerPort}`;
  assert.equal(c.ports.map(key).sort(), [
    'tcp 0.0.0.0:8080->80',
    'tcp 127.0.0.1:8443->443',
    'udp 0.0.0.0:5353->53',
    'udp :::5353->53',
  ]);
  assert.is(c.ports.length, 4);
});

ports('ports are sorted by host port', () => {
  const c = containerFromInspect(fixture('published-ports.json'), createSafeValueMaker());
  const hostPorts = c.ports.map((p) => p.hostPort);
  assert.equal(
    hostPorts,
    [...hostPorts].sort((a, b) => a - b),
  );
  assert.equal([...new Set(hostPorts)], [5353, 8080, 8443]);
});

ports('a stopped container falls back to the requested port bindings', () => {
  const inspect = fixture('published-ports.json');
  inspect.State = { ...inspect.State, Running: false, Status: 'exited' };
  inspect.NetworkSettings = { Ports: {} };
  const c = containerFromInspect(inspect, createSafeValueMaker());
  const key = (p: { hostIp: string; hostPort: number; protocol: string }) => `${p.protocol} ${p.hostIp}:${p.hostPort}`;
  assert.equal(c.ports.map(key).sort(), ['tcp 0.0.0.0:8080', 'tcp 127.0.0.1:8443', 'udp :5353']);
});

ports('bindings without a host port are not published ports', () => {
  const inspect = fixture('published-ports.json');
  inspect.NetworkSettings = {
    Ports: {
      '9000/tcp': null,
      '9001/tcp': [{ HostIp: '', HostPort: '' }],
      '80/tcp': [{ HostIp: '0.0.0.0', HostPort: '8080' }],
    },
  };
  const c = containerFromInspect(inspect, createSafeValueMaker());
  assert.equal(c.ports, [{ containerPort: 80, protocol: 'tcp', hostIp: '0.0.0.0', hostPort: 8080 }]);
});

ports.run();
