import type { PhysicalLocation, LogicalLocation } from '../facts/subjects.js';
import type { Severity } from '../policy/types.js';

export interface Finding {
  host: string;
  ruleId: string;
  ruleName: string;
  severity: Severity;
  /** Stable across scans: rule, host, subject identity and discriminator; never a secret, never a container id. */
  fingerprint: string;
  subject: { kind: string; id: string };
  /** What tells this finding apart from others of the same rule and subject (an env key, a port), or null. */
  discriminator: string | null;
  message: string;
  locations: { physical: PhysicalLocation[]; logical: LogicalLocation[] };
  /** Against a baseline: new, unchanged (same fingerprint, message and severity), updated, or absent (gone since). */
  state?: BaselineState;
  /** Set when a waiver accepts the finding: it stays in the output and does not fail the run. */
  suppressed?: Suppression;
}

export type BaselineState = 'new' | 'unchanged' | 'updated' | 'absent';

export interface Suppression {
  justification: string;
  /** Last day (UTC) the waiver holds, `YYYY-MM-DD`. */
  expires: string;
  /** Where the waiver is written: `file:line`. */
  waiver: string;
}

/** Something that kept a part of the work from being done: a source not read, a rule that threw. */
export interface Notification {
  host: string;
  /** `error`: something was not checked (the run is incomplete); `note`: worth knowing only. */
  level: 'error' | 'note';
  kind: 'collection' | 'evaluation';
  /** The source that was not read (docker, files, …) or the rule that failed. */
  source: string;
  subject?: string;
  message: string;
}

export interface Evaluation {
  host: string;
  takenAt: string;
  /** False when the snapshot was incomplete or a rule failed on some subject. */
  complete: boolean;
  findings: Finding[];
  notifications: Notification[];
  /** Subjects a scope (--include/--exclude, ignore entries) left out, by kind; absent when no scope was given. */
  excluded?: { containers: number; files: number; ledger: number };
  /** The subjects left out, by identity: a baseline's findings about them are out of scope, not gone. */
  outOfScope?: { kind: string; id: string }[];
}
