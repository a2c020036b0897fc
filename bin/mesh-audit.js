#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (also run by `npm ci` via `prepare`).
// It runs dist/program/ (the CLI as one file, with V8's code cache: src/cli/program.ts) when the build
// made it after the modules it was bundled from, else the compiled modules of dist/src (after `tsc`
// alone, which rewrites dist/src/cli/main.js: a bundle older than that is never run).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const file = (path) => fileURLToPath(new URL(path, import.meta.url));

async function cli() {
  const { CODE_CACHE_ASSET, compileProgram, PROGRAM_ASSET, runProgram } = await import('../dist/src/cli/program.js');
  const program = file(`../dist/program/${PROGRAM_ASSET}`);
  const cache = file(`../dist/program/${CODE_CACHE_ASSET}`);
  const bundled =
    existsSync(program) &&
    existsSync(cache) &&
    statSync(program).mtimeMs >= statSync(file('../dist/src/cli/main.js')).mtimeMs;
  if (!bundled) return import('../dist/src/cli/main.js');
  return runProgram(
    compileProgram(readFileSync(program, 'utf8'), program, readFileSync(cache)),
    program,
    createRequire(program),
  );
}

const { installSignalHandlers, main } = await cli();
installSignalHandlers();
process.exitCode = await main(process.argv);
