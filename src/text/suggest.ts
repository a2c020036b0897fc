import { closest, distance } from 'fastest-levenshtein';

/** ` (did you mean 'x'?)` when one candidate is near enough to be a typo of the input, else ''. */
export function didYouMean(input: string, candidates: readonly string[], quote = (s: string) => `'${s}'`): string {
  if (candidates.length === 0) return '';
  const near = closest(input.toLowerCase(), [...candidates]);
  // Near: a few edits, and fewer than half the word (`x` is no typo of `json`).
  const d = distance(input.toLowerCase(), near);
  if (d <= Math.max(1, Math.min(3, Math.floor(near.length / 2)))) return ` (did you mean ${quote(near)}?)`;
  // Else the one short name the input spells out (`markdown`: `md`), its letters in order from the first (issue 47).
  const spelled = candidates.filter((c) => c.length >= 2 && c.length < input.length && spells(input.toLowerCase(), c));
  return spelled.length === 1 ? ` (did you mean ${quote(spelled[0]!)}?)` : '';
}

/** Whether `word` starts with `short`'s first letter and holds its letters in order (`markdown`, `md`). */
function spells(word: string, short: string): boolean {
  if (word[0] !== short[0]) return false;
  let at = 0;
  for (const ch of short) {
    at = word.indexOf(ch, at) + 1;
    if (at === 0) return false;
  }
  return true;
}
