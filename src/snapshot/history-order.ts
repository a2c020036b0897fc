/*
 * The order of a history folder: by the run sequence in the file name (`snapshot-<seq>-<time>.json`,
 * written by history-store.ts), never by the clock, which can go backwards. Files without a sequence
 * (an older mesh-audit's, or a folder put together by hand) come first, by name.
 */
const SEQUENCED = /^snapshot-(\d+)-/;

export function historySequenceOf(name: string): number | null {
  const m = SEQUENCED.exec(name);
  return m ? Number(m[1]) : null;
}

/** Oldest first. */
export function compareHistoryNames(a: string, b: string): number {
  const sa = historySequenceOf(a) ?? -1;
  const sb = historySequenceOf(b) ?? -1;
  if (sa !== sb) return sa - sb;
  return a < b ? -1 : a > b ? 1 : 0;
}
