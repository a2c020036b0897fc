import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

export const PACKAGE_ROOT = findPackageRoot();
export const packageFile = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);
