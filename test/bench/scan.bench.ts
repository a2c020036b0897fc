/*
 * scan benchmark: a private engine with 300 fixture containers (100 running `sleep`, 200 created and
 * never started; --network none), the whole `mesh-audit scan` (snapshot through dockerode, /proc, image
 * inspects, evaluate, SARIF + JSON written) against `docker inspect $(docker ps -aq)` on the same
 * engine. Median of 7, interleaved. Target (issue 13): <= 1.5x. Two forms of the same program are
 * measured: the single executable (dist/package, built by `npm run bench` first), which is what the
 * .deb, the container image and the nightly timer run, and `node bin/mesh-audit.js` from source. Every
 * command runs with PATH and HOME only, as a nightly job does.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { engine } from '../docker/engine.js';
import { tempDir } from '../support/cli.js';
import { median, parallel, ratioFigure, report, round, run, timed, type Figure } from './common.js';

const RUNNING = 100;
const STOPPED = 200;
const ROUNDS = 7;
const DOCKER = '/usr/bin/docker';
const LABEL = 'mesh-audit-test';

async function main(): Promise<void> {
  const e = engine();
  if (!e) throw new Error('no Docker engine: install docker.io and busybox-static');
  const host = e.dockerHost;
  const bench = `bench-${process.pid}`;
  const setupStart = Date.now();
  const ids: string[] = [];
  const names = Array.from({ length: RUNNING + STOPPED }, (_, i) => `${bench}-${String(i).padStart(3, '0')}`);
  try {
    await parallel(names, 16, async (name) => {
      const id = (
        await run(DOCKER, [
          '-H',
          host,
          'create',
          '--name',
          name,
          '--network',
          'none',
          '--label',
          `${LABEL}=${e.run}`,
          e.image,
          'sleep',
          '3600',
        ])
      ).trim();
      ids.push(id);
    });
    const toStart = names.slice(0, RUNNING);
    const batches: string[][] = [];
    for (let i = 0; i < toStart.length; i += 10) batches.push(toStart.slice(i, i + 10));
    await parallel(batches, 4, (batch) => run(DOCKER, ['-H', host, 'start', ...batch]));
    const setupMs = Date.now() - setupStart;

    const dir = tempDir('ma-bench-scan-');
    const ledger = join(dir, 'ledger.json');
    writeFileSync(
      ledger,
      JSON.stringify([
        { id: 'app.env', type: 'file', target: join(dir, 'etc', 'app.env') },
        { id: `${bench}-000`, type: 'container', target: `${bench}-000` },
      ]),
    );
    mkdirSync(join(dir, 'etc'));
    writeFileSync(join(dir, 'etc', 'app.env'), 'A=1\nB=2\n');
    const bin = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
    const executable = join(PACKAGE_ROOT, 'dist', 'package', 'mesh-audit-linux-x64');
    if (!existsSync(executable))
      throw new Error(`${executable} is missing: run \`npm run bench\` (it runs \`npm run package\` first)`);
    const scanArgs = (out: string) => [
      'scan',
      '--docker-host',
      host,
      '--ledger',
      ledger,
      '--out',
      out,
      '--format',
      'sarif,json',
      '--hostname',
      'bench',
    ];
    const forms = [
      { name: 'single executable', cmd: executable, args: scanArgs },
      {
        name: 'from source (node bin/mesh-audit.js)',
        cmd: process.execPath,
        args: (out: string) => [bin, ...scanArgs(out)],
      },
    ];
    const refScript = `${DOCKER} -H '${host}' inspect $(${DOCKER} -H '${host}' ps -aq) > /dev/null`;
    // Both sides run with the environment of a nightly job (a systemd unit has PATH and little else),
    // not this shell's: NODE_EXTRA_CA_CERTS, where a machine sets it, makes every Node process read a
    // whole CA bundle at start (~75 ms on a 2-CPU VM), which the docker CLI never does for a socket.
    const jobEnv = {
      PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: process.env['HOME'] ?? '/root',
    };

    // The engine settles after starting 100 containers, and each command runs once unmeasured (file
    // cache, the engine's first answers), so that neither side is timed on a machine still busy.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    timed('bash', ['-c', refScript], [0], jobEnv, false);
    for (const [f, form] of forms.entries())
      timed(form.cmd, form.args(join(dir, `warm-${f}`)), [0, 1, 3], jobEnv, false);
    const scans: number[][] = forms.map(() => []);
    const refs: number[] = [];
    const codes = new Set<number>();
    for (let i = 0; i < ROUNDS; i++) {
      refs.push(timed('bash', ['-c', refScript], [0], jobEnv, false).ms);
      for (const [f, form] of forms.entries()) {
        // A fresh folder each time: no history to read, as on a host's first night.
        const out = join(dir, `out-${i}-${f}`);
        const s = timed(form.cmd, form.args(out), [0, 1, 3], jobEnv, false);
        codes.add(s.code);
        const written = readdirSync(out);
        if (!written.some((n) => n.endsWith('.sarif')) || !written.some((n) => n.endsWith('.json')))
          throw new Error(
            `${form.name}: scan wrote no SARIF/JSON in ${out}: ${written.join(', ')}\n${s.stderr.slice(-2000)}`,
          );
        scans[f]!.push(s.ms);
      }
    }
    const profileDir = process.env['MA_BENCH_PROFILE'];
    if (profileDir)
      timed(
        process.execPath,
        ['--cpu-prof', '--cpu-prof-dir', profileDir, bin, ...scanArgs(join(dir, 'out-profile'))],
        [0, 1, 3],
      );
    const version = e.docker(['version', '--format', '{{.Server.Version}}']).trim();
    const figures: Figure[] = [
      ...forms.map((form, f) =>
        ratioFigure(
          `scan, ${RUNNING + STOPPED} containers (${RUNNING} running), SARIF + JSON: ${form.name}`,
          scans[f]!,
          'docker inspect $(docker ps -aq)',
          refs,
          1.5,
          `median of ${ROUNDS}, interleaved, both with PATH and HOME only; scan runs ms: ${scans[f]!.map((ms) => round(ms)).join(', ')}; docker runs ms: ${refs.map((ms) => round(ms)).join(', ')}; scan exit ${[...codes].join('/')}; engine ${version}`,
        ),
      ),
      {
        label: 'fixture set-up (300 create + 100 start)',
        value: round(setupMs),
        unit: 'ms',
        notes: 'not a target, for orientation',
      },
      {
        label: 'docker CLI spread (max-min)',
        value: round(Math.max(...refs) - Math.min(...refs)),
        unit: 'ms',
        notes: `median ${round(median(refs))} ms`,
      },
    ];
    rmSync(dir, { recursive: true, force: true });
    report('scan', figures);
  } finally {
    // Ours only, by the names we created (the engine harness also purges its private engine at exit).
    for (let i = 0; i < names.length; i += 50) {
      await run(DOCKER, ['-H', host, 'rm', '-f', ...names.slice(i, i + 50)]).catch(() => undefined);
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
