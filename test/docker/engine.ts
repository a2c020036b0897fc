import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, type Test } from 'uvu';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from '../support/cli.js';

/**
 * Real engines for the docker-backed tests, each started by this test process for itself: a private
 * dockerd (test/docker/engine-harness.sh: own socket and data root, no bridge) and a private Podman
 * service (test/docker/podman-harness.sh). DOCKER_HOST is ignored: a developer whose DOCKER_HOST
 * points at a real engine must not get test containers on it. Another engine is used only when named
 * for the tests: MA_TEST_DOCKER_HOST (Docker) or MA_TEST_PODMAN_HOST (Podman); the fixture image is
 * then imported into it. Only containers this process created (label `mesh-audit-test`) are ever removed.
 * Every docker-backed test file runs its engine-facing tests on both engines (forEachEngine).
 */
export interface Engine {
  kind: 'docker' | 'podman';
  dockerHost: string;
  image: string;
  /** Runs the docker client against the engine; throws with its stderr on failure. */
  docker(args: string[]): string;
  /** A fresh label value for one test's containers. */
  run: string;
  /** Options every `docker run` on this engine needs (Podman's containers need ulimits here to start). */
  runOptions: string[];
}

const HARNESS = join(PACKAGE_ROOT, 'test', 'docker', 'engine-harness.sh');
const PODMAN_HARNESS = join(PACKAGE_ROOT, 'test', 'docker', 'podman-harness.sh');
const IMAGE = 'mesh-audit-fixture:1';
const TEST_LABEL = 'mesh-audit-test';
const RUN_ID = `run-${process.pid}`;
const PODMAN_RUN_OPTIONS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

const cached = new Map<Engine['kind'], Engine | null>();
/** Why an engine could not be started: kept, so that each test file fails with it without starting it again. */
const failed = new Map<Engine['kind'], unknown>();

/** What this process must undo at exit, in one `exit` listener for all engines. */
const atExit: (() => void)[] = [];
function onExit(undo: () => void): void {
  if (atExit.length === 0) process.once('exit', () => atExit.forEach((f) => f()));
  atExit.push(undo);
}

function dockerCli(): string {
  for (const candidate of [process.env['MA_DOCKER_CLI'], '/usr/bin/docker'])
    if (candidate && existsSync(candidate)) return candidate;
  return 'docker';
}

/** The environment of every engine tool run here: never the developer's own engine. */
function toolEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const key of [
    'DOCKER_HOST',
    'DOCKER_CONTEXT',
    'DOCKER_TLS_VERIFY',
    'DOCKER_CERT_PATH',
    'CONTAINER_HOST',
    'CONTAINER_CONNECTION',
  ])
    if (!(key in extra)) delete env[key];
  return env;
}

