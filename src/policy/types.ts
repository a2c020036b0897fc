import type { Logic } from './logic.js';
import type { SubjectSetName } from './sets.js';

export type { SubjectSetName } from './sets.js';

export type Severity = 'error' | 'warning' | 'note';
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'note'];
export const severityRank = (s: Severity): number => ({ error: 3, warning: 2, note: 1 })[s];

/**
 * The profiles a rule can belong to, in one list (`--profile`'s values, the config's `profile`, completion).
 * `hardening` runs the shipped docker-hardening pack (CIS Docker), loaded only for it (src/policy/load.ts).
 */
export const PROFILES = ['nightly', 'premigration', 'hardening'] as const;
export type Profile = (typeof PROFILES)[number];
/** What `--profile` takes: a profile, or `all` (every rule). */
export const PROFILE_CHOICES = [...PROFILES, 'all'] as const;

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
  /** Markdown: what the rule catches and why it matters. */
  help: string;
  /** Markdown: what to do about a finding. */
  remediation: string;
  helpUri?: string;
  tags: string[];
  profiles: Profile[];
}

export interface LoadedRule extends Rule {
  /** Where the rule is written: its file (the pack file, or a rule file of a pack folder) and the line of its `id`. */
  source: { file: string; line: number };
  pack: string;
  /** A rule of a shipped pack (or built in): it has a page under docs/rules/, which its link defaults to. */
  shipped?: boolean;
}

export interface PolicyPack {
  /** The pack file, or the pack folder (docs/writing-rules.md, "ID blocks"). */
  file: string;
  /** The YAML files its rules were read from: the pack file, or a pack folder's pack.yaml and rule files. */
  parts: string[];
  /** The pack shipped with mesh-audit (loaded unless replaced on purpose), not one the operator added. */
  shipped?: boolean;
  pack: { id: string; name: string; version: string; description?: string };
  rules: LoadedRule[];
}
