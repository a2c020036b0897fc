/*
 * How mesh-audit runs as one bundled program with V8's compiled code: from source, bin/mesh-audit.js
 * runs dist/program/ (made by `npm run build`, scripts/program.ts) when it is there; the single
 * executable's first script runs the program it carries (scripts/package/sea-main.ts). The code cache
 * is recorded at build time by a scan of a stand-in engine (scripts/package/code-cache.ts). Both
 * wrap the program's text exactly alike: V8 accepts a code cache only for the very source it was
 * made from, and a cache it refuses only makes the start slower.
 */
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** The program and its code cache, as files in dist/program/ and as the single executable's assets. */
export const PROGRAM_ASSET = 'mesh-audit.cjs';
export const CODE_CACHE_ASSET = 'mesh-audit.code-cache';

/** The program as a function of what a CommonJS module is given, as Node wraps one. */
export function compileProgram(source: string, filename: string, cachedData?: Buffer): Script {
  return new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    ...(cachedData !== undefined ? { cachedData } : {}),
  });
}

/** Runs the compiled program as the module `filename`, with `require` as its require; returns its exports. */
export function runProgram(script: Script, filename: string, require: (id: string) => unknown): unknown {
  const module = { exports: {} as unknown };
  const start = script.runInThisContext() as (
    exports: unknown,
    require: (id: string) => unknown,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  start(module.exports, require, module, filename, dirname(filename));
  return module.exports;
}
