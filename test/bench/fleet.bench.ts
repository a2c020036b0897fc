/**
 * A fleet in one process: `mesh-audit evaluate` over 1,000 saved snapshots of 100 real-shaped
 * containers each (one host each), in ONE process, against one process per snapshot. The reference is
 * what a shell loop would do at its best: as many processes at a time as the machine has CPUs
 * (`xargs -P$(nproc)`), timed on a sample of the snapshots (60 by default, spread over the 1,000) as
 * the wall time of the whole sample, scaled to 1,000; that extrapolation is said in the notes. Both
 * sides run with the same environment, a nightly job's (PATH and HOME only), and write JSON reports only.
 *
 * Usage: node dist/test/bench/fleet.bench.js [snapshots] [containers] [sample] [runs]
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeSynthetic, syntheticSnapshot } from './synthetic.js';
import { BIN, parallel, report, median, round, timeProcess } from './common.js';

const [count = 1000, containers = 100, sample = 60, runs = 3] = process.argv.slice(2).map(Number);
const cpus = availableParallelism();
const jobEnv = { PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: process.env['HOME'] ?? '/root' };
const dir = await mkdtemp(join(tmpdir(), 'ma-bench-fleet-'));
try {
  const paths: string[] = [];
  let first = '';
  for (let i = 0; i < count; i++) {
    const path = join(dir, `host-${String(i).padStart(4, '0')}.json`);
    const synthetic = syntheticSnapshot(containers, 1000 + i, `bench-host-${i}`);
    if (i === 0) first = describeSynthetic({ ...synthetic, history: [] }, 'seed 1000');
    await writeFile(path, JSON.stringify(synthetic.snapshot));
    paths.push(path);
  }
  const args = (inputs: string[], out: string) => [
    BIN,
    'evaluate',
    ...inputs,
    '--format',
    'json',
    '--out',
    out,
    '--fail-on',
    'none',
  ];
  const check = (r: { code: number | null; stderr: string }, what: string) => {
    // 3: incomplete, should a synthetic host lack a fact a rule reads (a Compose file it records missing): still evaluated whole.
    if (r.code !== 0 && r.code !== 3) throw new Error(`${what} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  };

  const single: number[] = [];
  for (let run = 0; run < runs; run++) {
    const out = join(dir, `out-all-${run}`);
    const r = await timeProcess(process.execPath, args(paths, out), { env: jobEnv });
    check(r, 'evaluate of all snapshots');
    single.push(r.ms);
    process.stderr.write(`fleet: ${count} snapshots in one process: ${round(r.ms, 0)} ms\n`);
  }
  // The reference: `sample` processes, `cpus` at a time; its figure is the wall time of the whole sample.
  const batches: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = process.hrtime.bigint();
    await parallel(
      Array.from({ length: sample }, (_, i) => i),
      cpus,
      async (i) => {
        const out = join(dir, `out-one-${run}-${i}`);
        await mkdir(out, { recursive: true });
        const r = await timeProcess(process.execPath, args([paths[Math.floor((i * count) / sample)]!], out), {
          env: jobEnv,
        });
        check(r, 'evaluate of one snapshot');
      },
    );
    batches.push(Number(process.hrtime.bigint() - started) / 1e6);
    process.stderr.write(`fleet: ${sample} processes, ${cpus} at a time: ${round(batches.at(-1)!, 0)} ms\n`);
  }
  const one = median(single);
  const batch = median(batches);
  const scaled = (batch * count) / sample;
  process.stderr.write(`fleet: one process per snapshot, ${cpus} at a time: ${round(scaled, 0)} ms for ${count}\n`);
  report(
    'fleet',
    [
      {
        label: `evaluate ${count.toLocaleString('en')} snapshots of ${containers} containers in one process`,
        value: round(one, 0),
        unit: 'ms',
        reference: {
          label: `one process per snapshot, ${cpus} at a time (as many as CPUs), same environment`,
          value: round(scaled, 0),
        },
        ratio: round(scaled / one, 1),
        target: '>= 20x',
        met: scaled / one >= 20,
        notes:
          `both sides with PATH and HOME only; one-process figure is the median of ${runs} runs (${single.map((ms) => round(ms, 0)).join(', ')} ms); ` +
          `the reference is the wall time of ${sample} processes run ${cpus} at a time (median of ${runs}: ` +
          `${batches.map((ms) => round(ms, 0)).join(', ')} ms) scaled to ${count.toLocaleString('en')}, not ${count.toLocaleString('en')} runs`,
      },
    ],
    `${count.toLocaleString('en')} saved snapshots, one host each (seeds 1000 to ${999 + count}, no history), each like ` +
      `the first, a ${first}. Both sides run \`node bin/mesh-audit.js evaluate\` writing JSON only.`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
