import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasPromtool, promtoolCheckMetrics } from './support/promtool.js';
import { getOn, startServe } from './support/serve-child.js';
import { spawnCli, tempDir } from './support/cli.js';
import { lockOutputFolder } from '../src/write/lock.js';

/*
 * `mesh-audit serve` and `mesh-audit status` without an engine (issue 44): what it answers when a source cannot be
 * read — incomplete, never clean, with the cause named — and how it answers: GET only, a socket only its group may
 * read, Prometheus' own checker on /metrics, a clean stop on SIGTERM. The live behaviour on real engines is in
 * test/docker/serve-live.test.ts.
 */
const ci = process.env['CI'] === 'true';

test('serve with an engine it cannot reach: incomplete (never clean), the cause named; healthz 503; status exits 3', async () => {
  const dir = tempDir('ma-serve-');
  const socket = join(dir, 'run', 'serve.sock');
  const serve = startServe(
    [
      '--docker-host',
      `unix://${join(dir, 'no-engine.sock')}`,
      '--ledger',
      join(dir, 'ledger.json'),
      '--hostname',
      'serve-test',
    ],
    socket,
  );
  try {
    const status = await serve.until(
      'the first read',
      '/v1/status',
      (a) => a.code === 200 && JSON.parse(a.body).lastFullRead !== null,
      30_000,
    );
    const parsed = JSON.parse(status.body);
    assert.is(parsed.state, 'incomplete');
    assert.is(parsed.host, 'serve-test');
    assert.ok(
      parsed.notChecked.some((m: string) => m.includes('engine')),
      `the engine named among what is not checked: ${status.body}`,
    );
    assert.equal(Object.keys(parsed.counts).sort(), ['error', 'note', 'warning']);

    // The socket: made with its folder, readable and writable by owner and group only.
    assert.is(statSync(socket).mode & 0o777, 0o660);

    assert.is((await serve.get('/healthz')).code, 503, 'an incomplete answer is not healthy');
    assert.is((await getOn(socket, '/v1/status', 'POST')).code, 405, 'POST is refused');
    assert.is((await getOn(socket, '/v1/findings', 'DELETE')).code, 405, 'DELETE is refused');
    assert.is((await serve.get('/nothing-here')).code, 404);

    const findings = await serve.get('/v1/findings');
    assert.is(findings.code, 200);
    const report = JSON.parse(findings.body);
    assert.is(report.schemaVersion, 'mesh-audit/report@1');
    assert.is(report.summary.complete, false);

    const metrics = await serve.get('/metrics');
    assert.is(metrics.code, 200);
    assert.match(metrics.body, /^mesh_audit_run_complete\{host="serve-test"\} 0$/m);
    if (hasPromtool()) {
      const checked = promtoolCheckMetrics(metrics.body);
      assert.ok(checked.ok, checked.output);
    } else assert.not.ok(ci, 'promtool is needed in CI (.ci/run installs it)');

    const asked = spawnCli(['status', '--socket', socket]);
    assert.is(asked.code, 3, asked.stderr);
    assert.match(asked.stdout, /^serve-test: INCOMPLETE since /);
    assert.match(asked.stdout, 'not checked:');
  } finally {
    const code = await serve.stop();
    assert.is(code, 0, `SIGTERM is a clean stop: ${serve.stderr()}`);
  }
  assert.not.ok(existsSync(socket), 'the socket is gone once serve stopped');
});

test('status with nobody answering: exit 3 naming the socket, never a clean answer', () => {
  const dir = tempDir('ma-serve-');
  const run = spawnCli(['status', '--socket', join(dir, 'nobody.sock')]);
  assert.is(run.code, 3, run.stderr);
  assert.match(run.stderr, `no serve answers on ${join(dir, 'nobody.sock')}`);
  assert.is(run.stdout, '');
});

test('serve --listen takes loopback only', () => {
  for (const listen of ['0.0.0.0:9101', '192.0.2.1:9101', 'localhost', '127.0.0.1:0', '127.0.0.1:70000']) {
    const run = spawnCli(['serve', '--listen', listen, '--docker-host', 'unix:///nonexistent.sock']);
    assert.is(run.code, 2, `${listen}: ${run.stderr}`);
    assert.match(run.stderr, 'loopback only');
  }
});

test('a second serve on the same socket is refused while the first answers', async () => {
  const dir = tempDir('ma-serve-');
  const socket = join(dir, 'serve.sock');
  const args = ['--docker-host', `unix://${join(dir, 'no-engine.sock')}`, '--ledger', join(dir, 'ledger.json')];
  const first = startServe(args, socket);
  try {
    await first.until('the first serve answers', '/v1/status', (a) => a.code === 200, 30_000);
    const second = spawnCli(['serve', '--socket', socket, ...args]);
    assert.is(second.code, 2, second.stderr);
    assert.match(second.stderr, 'another process answers there');
    assert.is((await first.get('/v1/status')).code, 200, `the first still answers: ${first.stderr()}`);
  } finally {
    await first.stop();
  }
});

