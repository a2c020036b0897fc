/*
 * scan benchmark on a realistic host (issue 27): a private engine (test/docker/engine.ts) holding the
 * realistic host model made real (test/support/realistic-live.ts: 300 containers from several images,
 * 100 running, 15–40 env keys, 8–17 labels, bind mounts, a third of the running ones listening, a
 * ledger claiming all but a few), the whole `mesh-audit scan` (snapshot through dockerode, /proc, image
 * inspects, managed root, evaluate, SARIF + JSON written) against two references on the same engine, in
 * the same environment:
 * - `docker inspect $(docker ps -aq)` (issue 27's target: <= 1.5x);
 * - the same reads the scan makes, done by hand (issue 44's target: <= 1.0x, wall and CPU): `docker
 *   version`, `info`, `network ls`, `volume ls`, `inspect` of every container and `image inspect` of every
 *   image they use, `cat` of /proc/PID/net/{tcp,tcp6,udp,udp6} and /proc/PID/cgroup and `ls -l
 *   /proc/PID/fd` of every running container's process, the host's /proc/net tables, and `sha256sum` of
 *   every file under the managed root and of the ledger (BY_HAND below).
 * CPU is user + system time of the command and every process it waited for (/proc/self/stat's cutime and
 * cstime around each run); the engine's own CPU (dockerd) is said beside it, not counted on either side.
 *
 * Then the same host model laid out to 2,000 containers (300 running: a host's processes bounded as on a
 * 2-core machine), the host of 300 removed first: the scan from both forms in the job environment
 * against both references, interleaved the same way.
 *
 * Two forms of the program: the single executable (dist/package, built by `npm run bench` first), which
 * the .deb, the container image and the nightly timer run, and `node bin/mesh-audit.js` from source.
 * Two environments, each given to both sides: a nightly job's (PATH and HOME only, as a systemd unit
 * runs it) and the environment `npm run bench` was started from (an operator's shell). Every round runs
 * the commands one after another (the references first in each environment); the figure is the median
 * of the rounds, so that both sides of a ratio meet the same moments of a shared machine.
 *
 * Usage: node dist/test/bench/scan.bench.js [rounds at 300] [rounds at 2,000]   MA_BENCH_PROFILE=DIR
 * also writes a --cpu-prof of one scan from source in each environment (and at 2,000, into DIR/2000).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { engine, type Engine } from '../docker/engine.js';
import { tempDir } from '../support/cli.js';
import { startRealisticLiveHost, type RealisticLiveHost } from '../support/realistic-live.js';
import { median, ratioFigure, report, round, timed, type Figure } from './common.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const LARGE_ROUNDS = Number(process.argv[3] ?? 3);
/** The large host: 2,000 containers, 300 of them running (each a shim and one or two processes here). */
const LARGE = { containers: 2000, running: 300 };
const DOCKER = '/usr/bin/docker';
/** Clock ticks per second of /proc's times (`getconf CLK_TCK`: 100 on Linux). */
const TICK_MS = 10;

/**
 * The reads a `mesh-audit scan` of this host makes, by hand: $1 the engine, $2 the managed root, $3 the
 * ledger, $4 the docker client; given a fifth argument, says on stderr how much it read.
 */
const BY_HAND = String.raw`set -euo pipefail
host=$1 root=$2 ledger=$3 docker=$4
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$docker" -H "$host" version > /dev/null
"$docker" -H "$host" info > /dev/null 2>&1
"$docker" -H "$host" network ls > /dev/null
"$docker" -H "$host" volume ls > /dev/null
"$docker" -H "$host" inspect --type container --format '{{.State.Pid}} {{.Image}} {{json .}}' $("$docker" -H "$host" ps -aq) > "$t/containers"
cut -d' ' -f2 "$t/containers" | sort -u > "$t/images"
xargs "$docker" -H "$host" image inspect < "$t/images" > /dev/null
awk '$1 > 0 { p = "/proc/" $1; print p "/net/tcp"; print p "/net/tcp6"; print p "/net/udp"; print p "/net/udp6"; print p "/cgroup" }' "$t/containers" > "$t/proc"
xargs cat < "$t/proc" > /dev/null
awk '$1 > 0 { print "/proc/" $1 "/fd" }' "$t/containers" | xargs ls -l > /dev/null
cat /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 > /dev/null
find "$root" -type f -print0 > "$t/files"
xargs -0 sha256sum < "$t/files" > /dev/null
sha256sum "$ledger" > /dev/null
if [ $# -ge 5 ]; then
  echo "$(wc -l < "$t/containers") containers inspected, $(wc -l < "$t/images") images, $(awk '$1 > 0' "$t/containers" | wc -l) processes' /proc read, $(tr -cd '\0' < "$t/files" | wc -c) files under the managed root hashed (and the ledger)" >&2
fi
`;

