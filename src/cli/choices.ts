import { MeshAuditError } from '../errors.js';
import { didYouMean } from '../text/suggest.js';

export { didYouMean };

/* Flag values read and checked, one helper per kind, shared by every command. */

/** One value of a fixed set, read case-insensitively (`--fail-on Error` is `error`). */
export function parseChoice<T extends string>(flag: string, value: unknown, choices: readonly T[]): T {
  const v = String(value).trim().toLowerCase();
  const found = choices.find((c) => c === v);
  if (found === undefined)
    throw new MeshAuditError(
      `${flag} must be one of ${choices.join(', ')}, not '${String(value)}'${didYouMean(v, choices)}`,
    );
  return found;
}

/** A comma-separated list; an empty item (`text,,json`, a trailing comma) is refused, not skipped. */
export function parseList(flag: string, value: unknown): string[] {
  const text = String(value ?? '');
  const items = text.split(',').map((s) => s.trim());
  if (text.trim() === '') throw new MeshAuditError(`${flag} needs at least one value`);
  if (items.some((s) => s.length === 0))
    throw new MeshAuditError(`${flag} has an empty item in '${text}' (two commas, or one at an end)`);
  return items;
}

/**
 * A list of formats from a registry of them: case-insensitive, no empty item, unknown ones answered with the nearest.
 */
export function parseFormatList<T extends string>(value: unknown, known: readonly T[]): T[] {
  const names = parseList('--format', value).map((n) => n.toLowerCase());
  for (const name of names) {
    if (!(known as readonly string[]).includes(name))
      throw new MeshAuditError(`unknown format '${name}'${didYouMean(name, known)} (known: ${known.join(', ')})`);
  }
  return [...new Set(names)] as T[];
}

/** A whole number of at least 1 (`--keep`, `--jobs`, `--max-files`), or `fallback` when the flag is absent. */
export function parseCount(flag: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new MeshAuditError(`${flag} must be a whole number of at least 1, not '${String(value)}'`);
  return n;
}

/** `--lock-timeout`: seconds to wait for another run holding the output folder (0: do not wait). */
export function parseLockTimeout(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new MeshAuditError(`--lock-timeout must be a whole number of seconds (0 or more), not '${String(value)}'`);
  return n;
}
