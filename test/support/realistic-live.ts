import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import type { Engine } from '../docker/engine.js';
import { tempDir } from './cli.js';
import { sha256 } from './host-model.js';
import { machineScopeArgs } from './machine-scope.js';
import { composeFileText, realisticHost, type RealisticContainer } from './realistic-host.js';

/**
 * The realistic host model (test/support/realistic-host.ts) made real on an engine the caller started
 * (a private dockerd, test/docker/engine.ts): the benchmarks' host (issue 27), also used to measure a
 * scan with a long history (issue 32).
 *
 * Several model hosts (seeds `seed`, `seed + 1`, …) are laid side by side until there are `containers`
 * containers, each named `h<seed>-<name>` with its files under `<dir>/etc/mesh/h<seed>/`:
 * - images: one per model image, `docker import`ed from the fixture's busybox rootfs with that image's
 *   env and labels (so the container's env is image env + its own, as on a real host);
 * - env: 15 to 40 keys from the image, the composed env file (Docker's literal `--env-file` for plain
 *   containers; for Compose-labelled ones the values as Compose 1.29 reads the file, CRLF included) and
 *   a few `-e`; database, cache and mail URLs with credentials;
 * - 8 to 15 labels (OCI, Compose, mesh; `mesh.source-digests` of the file the container was made from);
 * - bind mounts (a config file read-only, a data folder) and named volumes;
 * - `running` of them running, spread evenly; a third of those listen (`httpd`, no traffic is ever sent):
 *   in their own network namespace (`--network none`) on loopback and on every interface (IPv4 and IPv6),
 *   or on the host network on 127.0.0.1 and ::1 only, on ports free when the host is made; about one in
 *   12 of the others exited (ran `true`), the rest created and never started. No bridge network, no
 *   published port;
 * - a ledger (JSON) claiming every container and composed file but `unclaimed` containers; each claimed
 *   `docker run` container's entry declares the keys it is given with `-e` (`env:`), and a Compose-labelled
 *   container's labels name a Compose file (written here) whose `environment:` gives them.
 * The files are written once and never changed: a healthy host, whose few findings are its unclaimed
 * containers and what the model makes of their labels.
 */
export interface RealisticLiveHost {
  dockerHost: string;
  /** Temp folder holding the ledger, the managed root and the engine-side files. */
  dir: string;
  ledger: string;
  managedRoot: string;
  hostname: string;
  names: string[];
  images: string[];
  counts: {
    containers: number;
    running: number;
    exited: number;
    created: number;
    listening: number;
    hostNetwork: number;
    unclaimed: number;
    envKeys: { min: number; max: number; mean: number };
    labels: { min: number; max: number; mean: number };
    binds: number;
    volumes: number;
    files: number;
  };
  /** How long making it took (creates, starts), ms. */
  setupMs: number;
  /** The arguments of `mesh-audit scan` on this host, writing to `out` (`formats`: `--format`). */
  scanArgs(out: string, formats?: string): string[];
  /** One paragraph saying what the host is (for BENCHMARKS.md). */
  describe(): string;
  /** Removes the containers, volumes, images and files made here. */
  remove(): Promise<void>;
}

const DOCKER = '/usr/bin/docker';
const HARNESS = join(PACKAGE_ROOT, 'test', 'docker', 'engine-harness.sh');

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(DOCKER, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`docker ${args.slice(2, 4).join(' ')} exited ${code}: ${err}`)),
    );
  });
}

async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The loopback ports freePort gave so far: the kernel may give a port it gave before, once nothing holds it. */
const portsGiven = new Set<number>();

/**
 * A loopback port nobody listens on now (the host network is shared with whatever else runs here), and one not given
 * before: two host-network containers given the same port, the second's server could not listen, and the scan would
 * rightly say that it does not use the port its ledger entry holds (MA3003).
 */
async function freePort(address: string): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, address, () => {
        const given = (server.address() as { port: number }).port;
        server.close(() => resolve(given));
      });
    });
    if (!portsGiven.has(port)) {
      portsGiven.add(port);
      return port;
    }
  }
}

