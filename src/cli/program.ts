/*
 * How the single executable runs mesh-audit's bundled program: shared by its first script
 * (sea-main.ts, inside the executable) and by the build step that records the program's code cache
 * (code-cache.ts). Both must wrap the program's text exactly alike: V8 accepts a code cache only for
 * the very source it was made from.
 */
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** The program (scripts/package/bundle.ts) and its code cache, as SEA assets. */
export const PROGRAM_ASSET = 'mesh-audit.cjs';
export const CODE_CACHE_ASSET = 'mesh-audit.code-cache';

/** The program as a function of what a CommonJS module is given, as Node wraps one. */
export function compileProgram(source: string, filename: string, cachedData?: Buffer): Script {
  return new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename, ...(cachedData !== undefined ? { cachedData } : {}) });
}

/** Runs the compiled program as the module `filename`, with `require` as its require. */
export function runProgram(script: Script, filename: string, require: (id: string) => unknown): void {
  const module = { exports: {} };
  const start = script.runInThisContext() as (exports: unknown, require: (id: string) => unknown, module: unknown, filename: string, dirname: string) => void;
  start(module.exports, require, module, filename, dirname(filename));
}
