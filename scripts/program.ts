/*
 * `npm run build`'s last step: the CLI as one bundled program with V8's compiled code, in
 * dist/program/ (scripts/package/bundle.ts bundleForNode; the code cache recorded by a scan of a
 * stand-in engine, scripts/package/code-cache.ts). bin/mesh-audit.js runs it when it is there: a start
 * no longer resolves and compiles ~75 modules one by one (test/bench/PROFILES.md). Without it (a
 * build by tsc alone) bin/mesh-audit.js runs the compiled modules of dist/src, as before.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODE_CACHE_ASSET, PROGRAM_ASSET } from '../src/cli/program.js';
import { bundleForNode } from './package/bundle.js';
import { recordCodeCache } from './package/code-cache.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = join(root, 'dist', 'program');
// Made aside and put in place whole: a half-made program (or one whose cache does not match) is never run.
const work = join(root, 'dist', `.program-${process.pid}`);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
try {
  const program = join(work, PROGRAM_ASSET);
  writeFileSync(program, await bundleForNode(root, join(dir, PROGRAM_ASSET)));
  await recordCodeCache(program, {}, work);
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.stderr.write(
  `build: the CLI bundled with its code cache into ${join(dir, PROGRAM_ASSET)}, ${CODE_CACHE_ASSET}\n`,
);
