import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../../src/paths.js';
import type { Engine } from './engine.js';
import { tempDir } from '../support/cli.js';

/**
 * The CLI as a child process that does not block this one (the engine proxy lives here and must go on
 * answering), with its wall time and its peak memory. The peak is the child's own `maxRSS`
 * (getrusage, as `process.resourceUsage()` reports it), written at exit by a preloaded module.
 */
export interface ChildRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  seconds: number;
  /** Peak resident memory of the node process, in MB; null when it was killed before it could say. */
  maxRssMb: number | null;
  /** True when the safety limit had to kill it. */
  killed: boolean;
}

export interface ChildOptions {
  /** A folder the child's user can read and write: holds the preload and the RSS file. */
  workDir: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Hard limit after which the child is killed (the test then fails on `killed`). Default 60 s. */
  killAfterMs?: number;
}

const PRELOAD = `import { writeFileSync } from 'node:fs';
const file = process.env.MA_TEST_RSS_FILE;
process.on('exit', () => { if (file) writeFileSync(file, String(process.resourceUsage().maxRSS)); });
`;

let runs = 0;

let readableCopy: string | undefined;

/**
 * What the CLI needs to run (bin, dist/src, policies, package.json and the production dependencies),
 * copied once into a folder any user can read: a child run as another user must not depend on where
 * the checkout lives (a home folder of mode 0700, a `mktemp -d`).
 */
function cliReadableByAll(): string {
  if (readableCopy !== undefined) return readableCopy;
  const root = tempDir('ma-cli-copy-', '/tmp');
  chmodSync(root, 0o755);
  const copy = (rel: string) =>
    cpSync(join(PACKAGE_ROOT, rel), join(root, rel), { recursive: true, dereference: true });
  for (const rel of ['package.json', 'bin', join('dist', 'src'), 'policies']) copy(rel);
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const dir = join('node_modules', name);
    if (!existsSync(join(PACKAGE_ROOT, dir, 'package.json'))) return; // an optional dependency not installed
    copy(dir);
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) visit(dep);
  };
  const own = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  for (const dep of Object.keys(own.dependencies ?? {})) visit(dep);
  // Folders a+rx, files a+r (umask and the checkout's own modes aside).
  spawnSync('chmod', ['-R', 'a+rX', root]);
  readableCopy = root;
  return root;
}

export function runCliAsync(args: string[], options: ChildOptions): Promise<ChildRun> {
  const preload = join(options.workDir, 'rss-preload.mjs');
  writeFileSync(preload, PRELOAD, { mode: 0o644 });
  chmodSync(preload, 0o644);
  const rssFile = join(options.workDir, `rss-${process.pid}-${++runs}.txt`);
  // The engine is only ever the one the test names: nothing inherited from this process's environment.
  const inherited = { ...process.env };
  for (const key of ['DOCKER_HOST', 'DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH', 'DOCKER_CONTEXT', 'DEBUG', 'NODE_DEBUG'])
    delete inherited[key];
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    // Another user runs its own readable copy of the CLI; this one runs the checkout.
    const packageRoot = options.uid !== undefined ? cliReadableByAll() : PACKAGE_ROOT;
    const child = spawn(
      process.execPath,
      ['--import', pathToFileURL(preload).href, join(packageRoot, 'bin', 'mesh-audit.js'), ...args],
      {
        cwd: options.workDir,
        env: { ...inherited, NO_COLOR: '1', ...options.env, MA_TEST_RSS_FILE: rssFile },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(options.uid !== undefined ? { uid: options.uid } : {}),
        ...(options.gid !== undefined ? { gid: options.gid } : {}),
      },
    );
    let stdout = '';
    let stderr = '';
    let killed = false;
    const limit = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, options.killAfterMs ?? 60_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => {
      clearTimeout(limit);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      let maxRssMb: number | null = null;
      try {
        maxRssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
      } catch {
        // killed before its exit handler ran
      }
      resolve({
        code,
        signal,
        stdout,
        stderr,
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        maxRssMb,
        killed,
      });
    });
  });
}

/** What the engine says about every container: what a read-only scanner must leave exactly as it was. */
export interface ContainerState {
  id: string;
  name: string;
  status: string;
  running: boolean;
  paused: boolean;
  pid: number;
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  restartCount: number;
}

/** Every container of the engine, read straight from it (docker CLI, not through any proxy). */
export function engineState(e: Engine): ContainerState[] {
  const ids = e.docker(['ps', '-aq', '--no-trunc']).split('\n').filter(Boolean).sort();
  if (ids.length === 0) return [];
  const inspected = JSON.parse(e.docker(['inspect', ...ids])) as {
    Id: string;
    Name: string;
    RestartCount: number;
    State: {
      Status: string;
      Running: boolean;
      Paused: boolean;
      Pid: number;
      ExitCode: number;
      StartedAt: string;
      FinishedAt: string;
    };
  }[];
  return inspected
    .map((c) => ({
      id: c.Id,
      name: c.Name.replace(/^\//, ''),
      status: c.State.Status,
      running: c.State.Running,
      paused: c.State.Paused,
      pid: c.State.Pid,
      exitCode: c.State.ExitCode,
      startedAt: c.State.StartedAt,
      finishedAt: c.State.FinishedAt,
      restartCount: c.RestartCount,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Waits (bounded) until `check` holds; throws with `what` when it never does. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
