import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED } from './runtime/embedded.js';

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

/** The package folder; none in the single executable, which carries its files inside (src/runtime/embedded.ts). */
export const PACKAGE_ROOT: string = EMBEDDED ? '' : findPackageRoot();
export const packageFile = (...parts: string[]): string => {
  if (EMBEDDED)
    throw new Error(`${join(...parts)}: the single executable has no package folder (see src/runtime/embedded.ts)`);
  return join(PACKAGE_ROOT, ...parts);
};

/**
 * Every package file the program reads at run time, by its path in the package: the single
 * executable carries each of them (scripts/package/bundle.ts embeds this list), so a file read any
 * other way would be missing there. Read them with readPackageText.
 */
export const RUNTIME_PACKAGE_FILES = [
  'policies/policy.schema.json',
  'policies/cases.schema.json',
  'policies/adoption-plan.schema.json',
] as const;
export type RuntimePackageFile = (typeof RUNTIME_PACKAGE_FILES)[number];

/** The shipped pack's folder in the package: pack.yaml and one rule file per ID block (docs/writing-rules.md). */
export const SHIPPED_PACK_FOLDER = 'policies/mesh-core';
/**
 * Package folders whose pack files (`*.yaml`, not `*.cases.yaml`) the program reads at run time: the
 * single executable carries each of them (scripts/package/bundle.ts), so a rule file added to the
 * shipped pack is embedded without being named anywhere else.
 */
/** The second shipped pack's folder: docker-hardening (CIS Docker), loaded only for the `hardening` profile. */
export const HARDENING_PACK_FOLDER = 'policies/docker-hardening';
export const RUNTIME_PACKAGE_FOLDERS = [SHIPPED_PACK_FOLDER, HARDENING_PACK_FOLDER] as const;

/**
 * The text of a `<built-in>/…` path (how the single executable names the files it carries): undefined when it
 * carries no such file; null when the path is not built in or this is no single executable (read it from disk).
 */
export function builtInText(path: string): string | undefined | null {
  if (!EMBEDDED || !path.startsWith('<built-in>/')) return null;
  return EMBEDDED.files[path.slice('<built-in>/'.length)];
}

/** A runtime package file's text: from inside the single executable, else from the package folder. */
export async function readPackageText(path: RuntimePackageFile): Promise<string> {
  if (!EMBEDDED) return readFile(join(PACKAGE_ROOT, path), 'utf8');
  const text = EMBEDDED.files[path];
  if (text === undefined)
    throw new Error(`${path} is not embedded in the single executable (scripts/package/bundle.ts)`);
  return text;
}
