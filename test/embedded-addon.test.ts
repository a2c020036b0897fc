import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, tempDir as tempDir } from './support/cli.js';
import { parseTrace, runProcess, straceBinary, straceCli } from './support/strace.js';

/*
 * How the single executable loads fs-ext's addon (src/write/embedded-addon.ts), with the addon npm
 * built: through a file in the output folder that is gone once loaded, and the flock(2) it then takes
 * is the kernel's, the one flock(1) sees. Each load runs in its own node process (an addon is loaded
 * once per process). The single executable itself is tested in test/docker/package.test.ts.
 */
const ADDON = join(PACKAGE_ROOT, 'node_modules', 'fs-ext', 'build', 'Release', 'fs_ext.node');
const LOADER = join(PACKAGE_ROOT, 'dist', 'src', 'write', 'embedded-addon.js');

interface Loaded {
  exports: string[];
  /** The folder's entries right after the load. */
  entries: string[];
  /** flock(1) -n on the file this process then locked: 1 means it found the lock held. */
  flockExit: number | null;
}

/** A node process that loads the addon through `dir`, locks `lockFile` with it, and asks flock(1). */
function loaderScript(dir: string, lockFile: string): string {
  return `
    import { openSync, readFileSync, readdirSync } from 'node:fs';
    import { spawnSync } from 'node:child_process';
    const { loadAddonBytes } = await import(${JSON.stringify(LOADER)});
    const binding = loadAddonBytes(readFileSync(${JSON.stringify(ADDON)}), ${JSON.stringify(dir)});
    const entries = readdirSync(${JSON.stringify(dir)});
    binding.flock(openSync(${JSON.stringify(lockFile)}, 'r+'), binding.constants.LOCK_EX | binding.constants.LOCK_NB);
    const flockExit = spawnSync('flock', ['-n', ${JSON.stringify(lockFile)}, 'true']).status;
    process.stdout.write(JSON.stringify({ exports: Object.keys(binding).sort(), entries, flockExit }));
  `;
}

function setup(): { dir: string; lockFile: string } {
  const dir = tempDir('ma-addon-out-');
  const lockFile = join(tempDir('ma-addon-lock-'), 'held');
  writeFileSync(lockFile, '');
  return { dir, lockFile };
}

const parse = (stdout: string): Loaded => JSON.parse(stdout) as Loaded;

test('the addon is loaded through an unnamed file (O_TMPFILE) in the folder: nothing appears there, and its flock is the one flock(1) sees', async () => {
  const { dir, lockFile } = setup();
  const r = await runProcess(process.execPath, ['--input-type=module', '-e', loaderScript(dir, lockFile)], {
    timeoutMs: 60_000,
  });
  assert.is(r.code, 0, r.stderr);
  const loaded = parse(r.stdout);
  assert.ok(loaded.exports.includes('flock'), loaded.exports.join(','));
  assert.equal(loaded.entries, [], 'no file of the addon in the folder');
  assert.is(loaded.flockExit, 1, 'flock(1) -n finds the file locked');
  assert.equal(readdirSync(dir), []);
  // The lock went with its process.
  assert.is((await runProcess('flock', ['-n', lockFile, 'true'])).code, 0);
});

test('a file system without O_TMPFILE (open answers EOPNOTSUPP, injected by strace): a named file, removed as soon as loaded', async () => {
  const strace = straceBinary();
  if (!strace) throw new Error('strace is needed');
  const { dir, lockFile } = setup();
  const trace = join(tempDir('ma-addon-trace-'), 'trace');
  // Only opens of the folder itself are traced and failed; the script opens it once, for O_TMPFILE.
  const r = await runProcess(
    strace,
    [
      '-f',
      '-qq',
      '-P',
      dir,
      '-e',
      'trace=openat',
      '-e',
      'inject=openat:error=EOPNOTSUPP:when=1',
      '-o',
      trace,
      '--',
      process.execPath,
      '--input-type=module',
      '-e',
      loaderScript(dir, lockFile),
    ],
    { timeoutMs: 60_000 },
  );
  assert.is(r.code, 0, r.stderr);
  assert.match(readFileSync(trace, 'utf8'), /O_TMPFILE.*EOPNOTSUPP.*INJECTED/, 'the unnamed file was refused');
  const loaded = parse(r.stdout);
  assert.ok(loaded.exports.includes('flock'));
  assert.equal(loaded.entries, [], 'the named copy is removed right after loading');
  assert.is(loaded.flockExit, 1);
  assert.equal(readdirSync(dir), []);
});

/** The opens of fs-ext's addon by `mesh-audit ARGS` run from the repository (bin/mesh-audit.js). */
async function addonOpens(args: string[]): Promise<{ code: number | null; stderr: string; opens: string[] }> {
  const strace = straceBinary();
  if (!strace) throw new Error('strace is needed');
  const r = await straceCli(strace, join(tempDir('ma-addon-trace-'), 'trace'), args, { timeoutMs: 120_000 });
  const opens = parseTrace(r.trace)
    .calls.filter((c) => c.name === 'openat' && !c.result.startsWith('-1') && c.args[1]?.endsWith('fs_ext.node"'))
    .map((c) => c.args[1]!);
  return { code: r.code, stderr: r.stderr, opens };
}

test('fs-ext is loaded only to lock an output folder: not by a command that writes no report file, once by one that does', async () => {
  const toStdout = await addonOpens([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--format',
    'json',
    '--out',
    '-',
    '--fail-on',
    'none',
  ]);
  assert.is(toStdout.code, 0, toStdout.stderr);
  assert.equal(toStdout.opens, [], '--out -: no native addon loaded');
  const toFolder = await addonOpens([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--format',
    'json',
    '--out',
    join(tempDir('ma-addon-out-'), 'out'),
    '--fail-on',
    'none',
  ]);
  assert.is(toFolder.code, 0, toFolder.stderr);
  assert.is(toFolder.opens.length, 1, toFolder.opens.join('\n'));
  assert.match(toFolder.opens[0]!, ADDON);
});

test.run();