interface Planned {
  model: RealisticContainer;
  seed: number;
  name: string;
  state: 'running' | 'exited' | 'created';
  network: 'none' | 'host';
  /** `httpd -p` arguments, one server each. */
  listen: { address: string; port: number }[];
  claimed: boolean;
}

export async function startRealisticLiveHost(
  e: Engine,
  options: { containers?: number; running?: number; unclaimed?: number; seed?: number; label?: string } = {},
): Promise<RealisticLiveHost> {
  const total = options.containers ?? 300;
  const running = options.running ?? 100;
  const unclaimedCount = options.unclaimed ?? 4;
  const firstSeed = options.seed ?? 27;
  const label = options.label ?? 'mesh-audit-test';
  const host = e.dockerHost;
  const started = Date.now();
  const dir = tempDir('ma-realistic-', '/tmp');
  const managedRoot = join(dir, 'etc', 'mesh');
  const ledger = join(dir, 'ledger.json');
  const tag = `bench${process.pid}`;
  // This machine's own listeners, read before any container of this host listens (test/support/machine-scope.ts).
  const outOfScope = machineScopeArgs();

  // The containers of consecutive model hosts, up to `total`.
  const planned: Planned[] = [];
  for (let seed = firstSeed; planned.length < total; seed++) {
    for (const model of realisticHost(seed).containers) {
      if (planned.length >= total) break;
      planned.push({
        model,
        seed,
        name: `${tag}-h${seed}-${model.name}`,
        state: 'created',
        network: model.network === 'host' ? 'host' : 'none',
        listen: [],
        claimed: true,
      });
    }
  }
  // `running` of them run, spread evenly over the list (every third of 300 at 100; every 6th or 7th of
  // 2,000 at 300); a third of those listen; every 12th of the others ran and exited.
  const runs = (i: number) => Math.floor((i * running) / total) !== Math.floor(((i - 1) * running) / total);
  planned.forEach((p, i) => {
    if (i === 0 || runs(i)) p.state = 'running';
    else if (i % 12 === 1) p.state = 'exited';
  });
  const listeners = planned.filter((p) => p.state === 'running').filter((_, k) => k % 3 === 0);
  for (const p of listeners) {
    for (const s of p.model.listening.slice(0, 2)) {
      const v6 = s.protocol.endsWith('6');
      if (p.network === 'host') {
        // The host's own network: loopback only, on a port free now.
        const address = v6 ? '::1' : '127.0.0.1';
        p.listen.push({ address, port: await freePort(address) });
      } else {
        // Its own namespace: whatever the model says, an address it cannot have becomes every interface.
        const address = ['127.0.0.1', '::1', '0.0.0.0', '::'].includes(s.address) ? s.address : '0.0.0.0';
        if (!p.listen.some((l) => l.port === s.port)) p.listen.push({ address, port: s.port });
      }
    }
  }
  // A few unclaimed, spread over the list.
  for (let k = 0; k < unclaimedCount; k++)
    planned[Math.floor(((k + 0.5) * planned.length) / unclaimedCount)]!.claimed = false;

  // Images: the fixture's rootfs with each model image's env and labels.
  const rootfs = join(dir, 'rootfs.tar');
  const made = spawnSync('bash', [HARNESS, 'rootfs', rootfs], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`rootfs: ${made.stderr}`);
  const images = [...new Map(planned.map((p) => [p.model.image.ref, p.model.image])).values()];
  await inParallel(images, 3, (image) =>
    run([
      '-H',
      host,
      'import',
      ...Object.entries({ ...image.env, PATH: `${image.env['PATH'] ?? '/usr/bin'}:/bin` }).flatMap(([k, v]) => [
        '--change',
        `ENV ${k}=${v}`,
      ]),
      ...Object.entries(image.labels).flatMap(([k, v]) => ['--change', `LABEL ${k}=${JSON.stringify(v)}`]),
      '--change',
      'CMD ["/bin/sh"]',
      rootfs,
      image.ref,
    ]),
  );
  rmSync(rootfs, { force: true });

  // Files: each model host's composed env files and config files, data folders; the ledger.
  const entries: Record<string, unknown>[] = [];
  const written = new Set<string>();
  const local = (p: Planned, path: string) => path.replace('/etc/mesh/', `${managedRoot}/h${p.seed}/`);
  const write = (path: string, text: string, mode: number) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text, { mode });
  };
  const envKeys: number[] = [];
  const labelCounts: number[] = [];
  let binds = 0;
  const volumes = new Set<string>();
  const createArgs = new Map<Planned, string[]>();
  for (const p of planned) {
    const c = p.model;
    const eol = c.compose ? '\r\n' : '\n';
    const text =
      `# ${c.module}\n# written by mesh-host; do not edit${eol}\n` +
      c.fileLines.map((l) => `${l.key}=${l.written}${eol}`).join('');
    const envFile = c.envFile === null ? null : local(p, c.envFile);
    if (envFile !== null && !written.has(envFile)) {
      written.add(envFile);
      write(envFile, text, 0o600);
      entries.push({
        id: `h${p.seed}.${c.module}.env`,
        type: 'file',
        target: envFile,
        origin: 'declared',
        module: c.module,
        digest: sha256(text),
      });
    }
    // A Compose-labelled container's Compose file, where its labels say: its service's environment: names the keys
    // it is given inline (the containers are made with `docker create`, as Compose would have made them).
    const composeFile = c.compose ? local(p, c.labels['com.docker.compose.project.config_files']!) : null;
    if (composeFile !== null && !written.has(composeFile)) {
      written.add(composeFile);
      write(composeFile, composeFileText(c, p.network), 0o640);
      entries.push({ id: `h${p.seed}.${c.module}.compose`, type: 'file', target: composeFile, origin: 'declared' });
    }
    const config = c.configFile === null ? null : local(p, c.configFile);
    if (config !== null && !written.has(config)) {
      written.add(config);
      write(config, `[server]\nname = ${c.module}\n`, 0o640);
      entries.push({ id: `h${p.seed}.${c.module}.config`, type: 'file', target: config, origin: 'declared' });
    }
    const data = c.dataDir === null ? null : join(dir, 'srv', `h${p.seed}`, c.module);
    if (data !== null) mkdirSync(data, { recursive: true });
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.labels)) labels[k] = v.replaceAll('/etc/mesh/', `${managedRoot}/h${p.seed}/`);
    if (c.meshLabelled) labels['mesh.source-digests'] = sha256(text);
    labels[label] = e.run;
    labelCounts.push(Object.keys(labels).length - 1);
    const own = Object.entries(c.extraEnv);
    const fromFile = c.fileLines.filter((l) => !(l.key in c.extraEnv));
    envKeys.push(new Set([...Object.keys(c.image.env), ...fromFile.map((l) => l.key), ...own.map(([k]) => k)]).size);
    const mounts: string[] = [];
    if (config !== null) mounts.push('-v', `${config}:/etc/${c.module}/${c.module}.conf:ro`);
    if (data !== null) mounts.push('-v', `${data}:/data`);
    binds += mounts.length / 2;
    for (const v of c.volumes) {
      const volume = `${tag}-h${p.seed}-${v.name}`;
      volumes.add(volume);
      mounts.push('-v', `${volume}:${v.destination}`);
    }
    const command =
      p.state === 'running'
        ? p.listen.length > 0
          ? [
              'sh',
              '-c',
              p.listen
                .map((l) => `httpd -h /www -p ${l.address.includes(':') ? `[${l.address}]` : l.address}:${l.port}; `)
                .join('') + 'exec sleep 36000',
            ]
          : ['sleep', '36000']
        : p.state === 'exited'
          ? ['true']
          : ['sleep', '36000'];
    createArgs.set(p, [
      '-H',
      host,
      'create',
      '--name',
      p.name,
      '--network',
      p.network,
      ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
      // Plain containers take the file literally, as `docker run --env-file` does; Compose-made ones
      // get the values Compose read from it.
      ...(c.compose || envFile === null
        ? fromFile.flatMap((l) => ['-e', `${l.key}=${l.value}`])
        : ['--env-file', envFile]),
      ...own.flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      ...mounts,
      ...e.runOptions,
      c.image.ref,
      ...command,
    ]);
    if (p.claimed) {
      entries.push({
        id: `h${p.seed}.${c.module}.server${c.name.endsWith('-old') ? '.old' : ''}`,
        type: 'container',
        target: p.name,
        origin: 'declared',
        module: c.module,
        holds: p.network === 'host' ? [...new Set(p.listen.map((l) => l.port))].sort((a, b) => a - b) : [],
        sources: envFile !== null ? [envFile] : [],
        // What it is given with `docker run -e`, as the mesh declares it (Compose's are in its Compose file).
        ...(!c.compose && own.length > 0 ? { env: own.map(([k]) => k).sort() } : {}),
      });
    }
  }
  writeFileSync(ledger, '[\n' + entries.map((x) => '  ' + JSON.stringify(x)).join(',\n') + '\n]\n');

  const names = planned.map((p) => p.name);
  const remove = async (): Promise<void> => {
    const batches: string[][] = [];
    for (let i = 0; i < names.length; i += 50) batches.push(names.slice(i, i + 50));
    await inParallel(batches, 4, (batch) => run(['-H', host, 'rm', '-f', '-v', ...batch]).catch(() => undefined));
    if (volumes.size > 0) await run(['-H', host, 'volume', 'rm', '-f', ...volumes]).catch(() => undefined);
    await run(['-H', host, 'rmi', ...images.map((i) => i.ref)]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await inParallel(planned, 16, (p) => run(createArgs.get(p)!));
    const toStart = planned.filter((p) => p.state !== 'created').map((p) => p.name);
    const batches: string[][] = [];
    for (let i = 0; i < toStart.length; i += 10) batches.push(toStart.slice(i, i + 10));
    await inParallel(batches, 4, (batch) => run(['-H', host, 'start', ...batch]));
  } catch (error) {
    await remove();
    throw error;
  }
  const stats = (xs: number[]) => ({
    min: Math.min(...xs),
    max: Math.max(...xs),
    mean: Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10,
  });
  const counts: RealisticLiveHost['counts'] = {
    containers: planned.length,
    running: planned.filter((p) => p.state === 'running').length,
    exited: planned.filter((p) => p.state === 'exited').length,
    created: planned.filter((p) => p.state === 'created').length,
    listening: planned.filter((p) => p.listen.length > 0).length,
    hostNetwork: planned.filter((p) => p.state === 'running' && p.network === 'host').length,
    unclaimed: planned.filter((p) => !p.claimed).length,
    envKeys: stats(envKeys),
    labels: stats(labelCounts),
    binds,
    volumes: volumes.size,
    files: written.size,
  };
  const hostname = 'bench';
  return {
    dockerHost: host,
    dir,
    ledger,
    managedRoot,
    hostname,
    names,
    images: images.map((i) => i.ref),
    counts,
    setupMs: Date.now() - started,
    scanArgs: (out, formats = 'sarif,json') => [
      'scan',
      '--docker-host',
      host,
      '--ledger',
      ledger,
      '--managed-root',
      managedRoot,
      '--out',
      out,
      '--format',
      formats,
      '--hostname',
      hostname,
      // This machine's own sockets listening beyond loopback before the tests (test/support/machine-scope.ts).
      ...outOfScope,
    ],
    describe: () =>
      `${counts.containers} containers from ${images.length} images (the realistic host model, ` +
      `test/support/realistic-host.ts, seeds ${firstSeed}–${planned.at(-1)!.seed}, made real by ` +
      `test/support/realistic-live.ts): ${counts.running} running, ${counts.exited} exited, ${counts.created} created; ` +
      `${counts.envKeys.min}–${counts.envKeys.max} env keys each (mean ${counts.envKeys.mean}; image env, ` +
      `env files read literally or as Compose reads them, URLs with credentials), ${counts.labels.min}–` +
      `${counts.labels.max} labels (mean ${counts.labels.mean}; OCI, Compose, mesh), ${counts.binds} bind mounts, ` +
      `${counts.volumes} named volumes; ${counts.listening} of the running listen (httpd, no traffic), ` +
      `${counts.hostNetwork} running on the host network (loopback only), the others in their own network ` +
      `namespace (loopback and every interface, IPv4 and IPv6); ${counts.files} composed files under ` +
      `--managed-root; a ledger claiming all but ${counts.unclaimed} containers`,
    remove,
  };
}
