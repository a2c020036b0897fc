import { closest, distance } from 'fastest-levenshtein';

/** ` (did you mean 'x'?)` when one candidate is near enough to be a typo of the input, else ''. */
export function didYouMean(input: string, candidates: readonly string[], quote = (s: string) => `'${s}'`): string {
  if (candidates.length === 0) return '';
  const near = closest(input.toLowerCase(), [...candidates]);
  // Near: a few edits, and fewer than half the word (`x` is no typo of `json`).
  const d = distance(input.toLowerCase(), near);
  return d <= Math.max(1, Math.min(3, Math.floor(near.length / 2))) ? ` (did you mean ${quote(near)}?)` : '';
}
