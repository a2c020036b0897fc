/*
 * Runs the bundled program once, as the single executable or bin/mesh-audit.js will, and writes V8's
 * code cache for it at exit: every function the run compiled is in it (code-cache.ts starts this with
 * a scan of a stand-in engine). Usage: node code-cache-run.js PROGRAM CACHE ASSETS-JSON -- ARGS...
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { compileProgram, runProgram } from '../../src/cli/program.js';

const [program, cache, assetsJson, dashes, ...args] = process.argv.slice(2);
if (program === undefined || cache === undefined || assetsJson === undefined || dashes !== '--')
  throw new Error('usage: code-cache-run.js PROGRAM CACHE ASSETS-JSON -- ARGS...');
const assets = JSON.parse(assetsJson) as Record<string, string>;

// The program asks node:sea for the assets it carries (the output folder lock's addon): here they
// are the files the executable is made with.
const sea = {
  getAsset(name: string, encoding?: BufferEncoding): ArrayBuffer | string {
    const file = assets[name];
    if (file === undefined) throw new Error(`no asset ${name}`);
    const bytes = readFileSync(file);
    return encoding !== undefined
      ? bytes.toString(encoding)
      : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  },
};
// The program's own folder resolves what it leaves outside (fs-ext, a native addon).
const nodeRequire = createRequire(program);
const script = compileProgram(readFileSync(program, 'utf8'), program);
process.argv = [process.execPath, program, ...args];
process.on('exit', () => {
  writeFileSync(cache, script.createCachedData());
});
const exported = runProgram(script, program, (id) => (id === 'node:sea' ? sea : nodeRequire(id))) as {
  main?: (argv: string[]) => Promise<number>;
};
// The single executable's program starts itself; the one bin/mesh-audit.js runs exports main.
if (exported.main !== undefined) process.exitCode = await exported.main(process.argv);
