import { buildSubjects } from './facts/subjects.js';
import { evaluate } from './evaluate/evaluate.js';
import type { LoadedRule, Profile } from './policy/types.js';
import type { Report } from './report/report.js';
import type { Snapshot } from './snapshot/types.js';
import { TOOL_NAME, TOOL_URI, TOOL_VERSION } from './version.js';

/** The pure core, top to bottom: snapshot -> facts -> findings -> a report for every writer. */
export function auditSnapshots(
  snapshots: readonly Snapshot[],
  history: readonly Snapshot[],
  rules: readonly LoadedRule[],
  options: { profile?: Profile | undefined; now: Date },
): Report {
  const selected = rules.filter((r) => options.profile === undefined || r.profiles.includes(options.profile));
  return {
    tool: { name: TOOL_NAME, version: TOOL_VERSION, uri: TOOL_URI },
    generatedAt: options.now.toISOString(),
    rules: [...selected],
    evaluations: snapshots.map((s) => evaluate(s, buildSubjects(s, history), selected)),
  };
}
