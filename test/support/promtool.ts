import { spawnSync } from 'node:child_process';
import { findBinary } from './binary.js';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Prometheus's own checker for the text exposition format, from Debian's `prometheus` package
 * (bookworm: 2.42.0+ds-5+deb12u1, `/usr/bin/promtool`). `.ci/run` must apt-get install `prometheus`.
 *
 * `promtool check metrics` reads the exposition text on stdin and exits with:
 *   0 — parsed and no lint problem (nothing printed);
 *   1 — parse error, e.g. `error while linting: text format parsing error in line 1: invalid metric
 *       name in comment` (a dash in a name) or `... second HELP line for metric name "x_total"`;
 *   3 — parsed, but lint problems, e.g. `x counter metrics should have "_total" suffix`,
 *       `x_total no help text`.
 * Its messages go to stderr. Observed not to be caught by 2.42: a duplicate sample line
 * (`x_total 1\nx_total 2`) and a family split by another family both exit 0; empty input exits 0.
 */

/** `PROMTOOL_BIN`, else `/usr/bin/promtool`, else `promtool` on PATH; null when none is there. */
export function promtoolPath(): string | null {
  return findBinary('PROMTOOL_BIN', '/usr/bin/promtool', ['promtool']);
}

export function hasPromtool(): boolean {
  return promtoolPath() !== null;
}

export interface PromtoolResult {
  /** true only for exit status 0 (lint problems, status 3, are not ok). */
  ok: boolean;
  /** stdout and stderr interleaved as promtool wrote them. */
  output: string;
  /** promtool's exit status (0, 1 parse error, 3 lint problems), or null when killed. */
  status: number | null;
}

/** Runs `promtool check metrics` with `text` on stdin. Throws when promtool is not installed. */
export function promtoolCheckMetrics(text: string): PromtoolResult {
  const bin = promtoolPath();
  if (!bin) throw new Error('promtool not found (apt-get install prometheus, or set PROMTOOL_BIN)');
  // One file for both streams keeps promtool's own order of messages.
  const dir = mkdtempSync(join(tmpdir(), 'ma-promtool-'));
  const outFile = join(dir, 'output');
  try {
    const fd = openSync(outFile, 'w');
    let r: ReturnType<typeof spawnSync>;
    try {
      r = spawnSync(bin, ['check', 'metrics'], { input: text, stdio: ['pipe', fd, fd], timeout: 30_000 });
    } finally {
      closeSync(fd);
    }
    if (r.error) throw r.error;
    return { ok: r.status === 0, output: readFileSync(outFile, 'utf8'), status: r.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
