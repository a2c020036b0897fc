import picomatch from 'picomatch';

/**
 * One glob dialect for every pattern a user writes (scope selectors, ignore entries, waiver subjects
 * and hosts): picomatch's bash-like globs — `*`, `?`, `[!u]*`, `**`, `{a,b}` — rather than a home-made
 * subset (waivers knew only `*` and `?`). Dots are ordinary characters; a leading `!` is literal;
 * `posix` makes `[!u]` the negated class bash has (without it picomatch also matches a literal `[!u]`).
 */
const cache = new Map<string, (s: string) => boolean>();
export function globMatcher(glob: string): (s: string) => boolean {
  let m = cache.get(glob);
  if (!m) {
    m = picomatch(glob, { dot: true, nonegate: true, posix: true });
    cache.set(glob, m);
  }
  return m;
}
