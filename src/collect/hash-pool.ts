import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../runtime/start-worker.js';
import { readRegularFile, type ExpectedFile, type ReadResult } from './read-file.js';

/**
 * Files at least this large are hashed by worker threads while the walk goes on. Hashing is CPU work
 * on one thread per file; a managed root with a few hundred MB of blobs among many small files took
 * as long for its blobs as for everything else (test/bench/sweep.bench.ts).
 */
export const HASH_IN_WORKER_BYTES = 4 * 1024 * 1024;

export interface HashRequest {
  id: number;
  fsPath: string;
  dev: bigint;
  ino: bigint;
  size: bigint;
}

export interface HashAnswer {
  id: number;
  result: ReadResult;
}

/**
 * Worker threads for large files, started on first use (a scan without large files starts none).
 * A worker that fails hands its files back to the main thread: a digest is never lost to a worker.
 */
export class HashPool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<
    number,
    { request: HashRequest; resolve: (r: ReadResult) => void; worker: Worker }
  >();
  private nextId = 0;
  private turn = 0;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism() - 1))) {}

  /** The checked read of `fsPath` (no content kept), in a worker. */
  read(fsPath: string, expected: ExpectedFile): Promise<ReadResult> {
    if (!expected.isFile()) return Promise.resolve(readRegularFile(fsPath, expected));
    const request: HashRequest = {
      id: this.nextId++,
      fsPath,
      dev: expected.dev,
      ino: expected.ino,
      size: expected.size,
    };
    return new Promise((resolve) => {
      const worker = this.worker();
      this.waiting.set(request.id, { request, resolve, worker });
      worker.postMessage(request);
    });
  }

  /** Stops the workers (their pending files, if any, are read here first). */
  async close(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w.terminate()));
    this.takeBack(() => true);
  }

  private worker(): Worker {
    if (this.workers.length < this.size) {
      const worker = startWorker('hash', new URL('./hash-worker.js', import.meta.url));
      worker.on('message', (answer: HashAnswer) => {
        const job = this.waiting.get(answer.id);
        if (!job) return;
        this.waiting.delete(answer.id);
        job.resolve(answer.result);
      });
      const lost = () => {
        const at = this.workers.indexOf(worker);
        if (at >= 0) this.workers.splice(at, 1);
        this.takeBack((job) => job.worker === worker);
      };
      worker.on('error', lost);
      worker.on('exit', lost);
      this.workers.push(worker);
      return worker;
    }
    return this.workers[this.turn++ % this.workers.length]!;
  }

  /** Reads here, on the main thread, the files of a worker that is gone. */
  private takeBack(which: (job: { worker: Worker }) => boolean): void {
    for (const [id, job] of this.waiting) {
      if (!which(job)) continue;
      this.waiting.delete(id);
      const { fsPath, dev, ino, size } = job.request;
      job.resolve(readRegularFile(fsPath, { dev, ino, size, isFile: () => true }));
    }
  }
}
