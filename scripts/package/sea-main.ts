/*
 * The single executable's first script (bundled by scripts/package/single-executable.ts): runs the
 * program carried as an asset with the code cache recorded when the executable was built, by a scan
 * of a stand-in engine (code-cache.ts). Node's own cache for a main script holds only what V8
 * compiles before running it; the functions a scan calls were compiled at each start, ~35 ms of CPU
 * on a 2-CPU machine (test/bench/PROFILES.md). A cache V8 refuses is only slower: the program runs.
 */
import { getAsset } from 'node:sea';
import { CODE_CACHE_ASSET, compileProgram, PROGRAM_ASSET, runProgram } from '../../src/cli/program.js';

const script = compileProgram(getAsset(PROGRAM_ASSET, 'utf8'), __filename, Buffer.from(getAsset(CODE_CACHE_ASSET)));
runProgram(script, __filename, require);
