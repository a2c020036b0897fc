/*
 * `npm run package` (after `npm run build`): everything an operator installs, in dist/package/:
 * - mesh-audit-linux-x64: the single executable (no Node.js, no node_modules on the host);
 * - mesh-audit_<version>_amd64.deb: that executable with the pack, units, config and folders;
 * - mesh-audit-image-rootfs.tar: the container image's files, for packaging/image/build-image.sh.
 */
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDON_ASSETS, bundleProgram } from './package/bundle.js';
import { buildDeb } from './package/deb.js';
import { buildRootfs } from './package/image.js';
import { makeSingleExecutable } from './package/single-executable.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const outDir = join(root, 'dist', 'package');
const work = join(outDir, 'work');
rmSync(outDir, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const commit = (
  JSON.parse(readFileSync(join(root, 'dist', 'src', 'generated', 'build-info.json'), 'utf8')) as { commit: string }
).commit;

const started = Date.now();
const step = (what: string) =>
  process.stderr.write(`package: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);

const binary = join(outDir, 'mesh-audit-linux-x64');
const assets = Object.fromEntries(Object.entries(ADDON_ASSETS).map(([name, file]) => [name, join(root, file)]));
await makeSingleExecutable(await bundleProgram({ root, version, commit }), assets, work, binary);
step(`${binary} (${(statSync(binary).size / 1024 / 1024).toFixed(1)} MiB)`);
const deb = buildDeb({ root, version, commit, binary, work, outDir });
step(deb);
const rootfs = join(outDir, 'mesh-audit-image-rootfs.tar');
buildRootfs(binary, work, rootfs);
step(`${rootfs} (packaging/image/build-image.sh makes it an image)`);
rmSync(work, { recursive: true, force: true });
