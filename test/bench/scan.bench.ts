/*
 * scan benchmark on a realistic host (issue 27): a private engine (test/docker/engine.ts) holding the
 * realistic host model made real (test/support/realistic-live.ts: 300 containers from several images,
 * 100 running, 15–40 env keys, 8–17 labels, bind mounts, a third of the running ones listening, a
 * ledger claiming all but a few), the whole `mesh-audit scan` (snapshot through dockerode, /proc, image
 * inspects, managed root, evaluate, SARIF + JSON written) against `docker inspect $(docker ps -aq)` on
 * the same engine, in the same environment. Target: <= 1.5x.
 *
 * Two forms of the program: the single executable (dist/package, built by `npm run bench` first), which
 * the .deb, the container image and the nightly timer run, and `node bin/mesh-audit.js` from source.
 * Two environments, each given to both sides: a nightly job's (PATH and HOME only, as a systemd unit
 * runs it) and the environment `npm run bench` was started from (an operator's shell). Every round runs
 * the six commands one after another (the reference first in each environment); the figure is the
 * median of the rounds, so that both sides of a ratio meet the same moments of a shared machine.
 *
 * Usage: node dist/test/bench/scan.bench.js [rounds]   MA_BENCH_PROFILE=DIR also writes a --cpu-prof
 * of one scan from source in each environment.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { engine } from '../docker/engine.js';
import { tempDir } from '../support/cli.js';
import { startRealisticLiveHost } from '../support/realistic-live.js';
import { median, ratioFigure, report, round, timed, type Figure } from './common.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const DOCKER = '/usr/bin/docker';

async function main(): Promise<void> {
  const e = engine();
  if (!e) throw new Error('no Docker engine: install docker.io and busybox-static');
  const host = await startRealisticLiveHost(e);
  try {
    const dir = tempDir('ma-bench-scan-');
    const bin = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
    const executable = join(PACKAGE_ROOT, 'dist', 'package', 'mesh-audit-linux-x64');
    if (!existsSync(executable))
      throw new Error(`${executable} is missing: run \`npm run bench\` (it runs \`npm run package\` first)`);
    const forms = [
      { name: 'single executable', cmd: executable, args: (out: string) => host.scanArgs(out) },
      {
        name: 'from source (node bin/mesh-audit.js)',
        cmd: process.execPath,
        args: (out: string) => [bin, ...host.scanArgs(out)],
      },
    ];
    const shellEnv = { ...process.env };
    // Added by test/bench/run.mjs for its children, not the operator's.
    delete shellEnv['FORCE_COLOR'];
    delete shellEnv['NO_COLOR'];
    const envs = [
      {
        name: 'job environment (PATH and HOME only)',
        short: 'job env',
        env: { PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: process.env['HOME'] ?? '/root' },
      },
      {
        name: `the invoking shell's environment (${Object.keys(shellEnv).length} variables, NODE_EXTRA_CA_CERTS ${shellEnv['NODE_EXTRA_CA_CERTS'] ? 'set' : 'not set'})`,
        short: 'shell env',
        env: shellEnv,
      },
    ];
    const hostArg = `'${host.dockerHost}'`;
    const refScript = `${DOCKER} -H ${hostArg} inspect $(${DOCKER} -H ${hostArg} ps -aq) > /dev/null`;

    // The engine settles after starting 100 containers, and each command runs once unmeasured (file
    // cache, the engine's first answers), so that neither side is timed on a machine still busy.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    for (const env of envs) {
      timed('bash', ['-c', refScript], [0], env.env, false);
      for (const [f, form] of forms.entries())
        timed(form.cmd, form.args(join(dir, `warm-${env.short}-${f}`)), [0, 1, 3], env.env, false);
    }
    const scans = envs.map(() => forms.map((): number[] => []));
    const refs = envs.map((): number[] => []);
    const codes = new Set<number>();
    let lastOut = '';
    for (let i = 0; i < ROUNDS; i++) {
      for (const [v, env] of envs.entries()) {
        refs[v]!.push(timed('bash', ['-c', refScript], [0], env.env, false).ms);
        for (const [f, form] of forms.entries()) {
          // A fresh folder each time: no history to read, as on a host's first night.
          const out = join(dir, `out-${i}-${v}-${f}`);
          const s = timed(form.cmd, form.args(out), [0, 1, 3], env.env, false);
          codes.add(s.code);
          const written = readdirSync(out);
          if (!written.some((n) => n.endsWith('.sarif')) || !written.some((n) => n.endsWith('.json')))
            throw new Error(
              `${form.name}: scan wrote no SARIF/JSON in ${out}: ${written.join(', ')}\n${s.stderr.slice(-2000)}`,
            );
          scans[v]![f]!.push(s.ms);
          lastOut = out;
        }
      }
    }
    const profileDir = process.env['MA_BENCH_PROFILE'];
    if (profileDir)
      for (const env of envs)
        timed(
          process.execPath,
          ['--cpu-prof', '--cpu-prof-dir', profileDir, bin, ...host.scanArgs(join(dir, `out-profile-${env.short}`))],
          [0, 1, 3],
          env.env,
          false,
        );
    // What the scan found on this host (the same in every run): said, so that a change in it is seen.
    const found = JSON.parse(readFileSync(join(lastOut, 'mesh-audit.json'), 'utf8')) as {
      summary: { complete: boolean };
      findings: { ruleId: string }[];
    };
    const byRule = new Map<string, number>();
    for (const f of found.findings) byRule.set(f.ruleId, (byRule.get(f.ruleId) ?? 0) + 1);
    const findings = [...byRule].map(([rule, n]) => `${rule} ×${n}`).join(', ') || 'none';
    const version = e.docker(['version', '--format', '{{.Server.Version}}']).trim();
    const figures: Figure[] = [];
    for (const [v, env] of envs.entries())
      for (const [f, form] of forms.entries())
        figures.push(
          ratioFigure(
            `scan, realistic host of ${host.counts.containers} containers, SARIF + JSON: ${form.name}, ${env.name}`,
            scans[v]![f]!,
            `docker inspect $(docker ps -aq), ${env.short}`,
            refs[v]!,
            1.5,
            `median of ${ROUNDS} rounds, interleaved; scan ms: ${scans[v]![f]!.map((ms) => round(ms, 0)).join(', ')}; ` +
              `docker ms: ${refs[v]!.map((ms) => round(ms, 0)).join(', ')}; scan exit ${[...codes].join('/')} ` +
              `(complete: ${found.summary.complete}); findings: ${findings}; engine ${version}`,
          ),
        );
    figures.push({
      label: 'fixture set-up (images, files, creates and starts)',
      value: round(host.setupMs),
      unit: 'ms',
      notes: 'not a target, for orientation',
    });
    figures.push({
      label: 'docker CLI spread (max-min), job env',
      value: round(Math.max(...refs[0]!) - Math.min(...refs[0]!)),
      unit: 'ms',
      notes: `median ${round(median(refs[0]!))} ms: how much this machine moved during the runs`,
    });
    report('scan', figures, `${host.describe()}.`);
  } finally {
    await host.remove();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
