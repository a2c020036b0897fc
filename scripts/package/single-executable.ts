/*
 * The bundle made into a Node single executable application (Node 20's SEA): its first script
 * (sea-main.ts) runs the program, carried as an asset with the code cache a scan recorded at build
 * time (code-cache.ts); a preparation blob of those, injected with postject into a stripped copy of
 * the node binary running this script.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { recordCodeCache } from './code-cache.js';
import { CODE_CACHE_ASSET, PROGRAM_ASSET } from '../../src/cli/program.js';

/** The fuse Node looks for to know it carries a blob (Node's SEA documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** `assets`: files carried inside the executable, by asset name (read at run time with node:sea's getAsset). */
export async function makeSingleExecutable(
  bundle: string,
  assets: Record<string, string>,
  work: string,
  output: string,
): Promise<void> {
  for (const [name, file] of Object.entries(assets))
    if (!existsSync(file))
      throw new Error(`${file} (asset ${name}) is missing: was \`npm ci\` run (it builds the addons)?`);
  const program = join(work, PROGRAM_ASSET);
  writeFileSync(program, bundle);
  const cache = await recordCodeCache(program, assets, work);
  const main = join(work, 'sea-main.cjs');
  writeFileSync(main, await firstScript());
  const blob = join(work, 'sea-prep.blob');
  const config = join(work, 'sea-config.json');
  // useCodeCache: the first script is compiled at build time too (it is small; the program has its own cache).
  writeFileSync(
    config,
    JSON.stringify({
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      assets: { ...assets, [PROGRAM_ASSET]: program, [CODE_CACHE_ASSET]: cache },
    }),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  copyFileSync(process.execPath, output);
  chmodSync(output, 0o755);
  // Node's symbols and debug sections are no use on the hosts (and lintian refuses them): stripped
  // before the blob goes in (stripping after would drop the blob's section).
  execFileSync('strip', ['--strip-unneeded', output]);
  const postject = createRequire(import.meta.url).resolve('postject/dist/cli.js');
  // postject prints a warning per note section it does not know (nothing to act on): shown only on failure.
  try {
    execFileSync(process.execPath, [postject, output, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], {
      stdio: 'pipe',
    });
  } catch (err) {
    throw new Error(`postject failed: ${String((err as { stderr?: Buffer }).stderr ?? err)}`);
  }
}

/** sea-main.ts as one CommonJS script (a single executable's main script can require only Node's modules). */
async function firstScript(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./sea-main.js', import.meta.url))],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0]!.text;
}
