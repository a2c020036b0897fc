import { COMPOSE_LABELS, composeFilesOf } from '../engine/compose-labels.js';
import type { ScopeJudge } from '../scope.js';
import { keptLabels } from '../secret/labels.js';
import { COMPOSE_IN_WORKER_FILES, ComposePool } from './compose-pool.js';
import type { ContainerSummary } from './docker-api.js';
import type { ReadCache } from './read-cache.js';

/**
 * The Compose files' reader of one scan, started as soon as the container list says many are coming: its worker's
 * start then overlaps the inspects (compose-pool.ts). The engine's collector tells it the list (`listed`); the files'
 * collector reads through `pool` when there is one; the scan closes it however it ends. serve's reads share one reader,
 * kept by its cache (src/collect/read-cache.ts) and started by the first read that needs it: a later read that parses
 * no Compose file starts no worker, and the cache closes it.
 */
export class ComposeStart {
  pool: ComposePool | undefined;

  constructor(
    private readonly scope: ScopeJudge | undefined,
    private readonly cache?: ReadCache,
  ) {}

  /** The container list, before any inspect. */
  readonly listed = (summaries: readonly ContainerSummary[]): void => {
    if (this.cache !== undefined) {
      // Started by the first read (a kept worker is not started again, nor its files counted).
      this.pool = this.cache.composePool(() => new ComposePool(listedComposeFiles(summaries, this.scope)));
      this.pool.prestart();
      return;
    }
    const files = listedComposeFiles(summaries, this.scope);
    // Fewer named (an engine whose list carries no labels), the file collection decides from the inspects.
    if (files < COMPOSE_IN_WORKER_FILES) return;
    this.pool = new ComposePool(files);
    this.pool.prestart();
  };

  /** Closes the scan's own reader (serve's is the cache's to close). */
  async close(): Promise<void> {
    if (this.cache === undefined) await this.pool?.close();
  }
}

/**
 * How many Compose files the listed containers' labels name (those in scope), before any inspect: enough to tell
 * whether their reader is worth a worker (compose-pool.ts). The inspects' labels are what decides which files are read.
 */
function listedComposeFiles(summaries: readonly ContainerSummary[], scope: ScopeJudge | undefined): number {
  const files = new Set<string>();
  for (const summary of summaries) {
    const labels = stringLabels(summary.Labels);
    if (labels[COMPOSE_LABELS.service] === undefined) continue;
    const name = summary.Names?.[0]?.replace(/^\//, '') ?? summary.Id;
    if (scope && !scope.container(name, keptLabels(labels))) continue;
    const named = composeFilesOf(labels);
    if ('paths' in named) for (const path of named.paths) files.add(path);
  }
  return files.size;
}

/** A list's labels as far as they are strings (the list is the engine's answer, unchecked). */
function stringLabels(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
