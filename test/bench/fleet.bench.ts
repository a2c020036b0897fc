/**
 * A fleet in one process: `mesh-audit evaluate` over 1,000 saved snapshots of 100 containers each
 * (one host each), in ONE process, against one process per snapshot. The per-process side is timed
 * on a sample (30 snapshots by default, run one after another, interleaved with nothing else) and
 * its median scaled to 1,000; that extrapolation is said in the notes. Both write JSON reports only.
 *
 * Usage: node dist/test/bench/fleet.bench.js [snapshots] [containers] [sample] [runs]
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticSnapshot } from './synthetic.js';
import { BIN, report, median, round, timeProcess } from './common.js';

const [count = 1000, containers = 100, sample = 30, runs = 3] = process.argv.slice(2).map(Number);
const dir = await mkdtemp(join(tmpdir(), 'ma-bench-fleet-'));
try {
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const path = join(dir, `host-${String(i).padStart(4, '0')}.json`);
    await writeFile(path, JSON.stringify(syntheticSnapshot(containers, 1000 + i, `bench-host-${i}`).snapshot));
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
    // 3: incomplete, as the synthetic hosts are (a stopped container's /proc, a file not read): still evaluated whole.
    if (r.code !== 0 && r.code !== 3) throw new Error(`${what} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  };

  const single: number[] = [];
  for (let run = 0; run < runs; run++) {
    const out = join(dir, `out-all-${run}`);
    const r = await timeProcess(process.execPath, args(paths, out));
    check(r, 'evaluate of all snapshots');
    single.push(r.ms);
    process.stderr.write(`fleet: ${count} snapshots in one process: ${round(r.ms, 0)} ms\n`);
  }
  const each: number[] = [];
  for (let i = 0; i < sample; i++) {
    const out = join(dir, `out-one-${i}`);
    await mkdir(out, { recursive: true });
    const r = await timeProcess(process.execPath, args([paths[Math.floor((i * count) / sample)]!], out));
    check(r, 'evaluate of one snapshot');
    each.push(r.ms);
  }
  const one = median(single);
  const perProcess = median(each);
  const scaled = perProcess * count;
  process.stderr.write(
    `fleet: one process per snapshot: median ${round(perProcess)} ms x ${count} = ${round(scaled, 0)} ms\n`,
  );
  report('fleet', [
    {
      label: `evaluate ${count.toLocaleString('en')} snapshots of ${containers} containers in one process`,
      value: round(one, 0),
      unit: 'ms',
      reference: {
        label: `one process per snapshot (median of ${sample} processes x ${count.toLocaleString('en')})`,
        value: round(scaled, 0),
      },
      ratio: round(scaled / one, 1),
      target: '>= 20x',
      met: scaled / one >= 20,
      notes: `one-process figure is the median of ${runs} runs; the per-process figure is extrapolated from a sample of ${sample} separate processes (median ${round(perProcess)} ms each), not 1,000 runs`,
    },
  ]);
} finally {
  await rm(dir, { recursive: true, force: true });
}