function sh(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  // Big enough for any answer of these tools (the default 1 MiB cut a 2 MiB tar once).
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    env: toolEnv(env),
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal ?? r.error?.message}): ${r.stderr}`);
  return r.stdout;
}

/** The fixture image, from engine-harness.sh's rootfs tar, into an engine the tests were pointed at. */
function importImage(dockerHost: string): void {
  const docker = dockerCli();
  const present = spawnSync(docker, ['-H', dockerHost, 'image', 'inspect', IMAGE], {
    encoding: 'utf8',
    env: toolEnv(),
  });
  if (present.status === 0) return;
  const tar = join(tempDir('ma-rootfs-', '/tmp'), 'rootfs.tar');
  sh('bash', [HARNESS, 'rootfs', tar]);
  sh(docker, [
    '-H',
    dockerHost,
    'import',
    '--change',
    'ENV PATH=/bin',
    '--change',
    'WORKDIR /',
    '--change',
    'CMD ["/bin/sh"]',
    tar,
    IMAGE,
  ]);
}

/** What a named engine is: Podman's compatible API says so among its components. */
function kindOf(dockerHost: string): Engine['kind'] {
  const components = sh(dockerCli(), [
    '-H',
    dockerHost,
    'version',
    '--format',
    '{{range .Server.Components}}{{.Name}};{{end}}',
  ]);
  return components.split(';').includes('Podman Engine') ? 'podman' : 'docker';
}

function made(kind: Engine['kind'], dockerHost: string): Engine {
  return {
    kind,
    dockerHost,
    image: IMAGE,
    run: RUN_ID,
    docker: (args) => sh(dockerCli(), ['-H', dockerHost, ...args]),
    runOptions: kind === 'podman' ? PODMAN_RUN_OPTIONS : [],
  };
}

/** The harness and environment of each private engine, by its DOCKER_HOST: to stop it and start it again. */
const harnessOf = new Map<string, { harness: string; env: NodeJS.ProcessEnv }>();

/**
 * Stops a private engine (its daemon, as an operator's `systemctl stop` does) or starts it again on the same socket.
 * Docker keeps its containers across (stopped); Podman's harness removes this instance's containers when it stops.
 * Only engines this process started: a named one (MA_TEST_DOCKER_HOST) is never stopped.
 */
export function stopOrStartEngine(e: Engine, action: 'stop' | 'start'): void {
  const h = harnessOf.get(e.dockerHost);
  if (h === undefined) throw new Error(`${e.dockerHost} is not an engine this test process started`);
  sh('bash', [h.harness, action], h.env);
}

/** Starts an engine with `harness` in a fresh folder, removed (with its containers) when this process exits. */
function privateEngine(
  kind: Engine['kind'],
  harness: string,
  dirVariable: string,
  prefix: string,
  serviceEnv: NodeJS.ProcessEnv = {},
): string {
  const dir = mkdtempSync(join('/tmp', prefix));
  const env = { ...serviceEnv, [dirVariable]: dir };
  const socket = sh('bash', [harness, 'start'], env).trim();
  const dockerHost = `unix://${socket}`;
  harnessOf.set(dockerHost, { harness, env });
  onExit(() => {
    removeOurContainers(dockerHost);
    spawnSync('bash', [harness, 'purge'], { env: toolEnv(env), timeout: 60_000 });
  });
  sh('bash', [harness, 'image'], env);
  return dockerHost;
}

/**
 * The Docker engine, started once per test process; null only outside CI on a machine without Docker
 * (the suite is then skipped). In CI (`CI=true`) an engine that cannot be had is a failure.
 */
export function engine(): Engine | null {
  return remembered('docker', () => startEngine('docker'));
}

/** The engine of `kind` once per process, or the error it failed with, thrown again on every call. */
function remembered(kind: Engine['kind'], start: () => Engine | null): Engine | null {
  if (failed.has(kind)) throw failed.get(kind);
  if (cached.has(kind)) return cached.get(kind)!;
  try {
    const e = start();
    cached.set(kind, e);
    return e;
  } catch (err) {
    failed.set(kind, err);
    throw err;
  }
}

/** How to reach or start each kind of engine: the variable that names one, else its private harness. */
const ENGINE_SOURCES = {
  docker: {
    namedBy: 'MA_TEST_DOCKER_HOST',
    binaries: ['/usr/sbin/dockerd', '/usr/bin/dockerd'],
    missing: 'CI=true but dockerd is not installed: .ci/run must apt-get install docker.io busybox-static',
    harness: HARNESS,
    dirVariable: 'MA_DOCKER_DIR',
    dirPrefix: 'ma-engine-',
  },
  podman: {
    namedBy: 'MA_TEST_PODMAN_HOST',
    binaries: ['/usr/bin/podman'],
    missing: 'CI=true but podman is not installed: .ci/run must apt-get install podman',
    harness: PODMAN_HARNESS,
    dirVariable: 'MA_PODMAN_DIR',
    dirPrefix: 'ma-podman-',
  },
} as const;

function startEngine(kind: Engine['kind']): Engine | null {
  const source = ENGINE_SOURCES[kind];
  const named = process.env[source.namedBy];
  if (named) {
    importImage(named);
    onExit(() => removeOurContainers(named));
    // A named engine may be of the other kind (MA_TEST_DOCKER_HOST naming a Podman socket runs every
    // docker-backed test on Podman): the suites are named after what it is.
    return made(kindOf(named), named);
  }
  if (!source.binaries.some((b) => existsSync(b))) {
    if (process.env['CI'] === 'true') throw new Error(source.missing);
    return null;
  }
  return made(kind, privateEngine(kind, source.harness, source.dirVariable, source.dirPrefix));
}

/**
 * Another private Podman service, started now for one test and purged at exit, whose own process
 * environment holds `serviceEnv` (Podman passes its proxy variables into every container it makes).
 * Podman must be installed: without it this throws (in CI a missing engine is a failure).
 */
