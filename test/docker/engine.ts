import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, symlinkSync, copyFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from '../support/cli.js';

/**
 * A real Docker Engine for the docker-backed tests: `DOCKER_HOST` when given, otherwise a private
 * dockerd started by test/docker/engine-harness.sh (own socket and data root, no bridge). The fixture
 * image is imported from a busybox-static rootfs (no registry here). Only containers this process
 * created (label `mesh-audit-test`) are ever removed.
 */
export interface Engine {
  dockerHost: string;
  image: string;
  /** Runs the docker client against the engine; throws with its stderr on failure. */
  docker(args: string[]): string;
  /** A fresh label value for one test's containers. */
  run: string;
}

const HARNESS = join(PACKAGE_ROOT, 'test', 'docker', 'engine-harness.sh');
const IMAGE = 'mesh-audit-fixture:1';
const TEST_LABEL = 'mesh-audit-test';
const RUN_ID = `run-${process.pid}`;

let cached: Engine | null | undefined;

function dockerCli(): string {
  for (const candidate of [process.env['MA_DOCKER_CLI'], '/usr/bin/docker']) if (candidate && existsSync(candidate)) return candidate;
  return 'docker';
}

function sh(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, input?: Buffer): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000, ...(input ? { input } : {}) });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

function importImage(dockerHost: string): void {
  const docker = dockerCli();
  const present = spawnSync(docker, ['-H', dockerHost, 'image', 'inspect', IMAGE], { encoding: 'utf8' });
  if (present.status === 0) return;
  const rootfs = tempDir('ma-rootfs-');
  mkdirSync(join(rootfs, 'bin'));
  copyFileSync('/bin/busybox', join(rootfs, 'bin', 'busybox'));
  chmodSync(join(rootfs, 'bin', 'busybox'), 0o755);
  for (const applet of ['sh', 'sleep', 'httpd', 'cat', 'env', 'ls']) symlinkSync('busybox', join(rootfs, 'bin', applet));
  for (const dir of ['etc', 'tmp', 'www', 'proc', 'sys', 'dev']) mkdirSync(join(rootfs, dir));
  const tar = spawnSync('tar', ['-C', rootfs, '-c', '.']);
  sh(docker, ['-H', dockerHost, 'import', '-', IMAGE], {}, tar.stdout);
}

/**
 * The engine, started once per test process; null only outside CI on a machine without Docker
 * (the suite is then skipped). In CI (`CI=true`) an engine that cannot be had is a failure.
 */
export function engine(): Engine | null {
  if (cached !== undefined) return cached;
  const ci = process.env['CI'] === 'true';
  let dockerHost = process.env['DOCKER_HOST'];
  if (!dockerHost) {
    if (!existsSync('/usr/sbin/dockerd') && !existsSync('/usr/bin/dockerd')) {
      if (ci) throw new Error('CI=true but dockerd is not installed: .ci/run must apt-get install docker.io busybox-static');
      cached = null;
      return null;
    }
    const dir = mkdtempSync('/tmp/ma-engine-');
    const env = { MA_DOCKER_DIR: dir };
    const socket = sh('bash', [HARNESS, 'start'], env).trim();
    sh('bash', [HARNESS, 'image'], env);
    dockerHost = `unix://${socket}`;
    process.once('exit', () => {
      removeOurContainers(dockerHost!);
      spawnSync('bash', [HARNESS, 'purge'], { env: { ...process.env, ...env }, timeout: 60_000 });
    });
  } else {
    importImage(dockerHost);
    process.once('exit', () => removeOurContainers(dockerHost!));
  }
  const host = dockerHost;
  cached = {
    dockerHost: host,
    image: IMAGE,
    run: RUN_ID,
    docker: (args) => sh(dockerCli(), ['-H', host, ...args]),
  };
  return cached;
}

function removeOurContainers(dockerHost: string): void {
  const docker = dockerCli();
  const ids = spawnSync(docker, ['-H', dockerHost, 'ps', '-aq', '--filter', `label=${TEST_LABEL}=${RUN_ID}`], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  if (ids.length > 0) spawnSync(docker, ['-H', dockerHost, 'rm', '-f', ...ids], { timeout: 60_000 });
}

/** `docker run -d` of the fixture image, labelled as ours; returns the container id. */
export function runContainer(e: Engine, name: string, options: string[], command: string[]): string {
  return e.docker(['run', '-d', '--name', name, '--label', `${TEST_LABEL}=${e.run}`, ...options, e.image, ...command]).trim();
}

export function removeContainers(e: Engine, names: string[]): void {
  if (names.length > 0) spawnSync(dockerCli(), ['-H', e.dockerHost, 'rm', '-f', ...names], { timeout: 60_000 });
}
