/** Helpers shared by the benchmark programs: statistics, timing child processes, the result line. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from dist/test/bench/). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'mesh-audit.js');

/** One figure of a benchmark, as test/bench/run.mjs expects it. */
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

/**
 * Runs a command to completion and returns its wall time in milliseconds (throws on an unexpected exit
 * code). `env` is added to this process's environment, or with `inheritEnv` false is the whole of it.
 */
export function timed(
  cmd: string,
  args: string[],
  okCodes: number[] = [0],
  env: NodeJS.ProcessEnv = {},
  inheritEnv = true,
): { ms: number; code: number; stderr: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    env: inheritEnv ? { ...process.env, ...env } : env,
    maxBuffer: 1024 * 1024 * 1024,
    timeout: 600_000,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const code = r.status ?? -1;
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- spawnSync's output is null when the command could not start */
  if (!okCodes.includes(code))
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr ?? '').slice(-2000)}`);
  return { ms, code, stderr: r.stderr ?? '' };
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
}

/** Runs a command asynchronously; rejects with its stderr on failure. */
export function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolvePromise(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function parallel<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export function ratioFigure(
  label: string,
  values: number[],
  refLabel: string,
  refValues: number[],
  targetRatio: number,
  notes?: string,
): Figure {
  const value = round(median(values));
  const ref = round(median(refValues));
  const ratio = Math.round((value / ref) * 100) / 100;
  return {
    label,
    value,
    unit: 'ms',
    reference: { label: refLabel, value: ref },
    ratio,
    target: `≤ ${targetRatio.toFixed(1)}x`,
    met: ratio <= targetRatio,
    ...(notes !== undefined ? { notes } : {}),
  };
}

export const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

export function linearFit(points: readonly { x: number; y: number }[]): {
  slope: number;
  intercept: number;
  r2: number;
} {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  const syy = points.reduce((a, p) => a + (p.y - my) ** 2, 0);
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

/** Runs a command to its end; resolves with its wall time in ms (process.hrtime), stdout, and exit code. */
export function timeProcess(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ ms: number; code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, code, stdout, stderr }));
  });
}

/** The last stdout line the orchestrator parses; `fixture` says what the figures were measured on. */
export function report(name: string, figures: Figure[], fixture?: string): void {
  process.stdout.write(JSON.stringify({ name, figures, ...(fixture !== undefined ? { fixture } : {}) }) + '\n');
}

/** Linux's USER_HZ: the clock ticks /proc/PID/stat counts CPU time in. */
const TICKS_PER_SECOND = 100;

/** The CPU time the kernel charged a process, all its threads (utime + stime of /proc/PID/stat), ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), counted from the state (field 3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** A process's resident set size (VmRSS of /proc/PID/status), MiB. */
export function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return round(kb / 1024, 1);
}

/** The `p`th percentile of `values` (nearest rank). */
export function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/**
 * The V8 heap of a Node child process, asked through its inspector: the child runs with `--inspect-port=127.0.0.1:0`
 * (nothing listens until asked), SIGUSR1 opens the inspector (Node's own signal, no code of the product's), and
 * each `usedAfterGc()` forces full collections (HeapProfiler.collectGarbage) and reads the heap in use
 * (Runtime.getHeapUsage). Only these two methods are called: no domain is enabled, so the child's code is not
 * deoptimised. Needs a global WebSocket (Node 22, or Node 20 with --experimental-websocket: test/bench/run.mjs).
 */
export interface HeapProbe {
  /** The heap in use after two full collections, MiB. */
  usedAfterGc(): Promise<number>;
  close(): void;
}

export async function openHeapProbe(child: ChildProcess, stderr: () => string, ms = 30_000): Promise<HeapProbe> {
  const Socket = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
  if (Socket === undefined)
    throw new Error('no global WebSocket: run on Node 22, or Node 20 with --experimental-websocket');
  child.kill('SIGUSR1');
  const end = Date.now() + ms;
  let url: string | undefined;
  while ((url = /ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]+/.exec(stderr())?.[0]) === undefined) {
    if (Date.now() > end) throw new Error(`the child's inspector did not open within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ws = new Socket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)), { once: true });
  });
  let next = 0;
  const waiting = new Map<number, (answer: { result?: Record<string, unknown>; error?: unknown }) => void>();
  ws.addEventListener('message', (m: MessageEvent) => {
    const answer = JSON.parse(String(m.data)) as { id?: number; result?: Record<string, unknown>; error?: unknown };
    if (answer.id !== undefined) waiting.get(answer.id)?.(answer);
    if (answer.id !== undefined) waiting.delete(answer.id);
  });
  const call = (method: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (a) =>
        a.error !== undefined ? reject(new Error(`${method}: ${JSON.stringify(a.error)}`)) : resolve(a.result ?? {}),
      );
      ws.send(JSON.stringify({ id, method }));
    });
  return {
    async usedAfterGc() {
      // Twice: what the first collection's finalizers let go is collected by the second.
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      const usage = await call('Runtime.getHeapUsage');
      return round(Number(usage['usedSize']) / (1024 * 1024), 2);
    },
    close: () => ws.close(),
  };
}
