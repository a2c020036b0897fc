/*
 * sweep benchmark: a managed root with 100,000 small files over 100 folders and 3 × 200 MB files of
 * real bytes, swept by `mesh-audit scan --managed-root --max-files N` (room for all; no engine: exit 3) against
 * `find ROOT -type f -print0 | xargs -0 sha256sum`. One warm-up each, then median of 3, interleaved.
 */
import { mkdirSync, openSync, rmSync, writeFileSync, writeSync, closeSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from '../support/cli.js';
import { ratioFigure, report, round, timed, type Figure } from './common.js';

const FOLDERS = 100;
const PER_FOLDER = 1000;
const LARGE = 3;
const LARGE_BYTES = 200 * 1024 * 1024;
const ROUNDS = 3;

function main(): void {
  const dir = tempDir('ma-bench-sweep-');
  try {
    const root = join(dir, 'managed');
    const setupStart = Date.now();
    // Large files first in name order ("big" < "d000"): the walk is depth-first by name.
    mkdirSync(join(root, 'big'), { recursive: true });
    const block = randomBytes(16 * 1024 * 1024);
    for (let i = 0; i < LARGE; i++) {
      const fd = openSync(join(root, 'big', `blob-${i}.bin`), 'w');
      for (let written = 0; written < LARGE_BYTES; written += block.length) {
        block.writeUInt32LE(i * 1000 + written / block.length, 0); // no two blocks alike
        writeSync(fd, block);
      }
      closeSync(fd);
    }
    const small = randomBytes(4096);
    for (let d = 0; d < FOLDERS; d++) {
      const folder = join(root, `d${String(d).padStart(3, '0')}`);
      mkdirSync(folder);
      for (let f = 0; f < PER_FOLDER; f++) {
        const size = 64 + ((d * PER_FOLDER + f) % 1024);
        writeFileSync(
          join(folder, f % 50 === 0 ? `f${f}.env` : `f${f}.txt`),
          f % 50 === 0 ? `KEY_${f}=value-${d}\n` : small.subarray(0, size),
        );
      }
    }
    const setupMs = Date.now() - setupStart;
    const ledger = join(dir, 'ledger.json');
    writeFileSync(ledger, '[]');
    const bin = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
    const total = FOLDERS * PER_FOLDER + LARGE;
    // Room for every file (and the folders): the scan hashes what the reference hashes.
    const maxFiles = String(total + FOLDERS + 10);
    const snapshotArgs = (out: string) => [
      bin,
      'scan',
      '--managed-root',
      root,
      '--max-files',
      maxFiles,
      '--docker-host',
      'unix:///nonexistent.sock',
      '--ledger',
      ledger,
      '--out',
      out,
      '--format',
      'json',
      '--hostname',
      'bench',
    ];
    const refArgs = ['-c', `find '${root}' -type f -print0 | xargs -0 sha256sum > /dev/null`];

    // Warm-up: the page cache holds the tree for both after this.
    timed(process.execPath, snapshotArgs(join(dir, 'warm')), [3]);
    timed('bash', refArgs);
    const scans: number[] = [];
    const refs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      scans.push(timed(process.execPath, snapshotArgs(join(dir, `out-${i}`)), [3]).ms);
      refs.push(timed('bash', refArgs).ms);
    }
    // How many files the scan actually hashed.
    const snap = join(dir, 'count.json');
    timed(
      process.execPath,
      [
        bin,
        'snapshot',
        '-o',
        snap,
        '--managed-root',
        root,
        '--max-files',
        maxFiles,
        '--docker-host',
        'unix:///nonexistent.sock',
        '--ledger',
        ledger,
      ],
      [0, 3],
    );
    const parsed = JSON.parse(readFileSync(snap, 'utf8')) as { files: Array<{ kind: string; sha256?: string }> };
    const hashed = parsed.files.filter((f) => f.sha256 !== undefined).length;
    if (hashed !== total) throw new Error(`the scan hashed ${hashed} of ${total} files: not the reference's work`);
    const figures: Figure[] = [
      ratioFigure(
        `scan --managed-root, ${total} files (${LARGE} × 200 MB)`,
        scans,
        'find -type f | xargs sha256sum',
        refs,
        1.5,
        `median of ${ROUNDS} after one warm-up each, interleaved; scan ms: ${scans.map((ms) => round(ms)).join(', ')}; reference ms: ${refs.map((ms) => round(ms)).join(', ')}; ` +
          `the scan (--max-files ${maxFiles}) hashed ${hashed} of ${total} files (${parsed.files.length} records), as the reference does, then evaluated them (one finding per file: none is claimed) and wrote its JSON report and its snapshot`,
      ),
      {
        label: 'files hashed by the scan',
        value: hashed,
        unit: 'files',
        notes: `of ${total}; records ${parsed.files.length}`,
      },
      { label: 'tree set-up (write)', value: round(setupMs), unit: 'ms', notes: 'not a target, for orientation' },
    ];
    report(
      'sweep',
      figures,
      `a managed root written just before: ${FOLDERS} folders of ${PER_FOLDER.toLocaleString('en')} small files ` +
        `(64 to 1,087 bytes of random bytes, every 50th a one-line env file) and ${LARGE} files of ` +
        `${LARGE_BYTES / 1024 / 1024} MB of random bytes; an empty ledger and no engine (the scan exits 3). The scan ` +
        'runs from the npm install (node bin/mesh-audit.js); each side runs once before it is timed.',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
  process.exit(0);
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