export function privatePodmanWith(serviceEnv: NodeJS.ProcessEnv): Engine {
  const source = ENGINE_SOURCES.podman;
  if (!source.binaries.some((b) => existsSync(b))) throw new Error(source.missing);
  return made('podman', privateEngine('podman', source.harness, source.dirVariable, source.dirPrefix, serviceEnv));
}

/** The Podman engine (its Docker-compatible API), as `engine()`; null only outside CI without podman. */
export function podmanEngine(): Engine | null {
  return remembered('podman', () => startEngine('podman'));
}

/**
 * Registers a file's engine-facing tests once per engine, Docker then Podman, each in a uvu suite of
 * its own named `${what} on docker|podman`: `body` adds the tests to `it` (run after it returns);
 * `index` (0, 1) keeps host ports and names of the two runs apart. An engine that cannot be started
 * is one failed test named after it — in CI a missing engine is a failure, never a skip — and the
 * other engine's tests still run; outside CI an engine that is not installed is a skipped test.
 */
export function forEachEngine(what: string, body: (e: Engine, it: Test, index: number) => void): void {
  const kinds = [
    ['docker', engine],
    ['podman', podmanEngine],
  ] as const;
  kinds.forEach(([kind, get], index) => {
    let e: Engine | null = null;
    let error: unknown;
    try {
      e = get();
    } catch (err) {
      error = err;
    }
    // Named after what the engine is (MA_TEST_DOCKER_HOST may name a Podman socket).
    const it = suite(`${what} on ${e?.kind ?? kind}`);
    if (e) body(e, it, index);
    else if (failed.has(kind)) {
      it(`the ${kind} engine for these tests starts`, () => {
        throw error;
      });
    } else it.skip(`${what} (no ${kind} on this machine)`, () => undefined);
    it.run();
  });
}

function removeOurContainers(dockerHost: string): void {
  const docker = dockerCli();
  const listed = spawnSync(docker, ['-H', dockerHost, 'ps', '-aq', '--filter', `label=${TEST_LABEL}=${RUN_ID}`], {
    encoding: 'utf8',
    env: toolEnv(),
  });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- spawnSync's output is null when the command could not start
  const ids = (listed.stdout ?? '').split('\n').filter(Boolean);
  if (ids.length > 0) spawnSync(docker, ['-H', dockerHost, 'rm', '-f', ...ids], { timeout: 60_000, env: toolEnv() });
}

/** `docker run -d` of the fixture image (or `image`), labelled as ours; returns the container id. */
export function runContainer(e: Engine, name: string, options: string[], command: string[], image = e.image): string {
  return e
    .docker([
      'run',
      '-d',
      '--name',
      name,
      '--label',
      `${TEST_LABEL}=${e.run}`,
      ...e.runOptions,
      ...options,
      image,
      ...command,
    ])
    .trim();
}

/** `docker create` of `image` (never started), labelled as ours; returns the container id. */
export function createContainer(
  e: Engine,
  name: string,
  options: string[],
  command: string[],
  image = e.image,
): string {
  return e
    .docker([
      'create',
      '--name',
      name,
      '--label',
      `${TEST_LABEL}=${e.run}`,
      ...e.runOptions,
      ...options,
      image,
      ...command,
    ])
    .trim();
}

/**
 * `podman create` through Podman's own API (the podman command as a remote client of the engine's
 * socket), labelled as ours: what a container made with the podman command gets, which is not always
 * what one made through the Docker-compatible API gets. Returns the container id.
 */
export function createWithPodman(
  e: Engine,
  name: string,
  options: string[],
  command: string[],
  image = e.image,
): string {
  return sh('podman', [
    '--remote',
    '--url',
    e.dockerHost,
    'create',
    '--name',
    name,
    '--label',
    `${TEST_LABEL}=${e.run}`,
    ...e.runOptions,
    ...options,
    image,
    ...command,
  ]).trim();
}

const BARE_IMAGE = 'mesh-audit-bare:1';

/**
 * The fixture's rootfs imported with no env at all (no `ENV PATH`): what an imported or `FROM scratch`
 * image is (static Go services). Imported into the engine once, on first use.
 */
