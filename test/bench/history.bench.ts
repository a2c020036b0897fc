/*
 * history benchmark (issue 32): the nightly scan of the realistic host (test/support/realistic-live.ts)
 * with 1 kept snapshot and with 30 (`--keep 30`, the default), interleaved rounds, from source with
 * PATH and HOME only. Each side writes into its own output folder, as the nightly job does: the one
 * with `--keep 1` always reads one kept snapshot, the other thirty. The thirty are made as the job
 * makes them: one scan, its snapshot kept under 29 more run numbers (the scanner's own names), then one
 * scan that reads them all and writes the history's index; only the scans after that are measured.
 * Target: the scan with 30 kept snapshots within 10% of the scan with 1, in wall time and peak
 * memory (getrusage of the scan process, through rss-probe.js). `MA_HISTORY_BENCH_BIN` names another
 * build's bin/mesh-audit.js to measure (the figures before a change); default: this checkout's.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { engine } from '../docker/engine.js';
import { tempDir } from '../support/cli.js';
import { startRealisticLiveHost } from '../support/realistic-live.js';
import { median, report, round, timed, type Figure } from './common.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const KEPT = 30;

async function main(): Promise<void> {
  const e = engine();
  if (!e) throw new Error('no Docker engine: install docker.io and busybox-static');
  const host = await startRealisticLiveHost(e);
  try {
    const dir = tempDir('ma-bench-history-');
    const bin = process.env['MA_HISTORY_BENCH_BIN'] ?? join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
    const probe = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'rss-probe.js')).href;
    const jobEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root' };
    const outOne = join(dir, 'keep-1');
    const outThirty = join(dir, 'keep-30');
    /** One scan into `out` keeping `keep` snapshots: wall ms, peak RSS MB, and what --verbose said of the history. */
    const scan = (out: string, keep: number) => {
      const rss = join(dir, `rss-${keep}`);
      const r = timed(
        process.execPath,
        ['--import', probe, bin, ...host.scanArgs(out, 'sarif,json'), '--keep', String(keep), '--verbose'],
        [0, 1, 3],
        { ...jobEnv, MA_RSS_PROBE: rss },
        false,
      );
      const historyLine = r.stderr.split('\n').find((l) => l.startsWith('mesh-audit: history ')) ?? '';
      return { ms: r.ms, rssMb: Number(readFileSync(rss, 'utf8')) / 1024, historyLine };
    };

    // The history of thirty nights: one scan's snapshot kept under 29 more run numbers, then one scan reads them.
    scan(outOne, 1);
    scan(outThirty, KEPT);
    const history = join(outThirty, 'history', host.hostname.replace(/[^A-Za-z0-9._-]/g, '_'));
    const [first] = readdirSync(history).filter((n) => n.endsWith('.json'));
    const kept = readFileSync(join(history, first!), 'utf8');
    const snapshotMb = Buffer.byteLength(kept) / 2 ** 20;
    const takenAt = /"takenAt": ?"([^"]+)"/.exec(kept)![1]!;
    for (let night = 2; night < KEPT; night++) {
      const time = new Date(Date.parse(takenAt) + night).toISOString();
      const name = `snapshot-${String(night).padStart(6, '0')}-${time.replace(/[-:.]/g, '')}.json`;
      writeFileSync(join(history, name), kept.replace(takenAt, time));
    }
    writeFileSync(join(outThirty, '.mesh-audit.sequence'), `${KEPT - 1}\n`);
    const catchUp = scan(outThirty, KEPT);
    scan(outOne, 1);

    const one: ReturnType<typeof scan>[] = [];
    const thirty: ReturnType<typeof scan>[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Interleaved, the order swapped each round: neither side always runs on a warmer cache.
      if (i % 2 === 0) {
        one.push(scan(outOne, 1));
        thirty.push(scan(outThirty, KEPT));
      } else {
        thirty.push(scan(outThirty, KEPT));
        one.push(scan(outOne, 1));
      }
    }
    const keptNow = readdirSync(history).filter((n) => n.endsWith('.json')).length;
    const figure = (label: string, unit: string, a: number[], b: number[]): Figure => {
      const value = round(median(b));
      const ref = round(median(a));
      const ratio = Math.round((value / ref) * 100) / 100;
      return {
        label,
        value,
        unit,
        reference: { label: `the same scan with 1 kept snapshot`, value: ref },
        ratio,
        target: '≤ 1.1x',
        met: ratio <= 1.1,
      };
    };
    const figures: Figure[] = [
      {
        ...figure(
          `scan with ${KEPT} kept snapshots, wall (median of ${ROUNDS})`,
          'ms',
          one.map((r) => r.ms),
          thirty.map((r) => r.ms),
        ),
        notes: `${keptNow} kept after the runs; it said: ${thirty.at(-1)!.historyLine.replace(/^mesh-audit: history \S+: /, '')}`,
      },
      figure(
        `scan with ${KEPT} kept snapshots, peak RSS (median of ${ROUNDS})`,
        'MB',
        one.map((r) => r.rssMb),
        thirty.map((r) => r.rssMb),
      ),
      {
        label: 'the scan that read the 29 snapshots no index held (once, after an upgrade or a lost index)',
        value: round(catchUp.ms),
        unit: 'ms',
        notes: `peak RSS ${round(catchUp.rssMb)} MB; each kept snapshot ${round(snapshotMb)} MB`,
      },
    ];
    report(
      'history',
      figures,
      `${host.describe()}. Both sides from source (node bin/mesh-audit.js) with PATH and HOME only, ` +
        `--format sarif,json, each in its own output folder (--keep 1, --keep ${KEPT}).`,
    );
  } finally {
    await host.remove();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
