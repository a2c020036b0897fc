import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../runtime/start-worker.js';
import type { ComposeFacts } from '../snapshot/types.js';
import { composeFacts } from './compose-file.js';

/**
 * From this many Compose files on, they are read by a worker thread while the main thread reads the other files (env
 * files above all). Reading YAML is the costliest part of a file collection on a host whose containers Compose made
 * (~1–2 ms per file on a cold start; test/bench/PROFILES.md); fewer files are not worth a thread's start.
 */
export const COMPOSE_IN_WORKER_FILES = 16;

/**
 * At most this many Compose files go to the worker in one message, and come back in one: a message costs the main
 * thread ~0.1 ms whatever it holds, and a scan of 2,000 containers sends 914 files (test/bench/PROFILES.md). Files are
 * sent when this many are waiting, and the rest as soon as the main thread pauses (a microtask), so the worker starts
 * on the first ones while the main thread reads the others.
 */
export const COMPOSE_BATCH = 32;

export interface ComposeRequest {
  files: { id: number; content: Uint8Array }[];
}

export interface ComposeAnswer {
  answers: { id: number; facts: ComposeFacts }[];
}

/**
 * One worker thread reading Compose files (compose-file.ts), started on first use; on a machine with one CPU, or
 * when the worker cannot start or fails, the files are read on the main thread: the facts are the same either way.
 */
export class ComposePool {
  private worker: Worker | null = null;
  private failed: boolean;
  private readonly waiting = new Map<number, { content: Uint8Array; resolve: (facts: ComposeFacts) => void }>();
  /** Files asked for and not yet sent to the worker (all of them are in `waiting` too). */
  private unsent: ComposeRequest['files'] = [];
  private nextId = 0;

  constructor(files: number) {
    this.failed = files < COMPOSE_IN_WORKER_FILES || availableParallelism() < 2;
  }

  /**
   * Starts the worker now, when the caller knows many Compose files are coming before it has their bytes (a scan,
   * from the container list): the worker's start and yaml's load then happen while the engine is inspected, not while
   * the main thread waits for the first answers.
   */
  prestart(): void {
    this.started();
  }

  facts(content: Uint8Array): Promise<ComposeFacts> {
    const worker = this.started();
    if (worker === null) return Promise.resolve(composeFacts(content));
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, { content, resolve });
      this.unsent.push({ id, content });
      if (this.unsent.length >= COMPOSE_BATCH) this.send();
      else if (this.unsent.length === 1) queueMicrotask(() => this.send());
    });
  }

  /** Sends the files asked for so far to the worker (when it is gone, takeBack has read them or will). */
  private send(): void {
    if (this.unsent.length === 0 || this.worker === null) return;
    this.worker.postMessage({ files: this.unsent } satisfies ComposeRequest);
    this.unsent = [];
  }

  /** Stops the worker (files it had not answered are read here first). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.failed = true;
    if (worker) await worker.terminate();
    this.takeBack();
  }

  private started(): Worker | null {
    if (this.worker !== null || this.failed) return this.worker;
    try {
      // The main thread's stack size (V8's default), so that a file nested too deeply to be read here is there too.
      const worker = startWorker('compose', new URL('./compose-worker.js', import.meta.url), {
        resourceLimits: { stackSizeMb: 1 },
      });
      worker.on('message', ({ answers }: ComposeAnswer) => {
        for (const { id, facts } of answers) {
          const job = this.waiting.get(id);
          if (!job) continue;
          this.waiting.delete(id);
          job.resolve(facts);
        }
      });
      const lost = () => {
        if (this.worker !== worker) return;
        this.worker = null;
        this.failed = true;
        this.takeBack();
      };
      worker.on('error', lost);
      worker.on('exit', lost);
      this.worker = worker;
    } catch {
      this.failed = true;
    }
    return this.worker;
  }

  /** Reads here, on the main thread, the files the worker did not answer. */
  private takeBack(): void {
    this.unsent = [];
    for (const [id, job] of this.waiting) {
      this.waiting.delete(id);
      job.resolve(composeFacts(job.content));
    }
  }
}
