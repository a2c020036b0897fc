import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED } from './embedded.js';

/** The package's own folder (where package.json is), found from this module wherever it was compiled to. */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'policies'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('mesh-audit: cannot find its package folder');
    dir = parent;
  }
  return dir;
}

/** The package folder; none in the single executable, which carries its files inside (src/embedded.ts). */
export const PACKAGE_ROOT: string = EMBEDDED ? '' : findPackageRoot();
export const packageFile = (...parts: string[]): string => {
  if (EMBEDDED) throw new Error(`${join(...parts)}: the single executable has no package folder (see src/embedded.ts)`);
  return join(PACKAGE_ROOT, ...parts);
};
