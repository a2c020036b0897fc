import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ReadOnlyDocker } from '../src/collect/docker-api.js';
import { resolveEndpoint } from '../src/collect/docker-endpoint.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings } from '../src/config.js';
import { fakeEngine } from './support/fake-engine.js';
import { watchEngineEvents } from '../src/collect/engine-events.js';
import { waitUntil } from './support/wait.js';

// Which engine a scan talks to, as a user writes it: --docker-host, DOCKER_HOST, the config file.
// The rules are docker-modem's (every dockerode tool reads DOCKER_HOST the same way), with an IPv6
// literal connecting and a missing port being the engine's.

const none: NodeJS.ProcessEnv = {};

test('unix: the socket path, local; an empty unix:// and no DOCKER_HOST at all are the default socket', () => {
  assert.equal(resolveEndpoint('unix:///run/user/0/docker.sock', none), {
    url: 'unix:///run/user/0/docker.sock',
    local: true,
    socketPath: '/run/user/0/docker.sock',
  });
  assert.equal(resolveEndpoint('/srv/docker.sock', none), {
    url: 'unix:///srv/docker.sock',
    local: true,
    socketPath: '/srv/docker.sock',
  });
  assert.is(resolveEndpoint(undefined, none).socketPath, '/var/run/docker.sock');
  assert.is(resolveEndpoint(undefined, { DOCKER_HOST: '' }).socketPath, '/var/run/docker.sock');
  assert.is(resolveEndpoint('unix://', none).socketPath, '/var/run/docker.sock');
  assert.throws(() => resolveEndpoint('unix://relative.sock', none), /must be absolute/);
});

test('tcp: 2375 plain; TLS with DOCKER_TLS_VERIFY or port 2376, then 2376 by default; host:port alone is tcp', () => {
  assert.equal(resolveEndpoint('tcp://10.0.0.7', none), {
    url: 'tcp://10.0.0.7',
    local: false,
    protocol: 'http',
    host: '10.0.0.7',
    port: 2375,
  });
  assert.equal(resolveEndpoint('tcp://10.0.0.7', { DOCKER_TLS_VERIFY: '1' }), {
    url: 'tcp://10.0.0.7',
    local: false,
    protocol: 'https',
    host: '10.0.0.7',
    port: 2376,
  });
  assert.is(resolveEndpoint('tcp://10.0.0.7:2376', none).protocol, 'https');
  assert.is(resolveEndpoint('tcp://10.0.0.7:4243', { DOCKER_TLS_VERIFY: '0' }).protocol, 'http');
  assert.equal(resolveEndpoint('10.0.0.7:4243', none), {
    url: '10.0.0.7:4243',
    local: false,
    protocol: 'http',
    host: '10.0.0.7',
    port: 4243,
  });
});

test('https:// is TLS even without DOCKER_TLS_VERIFY, on the engine TLS port 2376 by default (not 2375)', () => {
  assert.equal(resolveEndpoint('https://engine.example.invalid', none), {
    url: 'https://engine.example.invalid',
    local: false,
    protocol: 'https',
    host: 'engine.example.invalid',
    port: 2376,
  });
  assert.is(resolveEndpoint('https://engine.example.invalid:8443', none).port, 8443);
});

test('an IPv6 literal loses its brackets: tcp://[::1]:2375 is host ::1', () => {
  assert.equal(resolveEndpoint('tcp://[::1]:2375', none), {
    url: 'tcp://[::1]:2375',
    local: false,
    protocol: 'http',
    host: '::1',
    port: 2375,
  });
  assert.is(resolveEndpoint('ssh://ops@[fd00::7]', none).host, 'fd00::7');
});

test('ssh: user, host, port 22 by default', () => {
  assert.equal(resolveEndpoint('ssh://auditor@node7.example.invalid', none), {
    url: 'ssh://auditor@node7.example.invalid',
    local: false,
    protocol: 'ssh',
    host: 'node7.example.invalid',
    port: 22,
    username: 'auditor',
  });
  assert.is(resolveEndpoint('ssh://node7.example.invalid:2222', none).port, 2222);
  assert.throws(() => resolveEndpoint('ftp://x', none), /unsupported scheme ftp:/);
});

test('--docker-host over DOCKER_HOST over the config file over the default socket; src/config.ts alone reads DOCKER_HOST', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-audit-endpoint-'));
  try {
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'dockerHost: unix:///config.sock\n');
    const chosen = async (flag: string | undefined, file: string | undefined, env: NodeJS.ProcessEnv) =>
      resolveEndpoint(
        (
          await resolveSettings(flag ? { dockerHost: flag } : {}, file, {
            MESH_AUDIT_SYSTEM_CONFIG: '/nonexistent',
            ...env,
          })
        ).settings.dockerHost,
        none,
      ).url;
    const dockerHost = { DOCKER_HOST: 'tcp://10.0.0.9:2375' };
    assert.is(await chosen('unix:///flag.sock', config, dockerHost), 'unix:///flag.sock');
    assert.is(await chosen(undefined, config, dockerHost), 'tcp://10.0.0.9:2375');
    assert.is(await chosen(undefined, config, {}), 'unix:///config.sock');
    assert.is(await chosen(undefined, undefined, dockerHost), 'tcp://10.0.0.9:2375');
    assert.is(await chosen(undefined, undefined, { DOCKER_HOST: '' }), 'unix:///var/run/docker.sock');
    // The collector is handed the resolved value: an environment given to it alone names no engine.
    assert.is(resolveEndpoint(undefined, dockerHost).url, 'unix:///var/run/docker.sock');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The least of an engine on loopback TCP: ping, version, an empty list. */
async function tinyEngine(host: string): Promise<{ server: Server; port: number; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    const path = (req.url ?? '').replace(/^\/v[\d.]+/, '').split('?')[0];
    res.setHeader('content-type', 'application/json');
    if (path === '/_ping') return res.end('OK');
    if (path === '/version') return res.end(JSON.stringify({ Version: '20.10.24', ApiVersion: '1.41' }));
    if (path === '/containers/json') return res.end('[]');
    res.statusCode = 404;
    res.end('{"message":"no"}');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, paths };
}

