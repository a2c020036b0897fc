import { readFileSync } from 'node:fs';
import { EMBEDDED } from './embedded.js';
import { packageFile } from './paths.js';

export const TOOL_NAME = 'mesh-audit';
/** Where `npm run build` writes the commit, beside the other generated files (dist/src/generated/). */
export const BUILD_INFO = 'generated/build-info.json';

export const TOOL_VERSION: string =
  EMBEDDED?.version ?? (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
/**
 * The commit the program was built from: written by `npm run build` (scripts/precompile.ts) or
 * embedded by `npm run package`; 'unknown' when built outside a git checkout or by tsc alone.
 */
export const TOOL_COMMIT: string = EMBEDDED?.commit ?? builtCommit();
export const TOOL_URI = 'https://github.com/mesh-audit/mesh-audit';

function builtCommit(): string {
  try {
    return (JSON.parse(readFileSync(new URL(BUILD_INFO, import.meta.url), 'utf8')) as { commit: string }).commit;
  } catch {
    return 'unknown';
  }
}