test('SIGHUP reads the config again (a broken one is kept out, said on stderr), then the host', async () => {
  const dir = tempDir('ma-serve-');
  const socket = join(dir, 'serve.sock');
  const config = join(dir, 'config.yaml');
  const configFor = (hostname: string) =>
    `hostname: ${hostname}\nledger: ${join(dir, 'ledger.json')}\ndockerHost: unix://${join(dir, 'none.sock')}\n`;
  writeFileSync(config, configFor('before-hup'));
  const serve = startServe(['--config', config], socket);
  const hostOf = (body: string): unknown => (JSON.parse(body) as { host: unknown }).host;
  try {
    await serve.until('the first read', '/v1/status', (a) => a.code === 200 && hostOf(a.body) === 'before-hup', 30_000);
    writeFileSync(config, configFor('after-hup'));
    serve.child.kill('SIGHUP');
    await serve.until('the config read again', '/v1/status', (a) => hostOf(a.body) === 'after-hup', 30_000);
    writeFileSync(config, 'hostname: [unclosed\n');
    serve.child.kill('SIGHUP');
    await serve.until(
      'the broken config said',
      '/v1/status',
      () => serve.stderr().includes('kept the config in use'),
      30_000,
    );
    assert.is(hostOf((await serve.get('/v1/status')).body), 'after-hup', 'the config in use stays');
  } finally {
    assert.is(await serve.stop(), 0, serve.stderr());
  }
});

test('serve --out: a folder held by another run skips that keep, said on stderr; serve answers meanwhile and keeps later', async () => {
  const dir = tempDir('ma-serve-');
  const out = join(dir, 'out');
  const socket = join(dir, 'serve.sock');
  const serve = startServe(
    [
      '--docker-host',
      `unix://${join(dir, 'no-engine.sock')}`,
      '--ledger',
      join(dir, 'ledger.json'),
      '--hostname',
      'serve-kept',
      '--out',
      out,
    ],
    socket,
  );
  const kept = () => readdirSync(join(out, 'history', 'serve-kept')).filter((n) => n.startsWith('snapshot-'));
  const lastFullRead = async () =>
    (JSON.parse((await serve.get('/v1/status')).body) as { lastFullRead: string }).lastFullRead;
  /** SIGHUP, then the answer once the whole read it makes has ended. */
  const wholeRead = async (what: string) => {
    const before = await lastFullRead();
    serve.child.kill('SIGHUP');
    return serve.until(what, '/v1/status', (a) => a.code === 200 && JSON.parse(a.body).lastFullRead > before, 30_000);
  };
  try {
    // No engine: nothing to take from an earlier read, so every read is whole (and incomplete), and kept as a scan's.
    await serve.until(
      'the first read',
      '/v1/status',
      (a) => a.code === 200 && JSON.parse(a.body).lastFullRead !== null,
      30_000,
    );
    assert.is(kept().length, 1, 'the first read kept');
    // A change read while the engine is down reuses nothing either: a whole read, but not one asked for (no resync,
    // no SIGHUP, no loss), so nothing more is kept: an outage must not fill the history and prune the good ones out.
    const lastRead = async () => (JSON.parse((await serve.get('/v1/status')).body) as { lastRead: string }).lastRead;
    for (let change = 0; change < 3; change++) {
      const before = await lastRead();
      writeFileSync(join(dir, 'ledger.json'), `{"entries": [], "change": ${change}}`);
      await serve.until(
        `the read of change ${change}`,
        '/v1/status',
        (a) => a.code === 200 && JSON.parse(a.body).lastRead > before,
        30_000,
      );
    }
    assert.is(kept().length, 1, 'reads during the outage kept nothing more');
    // Taken as a scan takes it: waiting while serve keeps (it holds the folder only for that).
    const held = await lockOutputFolder(out, 30);
    try {
      const answer = await wholeRead('a whole read while the folder is held');
      assert.is(JSON.parse(answer.body).state, 'incomplete', 'still answering (incomplete: no engine)');
      assert.match(
        serve.stderr(),
        `is held by another mesh-audit run (pid ${process.pid}): this whole read's snapshot not kept`,
      );
      assert.is(kept().length, 1, 'nothing kept while held');
      assert.is((await serve.get('/healthz')).code, 503, 'answering while the folder is held');
    } finally {
      await held.release();
    }
    await wholeRead('a whole read once the folder is free');
    assert.is(kept().length, 2, 'kept once the folder is free');
  } finally {
    assert.is(await serve.stop(), 0, serve.stderr());
  }
});

test.run();
