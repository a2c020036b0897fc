import { MeshAuditError } from '../errors.js';
import { didYouMean } from '../text/suggest.js';
import { loadShippedPacks } from './load.js';
import type { LoadedRule } from './types.js';

/*
 * The `skip` setting (issue 47): rule ids an operator turns off on purpose. A skipped rule is not evaluated, and never
 * hidden silently: the report of every format names the rules of the run's profile it left out
 * (`Report.policy.skipped`).
 * An id no rule has is refused (exit 2), with the nearest id.
 *
 * The shipped packs' ids are known ids even when the run does not load that pack (the hardening pack outside
 * `--profile hardening`, the shipped pack under `--no-default-policy`): one config file serves the nightly run and the
 * hardening run. Such an id, like that of a rule of another profile, names no rule this run would evaluate, so there is
 * nothing to leave out and nothing to report.
 */

/** Refuses the ids in `skip` that no rule has: every one at once, each with the nearest id. `what`: how to name it. */
export async function checkSkip(skip: readonly string[], rules: readonly LoadedRule[], what: string): Promise<void> {
  const loaded = new Set(rules.map((r) => r.id));
  if (skip.every((id) => loaded.has(id))) return;
  // Read only when an id is not among the loaded rules: a run that names none pays nothing.
  const shipped = (await loadShippedPacks()).flatMap((p) => p.rules.map((r) => r.id));
  // The run's own rules first: of two ids as near, the suggestion is one this run evaluates.
  const known = [...new Set([...[...loaded].sort(), ...shipped.sort()])];
  const unknown = [...new Set(skip.filter((id) => !known.includes(id)))];
  if (unknown.length === 0) return;
  // didYouMean compares in lower case; rule ids are upper case (policies/policy.schema.json), so `ma2001` is MA2001
  // mistyped.
  const candidates = known.map((id) => id.toLowerCase());
  const suggestion = (id: string): string => didYouMean(id, candidates, (near) => `'${near.toUpperCase()}'`);
  throw new MeshAuditError(
    unknown.map((id) => `${what}: no rule '${id}'${suggestion(id)} (mesh-audit rules list names the rules)`).join('\n'),
  );
}

/** The rules a run evaluates, `skip`'s left out. */
export const withoutSkipped = (rules: readonly LoadedRule[], skip: readonly string[]): LoadedRule[] =>
  skip.length === 0 ? [...rules] : rules.filter((r) => !skip.includes(r.id));

/** The ids of `selected` (the rules the run's profile takes) that `skip` leaves out, sorted: what the reports name. */
export const skippedOf = (selected: readonly LoadedRule[], skip: readonly string[]): string[] =>
  [...new Set(selected.filter((r) => skip.includes(r.id)).map((r) => r.id))].sort();
