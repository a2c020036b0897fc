import { spawn, spawnSync } from 'node:child_process';

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

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Runs a command to completion and returns its wall time in milliseconds (throws on an unexpected exit code). */
export function timed(cmd: string, args: string[], okCodes: number[] = [0], env: NodeJS.ProcessEnv = {}): { ms: number; code: number; stderr: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1024 * 1024 * 1024, timeout: 600_000, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const code = r.status ?? -1;
  if (!okCodes.includes(code)) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr ?? '').slice(-2000)}`);
  return { ms, code, stderr: r.stderr ?? '' };
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
    child.on('close', (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function parallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export function ratioFigure(label: string, values: number[], refLabel: string, refValues: number[], targetRatio: number, notes?: string): Figure {
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

export function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** The last stdout line the orchestrator parses. */
export function report(name: string, figures: Figure[]): void {
  process.stdout.write(JSON.stringify({ name, figures }) + '\n');
}
