import { readFileSync } from 'node:fs';
import { EMBEDDED } from './runtime/embedded.js';
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
/**
 * Where the shipped rules' pages are (docs/rules/<ID>.md) unless the `docsUrl` setting says: the docs
 * folder of the repository at this version's tag, so a report links to the rule as the build that made
 * it has it, and a link kept in an old report or alert stays true after the rule changes on main.
 */
export const DEFAULT_DOCS_URL = `${TOOL_URI}/blob/v${TOOL_VERSION}/docs`;

function builtCommit(): string {
  try {
    return (JSON.parse(readFileSync(new URL(BUILD_INFO, import.meta.url), 'utf8')) as { commit: string }).commit;
  } catch {
    return 'unknown';
  }
}
