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
  /** The mesh resource (ledger id) the finding belongs to, when one is known: groups one root cause's findings in alerting. */
  resource?: string;
  /** When this finding was first seen (ISO time), carried across baselines; absent when not known. */
  firstSeen?: string;
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
  /** The ledger file the snapshot read (or would have): the host's record, where reports locate what has no file of its own. */
  ledgerPath?: string;
  /** False when the snapshot was incomplete or a rule failed on some subject. */
  complete: boolean;
  findings: Finding[];
  notifications: Notification[];
  /** Only when asked for (JUnit): what each rule checked, one entry per rule and subject it applied to. */
  checks?: Check[];
}

/** One rule checked on one subject: its findings' fingerprints (none: it passed). */
export interface Check {
  ruleId: string;
  /** The subject as the rule saw it: a container, a file, a container's source or mount, a ledger entry. */
  subject: string;
  fingerprints: string[];
}
