import type { Problem, Snapshot } from './types.js';

/**
 * The snapshot with problems of the run added (history that could not be read, a snapshot that could
 * not be kept): what a run could not do is reported with the snapshot's own sources not read. The
 * same object when there is nothing to add.
 */
export function withProblems<S extends Pick<Snapshot, 'problems'>>(
  snapshot: S,
  ...added: readonly (readonly Problem[])[]
): S {
  const extra = added.flat();
  return extra.length > 0 ? { ...snapshot, problems: [...snapshot.problems, ...extra] } : snapshot;
}
