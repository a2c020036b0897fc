import { createRequire } from 'node:module';
import type { Worker, WorkerOptions } from 'node:worker_threads';
import { EMBEDDED, type WorkerName } from './embedded.js';

const require = createRequire(import.meta.url);

/**
 * Starts one of mesh-audit's worker threads: from its compiled file in a normal install, from the code
 * embedded in the program in the single executable (which has no files to start a worker from).
 * worker_threads is loaded here, on first use: most scans start no worker.
 */
export function startWorker(name: WorkerName, file: URL, options: WorkerOptions = {}): Worker {
  const { Worker } = require('node:worker_threads') as typeof import('node:worker_threads');
  const code = EMBEDDED?.workers[name];
  return code !== undefined ? new Worker(code, { ...options, eval: true }) : new Worker(file, options);
}
