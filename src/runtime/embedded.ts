/*
 * What the single executable carries inside itself instead of files beside the code. In a normal
 * install (npm, a clone) there is nothing here: EMBEDDED is undefined and every file is read from the
 * package folder. `npm run package` (scripts/package/bundle.ts) replaces this module, when it bundles
 * the code, with one that fills EMBEDDED: a single executable has no package folder to read from.
 */
import type { ValidateFunction } from 'ajv';

/** The threads mesh-audit starts (src/runtime/start-worker.ts). */
export type WorkerName = 'hash' | 'evaluate' | 'compose';

export interface Embedded {
  version: string;
  commit: string;
  /** Package files by their path in the package ('policies/mesh-core/MA1-drift.yaml'), as text. */
  files: Record<string, string>;
  /** The validators and the pack precompiled by `npm run build` (scripts/precompile.ts). */
  validators: { fingerprints: Partial<Record<string, string>>; validators: Partial<Record<string, ValidateFunction>> };
  bundledPack: unknown;
  /** Each worker's code, bundled whole (a worker of a single executable cannot load a file). */
  workers: Partial<Record<WorkerName, string>>;
}

export const EMBEDDED: Embedded | undefined = undefined;