/** Two consecutive CPU times of a /proc/PID/stat, summed, ms (`first`: the index of the first, field 3 being 0). */
function statCpuMs(path: string, first: number): number {
  const stat = readFileSync(path, 'utf8');
  const rest = stat
    .slice(stat.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  return (Number(rest[first]) + Number(rest[first + 1])) * TICK_MS;
}
/** CPU of the children this process waited for so far (cutime + cstime: fields 16 and 17), ms. */
const childrenCpuMs = () => statCpuMs('/proc/self/stat', 13);
/** The private engine's dockerd (its pid file sits beside its socket), or null when not ours to read. */
function dockerdPid(e: Engine): number | null {
  try {
    const pid = Number(readFileSync(join(dirname(e.dockerHost.replace(/^unix:\/\//, '')), 'docker.pid'), 'utf8'));
    statCpuMs(`/proc/${pid}/stat`, 11);
    return pid;
  } catch {
    return null;
  }
}

interface Env {
  name: string;
  short: string;
  env: NodeJS.ProcessEnv;
}
interface Form {
  name: string;
  cmd: string;
  args: (out: string) => string[];
}
/** What each run took: wall, its own CPU (children included), the engine's CPU meanwhile, all ms. */
interface Runs {
  ms: number[];
  cpu: number[];
  engine: number[];
}
const runs = (): Runs => ({ ms: [], cpu: [], engine: [] });

/** Runs a command as common.ts's `timed` does, and what it cost in CPU, its own and the engine's. */
function measured(
  into: Runs | null,
  enginePid: number | null,
  cmd: string,
  args: string[],
  okCodes: number[],
  env: NodeJS.ProcessEnv,
): ReturnType<typeof timed> {
  const cpu0 = childrenCpuMs();
  const engine0 = enginePid === null ? 0 : statCpuMs(`/proc/${enginePid}/stat`, 11);
  const r = timed(cmd, args, okCodes, env, false);
  if (into) {
    into.ms.push(r.ms);
    into.cpu.push(childrenCpuMs() - cpu0);
    if (enginePid !== null) into.engine.push(statCpuMs(`/proc/${enginePid}/stat`, 11) - engine0);
  }
  return r;
}

const list = (xs: number[]) => xs.map((x) => round(x, 0)).join(', ');

/**
 * The interleaved rounds on one host: in each environment the two references, then each form of the
 * scan; every command once unmeasured first. Returns the figures.
 */
function compare(
  e: Engine,
  host: RealisticLiveHost,
  dir: string,
  forms: Form[],
  envs: Env[],
  rounds: number,
  bin: string,
): Figure[] {
  const enginePid = dockerdPid(e);
  const hostArg = `'${host.dockerHost}'`;
  const inspectScript = `${DOCKER} -H ${hostArg} inspect $(${DOCKER} -H ${hostArg} ps -aq) > /dev/null`;
  const byHandArgs = (count = false) => [
    '-c',
    BY_HAND,
    'by-hand',
    host.dockerHost,
    host.managedRoot,
    host.ledger,
    DOCKER,
    ...(count ? ['count'] : []),
  ];
  const size = host.counts.containers;
  const refRead = measured(null, null, 'bash', byHandArgs(true), [0], envs[0]!.env).stderr.trim();
  for (const env of envs) {
    measured(null, null, 'bash', ['-c', inspectScript], [0], env.env);
    measured(null, null, 'bash', byHandArgs(), [0], env.env);
    for (const [f, form] of forms.entries())
      measured(null, null, form.cmd, form.args(join(dir, `warm-${size}-${env.short}-${f}`)), [0, 1, 3], env.env);
  }
  const scans = envs.map(() => forms.map(runs));
  const inspects = envs.map(runs);
  const byHand = envs.map(runs);
  const codes = new Set<number>();
  let lastOut = '';
  for (let i = 0; i < rounds; i++) {
    for (const [v, env] of envs.entries()) {
      measured(inspects[v]!, enginePid, 'bash', ['-c', inspectScript], [0], env.env);
      measured(byHand[v]!, enginePid, 'bash', byHandArgs(), [0], env.env);
      for (const [f, form] of forms.entries()) {
        // A fresh folder each time: no history to read, as on a host's first night.
        const out = join(dir, `out-${size}-${i}-${v}-${f}`);
        const s = measured(scans[v]![f]!, enginePid, form.cmd, form.args(out), [0, 1, 3], env.env);
        codes.add(s.code);
        const written = readdirSync(out);
        if (!written.some((n) => n.endsWith('.sarif')) || !written.some((n) => n.endsWith('.json')))
          throw new Error(
            `${form.name}: scan wrote no SARIF/JSON in ${out}: ${written.join(', ')}\n${s.stderr.slice(-2000)}`,
          );
        lastOut = out;
      }
    }
  }
  const profileDir = process.env['MA_BENCH_PROFILE'];
  if (profileDir) {
    const into = size === 300 ? profileDir : join(profileDir, String(size));
    mkdirSync(into, { recursive: true });
    for (const env of envs)
      measured(
        null,
        null,
        process.execPath,
        ['--cpu-prof', '--cpu-prof-dir', into, bin, ...host.scanArgs(join(dir, `out-profile-${size}-${env.short}`))],
        [0, 1, 3],
        env.env,
      );
  }
  // What the scan found on this host (the same in every run): said, so that a change in it is seen.
  const found = JSON.parse(readFileSync(join(lastOut, 'mesh-audit.json'), 'utf8')) as {
    summary: { complete: boolean };
    findings: { ruleId: string }[];
  };
  const byRule = new Map<string, number>();
  for (const f of found.findings) byRule.set(f.ruleId, (byRule.get(f.ruleId) ?? 0) + 1);
  const findings = [...byRule].map(([rule, n]) => `${rule} ×${n}`).join(', ') || 'none';
  const version = e.docker(['version', '--format', '{{.Server.Version}}']).trim();
  const outcome = `scan exit ${[...codes].join('/')} (complete: ${found.summary.complete}); findings: ${findings}; engine ${version}`;
  const engineCpu = (r: Runs) => (r.engine.length > 0 ? `${round(median(r.engine), 0)} ms` : 'not read');
  const figures: Figure[] = [];
  for (const [v, env] of envs.entries())
    for (const [f, form] of forms.entries()) {
      const scan = scans[v]![f]!;
      const what = `scan, realistic host of ${size} containers, SARIF + JSON: ${form.name}, ${env.name}`;
      figures.push(
        ratioFigure(
          what,
          scan.ms,
          `docker inspect $(docker ps -aq), ${env.short}`,
          inspects[v]!.ms,
          1.5,
          `median of ${rounds} rounds, interleaved; scan ms: ${list(scan.ms)}; docker ms: ${list(inspects[v]!.ms)}; ${outcome}`,
        ),
      );
      const hand = `the same reads by hand (docker inspect, cat /proc/PID/net/*, sha256sum), ${env.short}`;
      figures.push(
        ratioFigure(
          `${what}: wall against the same reads by hand`,
          scan.ms,
          hand,
          byHand[v]!.ms,
          1.0,
          `median of ${rounds} rounds, interleaved; scan ms: ${list(scan.ms)}; by hand ms: ${list(byHand[v]!.ms)}; ` +
            `by hand read: ${refRead}`,
        ),
      );
      figures.push(
        ratioFigure(
          `${what}: CPU (user + system, children included) against the same reads by hand`,
          scan.cpu,
          hand,
          byHand[v]!.cpu,
          1.0,
          `median of ${rounds} rounds (clock ticks of ${TICK_MS} ms); scan CPU ms: ${list(scan.cpu)}; by hand CPU ms: ` +
            `${list(byHand[v]!.cpu)}; the engine's (dockerd) CPU meanwhile, not counted: scan ${engineCpu(scan)}, ` +
            `by hand ${engineCpu(byHand[v]!)}, docker inspect ${engineCpu(inspects[v]!)} (medians)`,
        ),
      );
    }
  figures.push({
    label: `fixture set-up of ${size} containers (images, files, creates and starts)`,
    value: round(host.setupMs),
    unit: 'ms',
    notes: 'not a target, for orientation',
  });
  figures.push({
    label: `docker CLI spread (max-min), ${size} containers, job env`,
    value: round(Math.max(...inspects[0]!.ms) - Math.min(...inspects[0]!.ms)),
    unit: 'ms',
    notes: `median ${round(median(inspects[0]!.ms))} ms: how much this machine moved during the runs`,
  });
  return figures;
}

async function main(): Promise<void> {
  const e = engine();
  if (!e) throw new Error('no Docker engine: install docker.io and busybox-static');
  const dir = tempDir('ma-bench-scan-');
  const bin = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
  const executable = join(PACKAGE_ROOT, 'dist', 'package', 'mesh-audit-linux-x64');
  if (!existsSync(executable))
    throw new Error(`${executable} is missing: run \`npm run bench\` (it runs \`npm run package\` first)`);
  const shellEnv = { ...process.env };
  // Added by test/bench/run.mjs for its children, not the operator's.
  delete shellEnv['FORCE_COLOR'];
  delete shellEnv['NO_COLOR'];
  const envs: Env[] = [
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
  const formsOf = (host: RealisticLiveHost): Form[] => [
    { name: 'single executable', cmd: executable, args: (out) => host.scanArgs(out) },
    {
      name: 'from source (node bin/mesh-audit.js)',
      cmd: process.execPath,
      args: (out) => [bin, ...host.scanArgs(out)],
    },
  ];

  const host = await startRealisticLiveHost(e);
  let figures: Figure[];
  try {
    // The engine settles after starting its containers, and each command runs once unmeasured (file
    // cache, the engine's first answers), so that neither side is timed on a machine still busy.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    figures = compare(e, host, dir, formsOf(host), envs, ROUNDS, bin);
  } finally {
    await host.remove();
  }
  const large = await startRealisticLiveHost(e, LARGE);
  try {
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    figures.push(...compare(e, large, dir, formsOf(large), envs.slice(0, 1), LARGE_ROUNDS, bin));
  } finally {
    await large.remove();
  }
  report(
    'scan',
    figures,
    `${host.describe()}. Then, on the same engine (the first host removed): ${large.describe()}.`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
