#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (also run by `npm ci` via `prepare`).
// It runs dist/program/ (the CLI as one file, with V8's code cache: src/cli/program.ts) when the build
// made it, else the compiled modules of dist/src.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

async function cli() {
  const program = fileURLToPath(new URL('../dist/program/mesh-audit.cjs', import.meta.url));
  const cache = fileURLToPath(new URL('../dist/program/mesh-audit.code-cache', import.meta.url));
  if (!existsSync(program) || !existsSync(cache)) return import('../dist/src/cli/main.js');
  const { compileProgram, runProgram } = await import('../dist/src/cli/program.js');
  return runProgram(compileProgram(readFileSync(program, 'utf8'), program, readFileSync(cache)), program, createRequire(program));
}

const { installSignalHandlers, main } = await cli();
installSignalHandlers();
process.exitCode = await main(process.argv);
