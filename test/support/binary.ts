import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A tool the tests run: `$OVERRIDE_ENV` when set (and executable), else the Debian path, else the first name on PATH; null when none. */
export function findBinary(overrideEnv: string, debianPath: string, names: readonly string[]): string | null {
  const override = process.env[overrideEnv];
  if (override) return executable(override) ? override : null;
  if (executable(debianPath)) return debianPath;
  for (const name of names) {
    for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
      if (dir && executable(join(dir, name))) return join(dir, name);
    }
  }
  return null;
}