export function bareImage(e: Engine): string {
  const present = spawnSync(dockerCli(), ['-H', e.dockerHost, 'image', 'inspect', BARE_IMAGE], {
    encoding: 'utf8',
    env: toolEnv(),
  });
  if (present.status === 0) return BARE_IMAGE;
  const tar = join(tempDir('ma-rootfs-', '/tmp'), 'rootfs.tar');
  sh('bash', [HARNESS, 'rootfs', tar]);
  e.docker(['import', '--change', 'WORKDIR /', '--change', 'CMD ["/bin/sh"]', tar, BARE_IMAGE]);
  return BARE_IMAGE;
}

export function removeContainers(e: Engine, names: string[]): void {
  let left = names;
  // Podman can refuse `rm -f` of a container that its restart policy is restarting at that very moment ("cannot
  // remove container … as it could not be stopped", 1 in 12 for `--restart always` of `exit 1`): one left behind
  // shows up in every later test's findings on that engine. So each is asked for again until none is left.
  for (let attempt = 0; left.length > 0 && attempt < 5; attempt++) {
    if (attempt > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    spawnSync(dockerCli(), ['-H', e.dockerHost, 'rm', '-f', ...left], { timeout: 60_000, env: toolEnv() });
    left = stillThere(e, left);
  }
}

/** Those of `names` (container names or ids) the engine still lists. */
function stillThere(e: Engine, names: string[]): string[] {
  const listed = spawnSync(
    dockerCli(),
    ['-H', e.dockerHost, 'ps', '-a', '--no-trunc', '--format', '{{.ID}} {{.Names}}'],
    {
      encoding: 'utf8',
      timeout: 60_000,
      env: toolEnv(),
    },
  );
  if (listed.status !== 0) return [];
  const known = listed.stdout.split(/\s+/).filter((word) => word !== '');
  return names.filter((n) =>
    known.some((k) => k === n || (n.length >= 12 && /^[0-9a-f]+$/.test(n) && k.startsWith(n))),
  );
}

/**
 * The fixture's rootfs imported again as `name` with other `changes` (e.g. `LABEL release=2`), so its
 * image id differs from the fixture's: what a tag pulled anew names. Never pulled. Returns its id.
 */
export function importFixtureAs(e: Engine, name: string, changes: string[]): string {
  const tar = join(tempDir('ma-rootfs-', '/tmp'), 'rootfs.tar');
  sh('bash', [HARNESS, 'rootfs', tar]);
  e.docker(['import', ...changes.flatMap((c) => ['--change', c]), tar, name]);
  return e.docker(['image', 'inspect', '--format', '{{.Id}}', name]).trim();
}

/**
 * Runs a container's healthcheck once, as Podman's systemd timer would: Podman runs healthchecks from
 * systemd timers, and a machine without systemd (a CI container) has none, so its containers stay
 * `starting`. A failing check is no error here (the test asks for it). Docker runs its own: not needed.
 */
export function runHealthcheckOnce(e: Engine, name: string): void {
  if (e.kind !== 'podman') return;
  spawnSync('podman', ['--remote', '--url', e.dockerHost, 'healthcheck', 'run', name], {
    encoding: 'utf8',
    env: toolEnv(),
    timeout: 60_000,
  });
}

/**
 * A created container with these labels, by curl through the Engine API: the docker command reads a label
 * file line by line and refuses a line of more than 64 kB, and dockerode sends them in the query string.
 * The test writes to its own private engine.
 */
export function createWithLabels(e: Engine, dir: string, name: string, labels: Record<string, string>): void {
  const body = join(dir, `create-${name}.json`);
  writeFileSync(
    body,
    JSON.stringify({
      Image: e.image,
      Cmd: ['sleep', '3600'],
      Labels: { [TEST_LABEL]: e.run, ...labels },
      HostConfig: { NetworkMode: 'none' },
    }),
  );
  const r = spawnSync(
    'curl',
    [
      '-sS',
      '--unix-socket',
      e.dockerHost.replace(/^unix:\/\//, ''),
      '-X',
      'POST',
      '-H',
      'Content-Type: application/json',
      '--data-binary',
      `@${body}`,
      '-w',
      '\n%{http_code}',
      `http://localhost/containers/create?name=${name}`,
    ],
    { encoding: 'utf8' },
  );
  if (!r.stdout.trim().endsWith('201')) throw new Error(`create ${name}: ${r.stdout.slice(-500)} ${r.stderr}`);
}
