import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { fakeEngine } from './support/fake-engine.js';
import { LiveHost, type LiveReport } from './docker/live-host.js';

// The collector against a recorded engine that misbehaves on cue (a real engine cannot be made to).
// The scan runs as a child process so the fake engine in this process can answer it.
function scanAsync(host: LiveHost, dockerHost: string, env: NodeJS.ProcessEnv = {}, extra: string[] = []): Promise<{ code: number; stderr: string; report: LiveReport; seconds: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    host.ledger([]);
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'), 'scan', '--docker-host', dockerHost, '--ledger', host.ledgerPath, '--hostname', 'fake', '--out', host.out, '--format', 'json', ...extra], {
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      const report = JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport;
      resolve({ code: code ?? -1, stderr, report, seconds: (Date.now() - started) / 1000 });
    });
  });
}

test('a container gone between list and inspect is a note, not an error: the scan is complete', async () => {
  const engine = await fakeEngine({ 'ma-fixture-stopped': 'gone' });
  try {
    const host = new LiveHost();
    const r = await scanAsync(host, engine.dockerHost);
    assert.ok(r.report.summary.complete, r.stderr);
    assert.ok(r.report.notifications.some((n) => n.level === 'note' && n.message.includes('ma-fixture-stopped went away between list and inspect')));
    // Only GET requests, only the allowed paths; the API version is the engine's, not a pinned old one.
    assert.ok(engine.requests.every((q) => q.startsWith('GET ')), engine.requests.join('\n'));
    assert.ok(engine.requests.some((q) => q.startsWith('GET /v1.41/containers/json')), engine.requests.join('\n'));
  } finally {
    await engine.close();
  }
});

test('the engine answers 500 on one inspect: one problem, exit 3, the other containers kept, the body never printed', async () => {
  const canary = `canary-500-${process.pid}`;
  const engine = await fakeEngine({ 'ma-fixture-host-httpd': 'error' }, JSON.stringify({ message: `internal: DATABASE_URL=postgresql://u:${canary}@x/y` }));
  try {
    const host = new LiveHost();
    const r = await scanAsync(host, engine.dockerHost, { DEBUG: '*', NODE_DEBUG: 'http,net' });
    assert.is(r.code, 3);
    assert.match(r.stderr, 'cannot inspect container ma-fixture-host-httpd: inspect');
    assert.match(r.stderr, 'HTTP 500');
    assert.not.ok(r.stderr.includes(canary), 'the response body is not printed, even with DEBUG=*');
    assert.not.ok(JSON.stringify(r.report).includes(canary));
  } finally {
    await engine.close();
  }
});

test('an inspect that never finishes is ended by the deadline: exit 3 in seconds, not a hang', async () => {
  const engine = await fakeEngine({ 'ma-fixture-env-file': 'hang' });
  try {
    const host = new LiveHost();
    const config = join(host.dir, 'config.yaml');
    host.write(config, 'dockerTimeoutSeconds: 2\n');
    const r = await scanAsync(host, engine.dockerHost, {}, ['--config', config]);
    assert.is(r.code, 3);
    assert.ok(r.seconds < 15, `took ${r.seconds} s`);
    assert.match(r.stderr, 'cannot inspect container ma-fixture-env-file: inspect');
    assert.match(r.stderr, 'no answer in time');
  } finally {
    await engine.close();
  }
});

test.run();
