import type { Evaluation, Finding, Notification } from '../evaluate/finding.js';
import { compareFindings, fingerprintOf } from '../evaluate/evaluate.js';
import { PROFILES, type LoadedRule } from '../policy/types.js';
import { globMatcher } from '../fs/glob.js';

/** One accepted risk: a rule, on subjects matching a pattern, for a reason, until a date. */
export interface Waiver {
  /** Rule id or name. */
  rule: string;
  /**
   * Glob (`*`, `?`, `[!u]*`, `**`, `{a,b}`: src/fs/glob.ts) over the subject id: a container's name, a file's path, a
   * ledger entry's id.
   */
  subject: string;
  /** Glob over the host name; every host when absent. */
  host?: string;
  justification: string;
  /** Last day it holds, `YYYY-MM-DD` (UTC). */
  expires: string;
  /** `file:line` where it is written. */
  source: string;
}

/** The built-in rule an expired waiver is reported under. */
export const WAIVER_EXPIRED_RULE: LoadedRule = {
  id: 'MA0001',
  name: 'waiver-expired',
  title: 'A waiver has expired',
  severity: 'warning',
  subject: 'host',
  assert: true,
  message: '',
  help:
    'A waiver accepts a finding until its expiry date. Past it, the finding counts again and the waiver is ' +
    'reported.',
  remediation: 'fix what the waived finding is about, or renew the waiver with a new justification and date.',
  tags: ['waivers'],
  profiles: [...PROFILES],
  source: { file: '(built in)', line: 1 },
  pack: 'mesh-audit',
  shipped: true,
};

/** How a suppressed finding reads: `waived until DATE` or `allowed by ledger entry ID (file:line)`. */
export const suppressionText = (s: NonNullable<Finding['suppressed']>): string =>
  'expires' in s ? `waived until ${s.expires}` : `allowed by ledger entry ${s.allowedBy}`;

/** A waiver holds through the whole of its expiry day, UTC. */
export const isExpired = (waiver: Waiver, now: Date): boolean => now.toISOString().slice(0, 10) > waiver.expires;

const matches = (w: Waiver, f: Finding): boolean =>
  (w.rule === f.ruleId || w.rule === f.ruleName) &&
  globMatcher(w.subject)(f.subject.id) &&
  (w.host === undefined || globMatcher(w.host)(f.host));

/**
 * Applies waivers to findings (pure): a live waiver marks matching findings suppressed; an expired
 * one suppresses nothing and becomes a finding of its own; one that matched nothing is a note.
 */
export function applyWaivers(evaluations: readonly Evaluation[], waivers: readonly Waiver[], now: Date): Evaluation[] {
  return evaluations.map((e) => {
    const forHost = waivers.filter((w) => w.host === undefined || globMatcher(w.host)(e.host));
    const live = forHost.filter((w) => !isExpired(w, now));
    const used = new Set<Waiver>();
    const findings = e.findings.map((f): Finding => {
      // A finding the ledger allows is accepted already, for as long as the entry says so.
      const w = f.suppressed ? undefined : live.find((candidate) => matches(candidate, f));
      if (!w) return f;
      used.add(w);
      return { ...f, suppressed: { justification: w.justification, expires: w.expires, waiver: w.source } };
    });
    const expired = forHost
      .filter((w) => isExpired(w, now))
      .map((w): Finding => {
        const id = `${w.rule} ${w.subject}`;
        const [file, line] = splitSource(w.source);
        return {
          host: e.host,
          ruleId: WAIVER_EXPIRED_RULE.id,
          ruleName: WAIVER_EXPIRED_RULE.name,
          severity: WAIVER_EXPIRED_RULE.severity,
          fingerprint: fingerprintOf(e.host, WAIVER_EXPIRED_RULE.id, { kind: 'waiver', id }, null),
          subject: { kind: 'waiver', id },
          discriminator: null,
          message:
            `the waiver of ${w.rule} for ${w.subject} expired on ${w.expires}; its findings count again ` +
            `(${w.justification})`,
          locations: { physical: [{ path: file, ...(line !== undefined ? { line } : {}) }], logical: [] },
        };
      });
    const unmatched = live
      .filter((w) => !used.has(w))
      .map(
        (w): Notification => ({
          host: e.host,
          level: 'note',
          kind: 'evaluation',
          source: 'waivers',
          subject: w.source,
          message: `waiver ${w.source} (${w.rule} for ${w.subject}) matched no finding; remove it if the risk is gone`,
        }),
      );
    return {
      ...e,
      findings: [...findings, ...expired].sort(compareFindings),
      notifications: [...e.notifications, ...unmatched],
    };
  });
}

function splitSource(source: string): [string, number | undefined] {
  const m = /^(.*):(\d+)$/.exec(source);
  return m ? [m[1]!, Number(m[2])] : [source, undefined];
}