const limits = () => ({ requestTimeoutMs: 5000, deadline: AbortSignal.timeout(20_000) });

test('tcp://[::1]:PORT connects (it failed with ENOTFOUND when the brackets were kept)', async () => {
  const engine = await tinyEngine('::1');
  try {
    const api = await ReadOnlyDocker.connect(resolveEndpoint(`tcp://[::1]:${engine.port}`, none), limits());
    try {
      assert.equal(await api.listContainers(), []);
      assert.is(api.apiVersion, '1.41');
      assert.ok(engine.paths.includes('/v1.41/containers/json?all=true'), engine.paths.join(' '));
    } finally {
      api.close();
    }
  } finally {
    engine.server.close();
  }
});

test('the chosen socket is used even when DOCKER_HOST names a tcp engine with TLS files that do not exist', async () => {
  const fake = await fakeEngine({});
  const saved = { ...process.env };
  // docker-modem reads these itself when it is made; our resolved endpoint must win, without errors.
  process.env['DOCKER_HOST'] = 'tcp://192.0.2.1:2376';
  process.env['DOCKER_TLS_VERIFY'] = '1';
  process.env['DOCKER_CERT_PATH'] = '/nonexistent/mesh-audit-certs';
  try {
    const api = await ReadOnlyDocker.connect(resolveEndpoint(fake.dockerHost), limits());
    try {
      assert.is((await api.listContainers()).length, 3);
    } finally {
      api.close();
    }
    assert.ok(fake.requests.length > 0);
    assert.is(process.env['DOCKER_HOST'], 'tcp://192.0.2.1:2376', 'the environment is left as it was');
  } finally {
    for (const key of ['DOCKER_HOST', 'DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    await fake.close();
  }
});

test('an engine that answers with a redirect is not followed elsewhere: the request fails', async () => {
  const elsewhere = await tinyEngine('127.0.0.1');
  const paths: string[] = [];
  const redirecting = createServer((req, res) => {
    paths.push(req.url ?? '');
    if ((req.url ?? '').endsWith('/_ping')) {
      res.statusCode = 302;
      res.setHeader('location', `http://127.0.0.1:${elsewhere.port}/_ping`);
      return res.end();
    }
    res.end('{}');
  });
  await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
  try {
    const url = `tcp://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
    await ReadOnlyDocker.connect(resolveEndpoint(url, none), limits()).then(
      (api) => {
        api.close();
        assert.unreachable('a redirected ping must not connect');
      },
      (err: unknown) => assert.match((err as Error).message, /^ping: /),
    );
    assert.equal(elsewhere.paths, [], 'nothing reached the place it pointed to');
  } finally {
    redirecting.close();
    elsewhere.server.close();
  }
});

test("a closed connection leaves nothing on the collection's deadline: serve's reads keep no agent of the reads before", async () => {
  // The deadline is a timeout signal (src/collect/docker.ts): one with a listener is held until it fires, a
  // minute later, and the listener with it held the read's agent (serve read every second: ~40 agents kept).
  const fake = await fakeEngine({});
  try {
    const deadline = AbortSignal.timeout(60_000);
    for (let read = 0; read < 20; read++) {
      const api = await ReadOnlyDocker.connect(resolveEndpoint(fake.dockerHost), { requestTimeoutMs: 5000, deadline });
      assert.is((await api.listContainers()).length, 3);
      api.close();
    }
    assert.is(getEventListeners(deadline, 'abort').length, 0);
  } finally {
    await fake.close();
  }
});

test('a connection refused by the engine leaves nothing on the deadline either', async () => {
  const deadline = AbortSignal.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'ma-nosock-'));
  try {
    for (let read = 0; read < 5; read++)
      await ReadOnlyDocker.connect(resolveEndpoint(`unix://${join(dir, 'none.sock')}`), {
        requestTimeoutMs: 5000,
        deadline,
      }).then(
        () => assert.unreachable('connected to no socket'),
        (e: unknown) => assert.match(String(e), /ENOENT/),
      );
    assert.is(getEventListeners(deadline, 'abort').length, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an events stream cut again and again leaves no listener of its own on serve's stop", async () => {
  // Each opening of the stream listened for serve's stop and never let go once the stream ended: one listener more
  // per cut, for the life of serve.
  const fake = await fakeEngine({});
  const stop = new AbortController();
  const causes: string[] = [];
  const told: string[] = [];
  try {
    watchEngineEvents(
      resolveEndpoint(fake.dockerHost),
      {
        changed: () => undefined,
        lost: (c) => (causes.push(c), told.push('lost')),
        back: () => told.push('back'),
        heard: () => told.push('heard'),
      },
      { signal: stop.signal, retryMs: 5, requestTimeoutMs: 5000 },
    );
    const opened = () => fake.requests.filter((r) => r.startsWith('GET') && r.includes('/events')).length;
    await waitUntil('12 openings of the events stream', () => opened() >= 12, 30_000, 20);
    assert.ok(causes.length > 0, 'the cut is told');
    // serve reads by its last container list only while the stream is heard (src/collect/read-cache.ts).
    assert.match(told.join(' '), /^heard lost back heard lost back heard/, 'each opening is told, before its cut');
    assert.ok(getEventListeners(stop.signal, 'abort').length <= 2, `${getEventListeners(stop.signal, 'abort').length}`);
  } finally {
    stop.abort();
    await fake.close();
  }
});

test.run();
