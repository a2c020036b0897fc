import type { PolicyChoice } from '../policy/load.js';
import { availableParallelism } from 'node:os';
import { startWorker } from '../runtime/start-worker.js';
import { MeshAuditError } from '../errors.js';
import type { Evaluation } from '../evaluate/finding.js';
import type { Profile } from '../policy/types.js';
import type { Scope } from '../scope.js';

/**
 * Many snapshot files (a fleet) are evaluated by worker threads, one file at a time each: reading
 * and parsing a snapshot took as long as evaluating it, and one thread left the other CPUs idle
 * (test/bench/fleet.bench.ts). Fewer files than this are evaluated on the main thread: a worker
 * costs a start of its own.
 */
export const WORKERS_FROM_FILES = 8;

export interface WorkerSetup {
  policies: PolicyChoice;
  profile: Profile | undefined;
  /** Rule ids not evaluated (the `skip` setting, checked). */
  skip: string[];
  historyDir: string | undefined;
  recordChecks?: boolean;
  scope: Scope;
  /** The run's start (ISO): ignore entries expire against it, as on the main thread. */
  now: string;
}

export interface WorkerJob {
  index: number;
  path: string;
}

export type WorkerAnswer = { index: number; evaluation: Evaluation } | { index: number; error: string; usage: boolean };

/**
 * `--jobs` as it can be used: never more workers than CPUs. Each worker holds its own heap (`--jobs 300`
 * took 4.1 GB) and more workers than CPUs only wait for one another.
 */
export function cappedJobs(jobs: number, cpus = availableParallelism()): number {
  return Math.min(jobs, cpus);
}

/**
 * How many workers for `files` snapshot files (0: evaluate them on the main thread): `jobs` when the
 * user says (1 is the main thread; at most one per CPU), else one per CPU (at most 8) from
 * WORKERS_FROM_FILES files on.
 */
export function workersFor(files: number, jobs?: number, cpus = availableParallelism()): number {
  const wanted = jobs !== undefined ? cappedJobs(jobs, cpus) : files < WORKERS_FROM_FILES ? 1 : Math.min(cpus, 8);
  const useful = Math.min(wanted, files);
  return useful < 2 ? 0 : useful;
}

/**
 * The evaluation of every file, in the order given. A file that cannot be evaluated ends the run with
 * its error — the first such file in that order, as if they had been read one after the other.
 */
export async function evaluateInWorkers(
  paths: readonly string[],
  setup: WorkerSetup,
  count: number,
): Promise<Evaluation[]> {
  const evaluations: Evaluation[] = new Array<Evaluation>(paths.length);
  const failures: Array<{ index: number; error: string; usage: boolean }> = [];
  let next = 0;
  const workers = Array.from({ length: count }, () =>
    startWorker('evaluate', new URL('./evaluate-worker.js', import.meta.url), { workerData: setup }),
  );
  try {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            let busy = false;
            const sendNext = () => {
              busy = false;
              // After a failure, nothing new is started: every file before it was already sent.
              if (failures.length > 0 || next >= paths.length) {
                resolve();
                return;
              }
              const index = next++;
              busy = true;
              worker.postMessage({ index, path: paths[index]! } satisfies WorkerJob);
            };
            worker.on('message', (answer: WorkerAnswer) => {
              if ('error' in answer) failures.push(answer);
              else evaluations[answer.index] = answer.evaluation;
              sendNext();
            });
            worker.on('error', reject);
            worker.on('exit', (code) => {
              if (busy) reject(new Error(`an evaluation worker stopped (exit ${code})`));
            });
            sendNext();
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  const first = failures.sort((a, b) => a.index - b.index)[0];
  if (first) throw first.usage ? new MeshAuditError(first.error) : new Error(first.error);
  return evaluations;
}
