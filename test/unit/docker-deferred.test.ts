import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleOne } from '../../scripts/package/bundle.js';
import { packageFile, PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from '../support/cli.js';

/*
 * dockerode as a scan loads it (src/collect/docker-deferred.ts): without gRPC, protobufjs, ssh2,
 * readable-stream and tar-fs (with tar-stream) until a feature needs them, and whole when one does. Each case runs in a
 * fresh process: what a process has loaded is the thing under test.
 */
const API = packageFile('dist', 'src', 'collect', 'docker-api.js');

function inFreshNode(body: string): Record<string, unknown> {
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(API)});
    const { loadDockerode } = await import(${JSON.stringify(API)});
    const loaded = (name) => Object.keys(require.cache).some((f) => f.includes('/node_modules/' + name + '/'));
    const out = {};
    ${body}
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, DOCKER_HOST: '' },
  });
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

test('a scan loads dockerode without the modules of features it never uses', () => {
  const out = inFreshNode(`
    const Docker = await loadDockerode();
    new Docker({ socketPath: '/nonexistent.sock' });
    for (const name of ['dockerode', 'docker-modem', 'ssh2', '@grpc/grpc-js', 'protobufjs', 'readable-stream', 'tar-stream']) out[name] = loaded(name);`);
  assert.equal(out, {
    dockerode: true,
    'docker-modem': true,
    ssh2: false,
    '@grpc/grpc-js': false,
    protobufjs: false,
    'readable-stream': false,
    'tar-stream': false,
  });
});

test('a deferred module is loaded, whole, the first time dockerode uses it', () => {
  const out = inFreshNode(`
    await loadDockerode();
    const ssh = require('docker-modem/lib/ssh.js');
    const agent = ssh({ host: 'localhost', port: 22 });
    out.sshAgent = agent.constructor.name;
    out.ssh2 = loaded('ssh2');
    agent.destroy();
    const HttpDuplex = require('docker-modem/lib/http_duplex.js');
    const { PassThrough } = await import('node:stream');
    out.duplex = typeof new HttpDuplex(new PassThrough(), new PassThrough()).pipe;
    const tar = createRequire(require.resolve('dockerode/lib/util.js'))('tar-fs');
    out.tarPack = typeof tar.pack;
    out.tarStream = loaded('tar-stream');
    out.session = typeof require('dockerode/lib/session.js');`);
  assert.equal(out, {
    sshAgent: 'Agent',
    ssh2: true,
    duplex: 'function',
    tarPack: 'function',
    tarStream: true,
    session: 'function',
  });
});

test('the single executable bundles the same stand-ins: gRPC is loaded when a BuildKit session is used, not before', async () => {
  // Inside the package, where the bundler finds node_modules.
  const dir = tempDir('ma-deferred-bundle-', packageFile('dist'));
  const entry = join(dir, 'entry.cjs');
  writeFileSync(
    entry,
    [
      "const Docker = require('dockerode');",
      "new Docker({ socketPath: '/nonexistent.sock' });",
      "module.exports = require('dockerode/lib/session.js');",
    ].join('\n'),
  );
  const code = await bundleOne({ root: PACKAGE_ROOT, version: '0.0.0', commit: 'test' }, entry, {});
  // The bundle runs with a require that records what it asks of Node: http2 is gRPC's alone.
  const asked = new Set<string>();
  const nodeRequire = createRequire(import.meta.url);
  const record = (id: string): unknown => {
    asked.add(id.replace(/^node:/, ''));
    return nodeRequire(id);
  };
  const module = { exports: {} as unknown };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the bundle is CommonJS text, run as Node would run it
  new Function('require', 'module', 'exports', '__filename', '__dirname', code)(
    record,
    module,
    module.exports,
    entry,
    dir,
  );
  assert.ok(asked.has('http'), 'the bundle ran (docker-modem asked for http)');
  assert.not.ok(asked.has('http2'), 'gRPC was loaded with dockerode');
  const session = module.exports as (docker: unknown, auth: unknown, handler: (err: Error | null) => void) => void;
  const told: (Error | null)[] = [];
  session(
    { modem: { dial: (_: unknown, callback: (err: Error) => void) => callback(new Error('no engine')) } },
    {},
    (err) => told.push(err),
  );
  assert.ok(asked.has('http2'), 'gRPC was not loaded when a session was used');
  assert.is(told[0]?.message, 'no engine', "the real session's code ran");
});

test.run();
