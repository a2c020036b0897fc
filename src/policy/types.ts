import type { Logic } from './logic.js';
import type { SubjectSetName } from './sets.js';

export type { SubjectSetName } from './sets.js';

export type Severity = 'error' | 'warning' | 'note';
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'note'];
export const severityRank = (s: Severity): number => ({ error: 3, warning: 2, note: 1 })[s];

export type Profile = 'nightly' | 'premigration';

/** A rule as written in a pack, after validation. */
export interface Rule {
  id: string;
  name: string;
  title: string;
  severity: Severity;
  subject: SubjectSetName;
  where?: Logic;
  each?: Logic;
  discriminator?: Logic;
  let?: Record<string, Logic>;
  assert: Logic;
  escalate?: { when: Logic; severity: Severity }[];
  message: string;
  help: string;
  helpUri?: string;
  tags: string[];
  profiles: Profile[];
}

export interface LoadedRule extends Rule {
  /** Where the rule is written: the pack file and the line of its `id`. */
  source: { file: string; line: number };
  pack: string;
  /** A rule of the shipped pack (or built in): documented in the README, which its link defaults to. */
  shipped?: boolean;
}

export interface PolicyPack {
  file: string;
  /** The pack shipped with mesh-audit (loaded unless replaced on purpose), not one the operator added. */
  shipped?: boolean;
  pack: { id: string; name: string; version: string; description?: string };
  rules: LoadedRule[];
}
