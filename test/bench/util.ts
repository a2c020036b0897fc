/** Small helpers shared by the benchmark programs (statistics, timing child processes, the result line). */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from dist/test/bench/). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'mesh-audit.js');

export interface Figure {
  label: string;
  value: number;
  unit: string;
  reference?: { label: string; value: number };
  ratio?: number;
  target?: string;
  met?: boolean;
  notes?: string;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Least-squares line through (x, y): slope and intercept, and r² as a check of linearity. */
export function linearFit(points: readonly { x: number; y: number }[]): { slope: number; intercept: number; r2: number } {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  const syy = points.reduce((a, p) => a + (p.y - my) ** 2, 0);
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

export const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

/** Runs a command to its end; resolves with its wall time in ms (process.hrtime), stdout, and exit code. */
export function timeProcess(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ ms: number; code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, code, stdout, stderr }));
  });
}

/** The last stdout line: the one JSON object the orchestrator reads. */
export function emit(name: string, figures: Figure[]): void {
  process.stdout.write(JSON.stringify({ name, figures }) + '\n');
}
