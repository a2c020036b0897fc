import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { fakeEngine } from './support/fake-engine.js';
import { tempDir } from './support/cli.js';

/*
 * Relative paths (issue 47): a path flag (--ledger, --managed-root, --root) or its environment variable given relative
 * is made absolute against the working directory, and `config show` shows the absolute path; a config file's relative
 * path is refused with the absolute path it would be beside the file named (a job reads it from any folder).
 */

const NO_SYSTEM_CONFIG = { MESH_AUDIT_SYSTEM_CONFIG: '/nonexistent/config.yaml', MESH_AUDIT_CONFIG: '' };
const run = promisify(execFile);

/** The real `bin/mesh-audit.js`, run from `cwd` (not blocking this process: a stand-in engine may answer it). */
async function cliIn(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'), ...args], {
      cwd,
      env: { ...process.env, ...NO_SYSTEM_CONFIG, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr };
  }
}

type Shown = { settings: Record<string, { value: unknown; from: string }> };

test('config show: relative --ledger, --managed-root and --root are absolute against the working directory', async () => {
  const dir = tempDir();
  const r = await cliIn(dir, [
    'config',
    'show',
    '--format',
    'json',
    '--ledger',
    'host/ledger.json',
    '--managed-root',
    'etc/mesh',
    '--managed-root',
    '/srv/mesh',
    '--root',
    '.',
  ]);
  assert.is(r.code, 0, r.stderr);
  const { settings } = JSON.parse(r.stdout) as Shown;
  assert.equal(settings.ledger, { value: join(dir, 'host', 'ledger.json'), from: 'flag --ledger' });
  assert.equal(settings.managedRoots!.value, [join(dir, 'etc', 'mesh'), '/srv/mesh']);
  assert.is(settings.root!.value, dir);
  const text = await cliIn(dir, ['config', 'show', '--ledger', 'host/ledger.json']);
  assert.match(text.stdout, `ledger                ${join(dir, 'host', 'ledger.json')}  (flag --ledger)`);
});

test('the environment: a relative $MESH_AUDIT_LEDGER and $MESH_AUDIT_MANAGED_ROOTS are absolute as well', async () => {
  const dir = tempDir();
  const r = await cliIn(dir, ['config', 'show', '--format', 'json'], {
    MESH_AUDIT_LEDGER: 'relative/ledger.json',
    MESH_AUDIT_MANAGED_ROOTS: 'etc/mesh:/srv/mesh',
  });
  assert.is(r.code, 0, r.stderr);
  const { settings } = JSON.parse(r.stdout) as Shown;
  assert.equal(settings.ledger, { value: join(dir, 'relative', 'ledger.json'), from: 'env MESH_AUDIT_LEDGER' });
  assert.equal(settings.managedRoots!.value, [join(dir, 'etc', 'mesh'), '/srv/mesh']);
});

test("a config file's relative path is refused, naming the absolute path it would be beside the file", async () => {
  const dir = tempDir();
  const config = join(dir, 'nightly.yaml');
  writeFileSync(config, 'ledger: host/ledger.json\nmanagedRoots: [/etc/mesh, etc/more]\n');
  const r = await cliIn(tempDir(), ['config', 'show', '--config', config]);
  assert.is(r.code, 2);
  assert.match(
    r.stderr,
    `${config}:1: /ledger must be an absolute path, not 'host/ledger.json' (a job runs from any folder): beside this ` +
      `file it would be ${join(dir, 'host', 'ledger.json')}`,
  );
  assert.match(r.stderr, `${config}:2: /managedRoots/1 must be an absolute path, not 'etc/more'`);
});

test('snapshot --ledger host/ledger.json reads the ledger the relative path names (a stand-in engine)', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'host'));
  writeFileSync(
    join(dir, 'host', 'ledger.json'),
    JSON.stringify({
      node: 'relative-node',
      adopted: true,
      entries: [{ id: 'web.conf', type: 'file', target: '/etc/mesh/web.conf', origin: 'declared', module: 'web' }],
    }),
  );
  const engine = await fakeEngine({});
  try {
    const r = await cliIn(dir, [
      'snapshot',
      '-o',
      'snap.json',
      '--ledger',
      'host/ledger.json',
      '--docker-host',
      engine.dockerHost,
      '--hostname',
      'relative-node',
    ]);
    assert.ok(r.code === 0 || r.code === 3, r.stderr);
    const snapshot = JSON.parse(readFileSync(join(dir, 'snap.json'), 'utf8')) as {
      ledger: { path: string; available: boolean; node?: string; entries: { entry: { id: string } }[] };
    };
    assert.is(snapshot.ledger.path, join(dir, 'host', 'ledger.json'));
    assert.ok(snapshot.ledger.available);
    assert.is(snapshot.ledger.node, 'relative-node');
    assert.equal(
      snapshot.ledger.entries.map((e) => e.entry.id),
      ['web.conf'],
    );
  } finally {
    await engine.close();
  }
});

test.run();
