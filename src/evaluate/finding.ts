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
  /**
   * The mesh resource (ledger id) the finding belongs to, when one is known: groups one root cause's findings in
   * alerting.
   */
  resource?: string;
  /**
   * The mesh module the finding belongs to, when one is known: the subject's `mesh.module` label, else the module of
   * its resource's ledger entry.
   */
  module?: string;
  /** Against a baseline: new, unchanged (same fingerprint, message and severity), updated, or absent (gone since). */
  state?: BaselineState;
  /**
   * When the finding was first seen (RFC 3339): carried from the baseline's finding, else the time of
   * the snapshot it was found in. Set by triage; Alertmanager's startsAt.
   */
  firstSeen?: string;
  /**
   * Set when an `escalate` condition read facts whose source was not read: the severity is the rule's
   * own (not raised, not lowered), the message says so, and the run is incomplete.
   */
  unknownEscalation?: UnknownEscalation;
  /** Set when a waiver or the ledger (`allow:`) accepts the finding: it stays in the output, does not fail the run. */
  suppressed?: Suppression;
}

/** What kept a finding's severity from being worked out: the unknown facts its rule's `escalate` reads. */
export interface UnknownEscalation {
  /** The unknown fields read (dotted paths into the subject's data). */
  fields: string[];
  /** The sources not read, sorted. */
  sources: string[];
  /** Why, one line per unknown fact. */
  reasons: string[];
  /**
   * Set when the baseline had this finding at a severity that was checked: the severity is kept at that one, as
   * last checked (the baseline report's time), rather than falling back to the rule's own for a night.
   */
  keptFrom?: string;
}

export type BaselineState = 'new' | 'unchanged' | 'updated' | 'absent';

/** Why a finding does not count: a waiver (until its expiry) or a ledger entry's `allow:` (while it says so). */
export type Suppression =
  | {
      justification: string;
      /** Last day (UTC) the waiver holds, `YYYY-MM-DD`. */
      expires: string;
      /** Where the waiver is written: `file:line`. */
      waiver: string;
    }
  | {
      justification: string;
      /** The ledger entry whose `allow:` names the rule: `id (file:line)`. */
      allowedBy: string;
    };

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

/** A rule that was not checked on a subject because facts it reads are unknown (their source was not read). */
export interface NotChecked {
  ruleId: string;
  subject: { kind: string; id: string };
  /** The part of the subject (a mount's destination, a source path), or null for the whole subject. */
  part: string | null;
  /** The sources not read, sorted: docker, ledger, proc, files. */
  sources: string[];
  /** Why, one line per unknown fact the rule reads. */
  reasons: string[];
}

export interface Evaluation {
  host: string;
  takenAt: string;
  /**
   * The ledger file the snapshot read (or would have): the host's record, where reports locate what has no file of its
   * own.
   */
  ledgerPath?: string;
  /** False when the snapshot was incomplete, a rule failed on some subject, or a rule was not checked. */
  complete: boolean;
  findings: Finding[];
  notifications: Notification[];
  /** Rules not checked on subjects whose facts they read are unknown: neither a finding nor its absence. */
  notChecked?: NotChecked[];
  /** Only when asked for (JUnit): what each rule checked, one entry per rule and subject it applied to. */
  checks?: Check[];
  /** Subjects a scope (--include/--exclude, ignore entries) left out, by kind; absent when no scope was given. */
  excluded?: { containers: number; files: number; ledger: number; listeners: number };
  /** The subjects left out, by identity: a baseline's findings about them are out of scope, not gone. */
  outOfScope?: { kind: string; id: string }[];
  /**
   * Every socket on the host was left out (`listener:*`, src/scope.ts), those not read included: a baseline's
   * findings about the host's listeners are out of scope, not gone, though this run never knew them one by one.
   */
  everyHostListenerOut?: boolean;
}

/** One rule checked on one subject: its findings' fingerprints (none: it passed). */
export interface Check {
  ruleId: string;
  /** The subject as the rule saw it: a container, a file, a container's source or mount, a ledger entry. */
  subject: string;
  fingerprints: string[];
}
