import { createRequire } from 'node:module';

// Written exactly so: the bundler of the single executable follows this form (scripts/package/bundle.ts).
const require = createRequire(import.meta.url);

/**
 * One glob dialect for every pattern a user writes (scope selectors, ignore entries, waiver subjects
 * and hosts): picomatch's bash-like globs — `*`, `?`, `[!u]*`, `**`, `{a,b}` — rather than a home-made
 * subset (waivers knew only `*` and `?`). Dots are ordinary characters; a leading `!` is literal;
 * `posix` makes `[!u]` the negated class bash has (without it picomatch also matches a literal `[!u]`).
 */
const cache = new Map<string, (s: string) => boolean>();
// Loaded with the first pattern (~25 ms of every start otherwise; most runs have no pattern at all).
let picomatch: typeof import('picomatch') | undefined;
export function globMatcher(glob: string): (s: string) => boolean {
  let m = cache.get(glob);
  if (!m) {
    picomatch ??= require('picomatch') as typeof import('picomatch');
    m = picomatch(glob, { dot: true, nonegate: true, posix: true });
    cache.set(glob, m);
  }
  return m;
}
