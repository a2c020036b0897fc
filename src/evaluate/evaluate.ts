import { hash } from 'node:crypto';
import { compareText } from '../compare.js';
import type { Subject, SubjectSets } from '../facts/subjects.js';
import { applyLogic, mayReadNames, truthy } from '../policy/logic.js';
import { renderTemplate } from '../policy/template.js';
import type { LoadedRule, Severity } from '../policy/types.js';
import type { Problem, Snapshot } from '../snapshot/types.js';
import type { Check, Evaluation, Finding, Notification } from './finding.js';

const FINGERPRINT_VERSION = 'mesh-audit/v1';

/** sha256 over what the finding is about; nothing secret and nothing that changes when a container is recreated. */
export function fingerprintOf(host: string, ruleId: string, subject: { kind: string; id: string }, discriminator: string | null): string {
  // One-shot hash: a Hash object per finding cost more than the hashing (100,000 findings in a sweep).
  return hash('sha256', JSON.stringify([FINGERPRINT_VERSION, host, ruleId, subject.kind, subject.id, discriminator]), 'hex').slice(0, 32);
}

function discriminatorOf(rule: LoadedRule, subject: Subject, item: unknown, scope: unknown): string | null {
  let own: string | null = null;
  if (rule.discriminator !== undefined) {
    const value = applyLogic(rule.discriminator, scope);
    own = value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);
  } else if (rule.each !== undefined) {
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') own = String(item);
    else throw new Error(`rule ${rule.id}: items of 'each' are not strings or numbers; give the rule a 'discriminator'`);
  }
  const parts = [subject.part, own].filter((p): p is string => p !== null);
  return parts.length === 0 ? null : parts.join('#');
}

export interface EvaluateOptions {
  /** Keep what each rule checked (Evaluation.checks), for reports that list passes too (JUnit). */
  recordChecks?: boolean;
}

const applies = (rule: LoadedRule, subject: Subject): boolean => rule.where === undefined || truthy(applyLogic(rule.where, subject.data));

/** One rule on one subject: zero or more findings. Throws when an expression fails. */
export function evaluateRule(rule: LoadedRule, subject: Subject): Finding[] {
  if (rule.where !== undefined && !truthy(applyLogic(rule.where, subject.data))) return [];
  const items: unknown[] = rule.each === undefined ? [undefined] : toList(applyLogic(rule.each, subject.data));
  const lets = rule.let === undefined ? [] : Object.entries(rule.let);
  // Most subjects pass: when the assertion reads none of the `let` names, those are worked out only
  // for a subject that fails it (the messages' texts of MA2001 were most of its cost).
  const letsFirst = lets.length > 0 && assertReadsLets(rule);
  const findings: Finding[] = [];
  for (const item of items) {
    // The subject's own data is the scope until something is added to it (rules never write to their scope).
    let scope: Record<string, unknown> = rule.each === undefined ? subject.data : { ...subject.data, item };
    const bindLets = () => {
      if (lets.length === 0) return;
      if (scope === subject.data) scope = { ...subject.data };
      for (const [name, expr] of lets) scope[name] = applyLogic(expr, scope);
    };
    if (letsFirst) bindLets();
    if (truthy(applyLogic(rule.assert, scope))) continue;
    if (!letsFirst) bindLets();
    const severity: Severity = rule.escalate?.find((step) => truthy(applyLogic(step.when, scope)))?.severity ?? rule.severity;
    const discriminator = discriminatorOf(rule, subject, item, scope);
    const host = String(subject.data['host']);
    findings.push({
      host,
      ruleId: rule.id,
      ruleName: rule.name,
      severity,
      fingerprint: fingerprintOf(host, rule.id, subject.about, discriminator),
      subject: { ...subject.about },
      discriminator,
      message: renderTemplate(rule.message, scope),
      locations: subject.locate(item),
      ...(subject.resource !== null ? { resource: subject.resource } : {}),
    });
  }
  return findings;
}

const readsLets = new WeakMap<LoadedRule, boolean>();

/** Whether the rule's assertion may read one of its `let` names (when in doubt, it may). */
function assertReadsLets(rule: LoadedRule): boolean {
  let answer = readsLets.get(rule);
  if (answer === undefined) {
    answer = mayReadNames(rule.assert, new Set(Object.keys(rule.let ?? {})));
    readsLets.set(rule, answer);
  }
  return answer;
}

function toList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === null || value === undefined) return [];
  throw new Error(`'each' must give a list, got ${typeof value}`);
}

/** The finding with the discriminator `<discriminator>#<n>` for the smallest n >= 2 whose fingerprint is still free. */
function nextOccurrence(finding: Finding, taken: ReadonlySet<string>): Finding {
  for (let n = 2; ; n++) {
    const discriminator = `${finding.discriminator ?? ''}#${n}`;
    const fingerprint = fingerprintOf(finding.host, finding.ruleId, finding.subject, discriminator);
    if (!taken.has(fingerprint)) return { ...finding, discriminator, fingerprint };
  }
}

export const compareFindings = (a: Finding, b: Finding): number =>
  compareText(a.host, b.host) ||
  compareText(a.ruleId, b.ruleId) ||
  compareText(a.subject.kind, b.subject.kind) ||
  compareText(a.subject.id, b.subject.id) ||
  compareText(a.discriminator ?? '', b.discriminator ?? '');

/**
 * Rules x subjects -> findings, deterministic. A rule that throws on one subject becomes a
 * notification; every other rule and subject still reports (nothing lost).
 */
export function evaluate(snapshot: Snapshot, subjects: SubjectSets, rules: readonly LoadedRule[], options: EvaluateOptions = {}): Evaluation {
  const host = snapshot.host.hostname;
  const fromCollection = (level: Notification['level']) => (p: Problem): Notification => ({
    host,
    level,
    kind: 'collection',
    source: p.source,
    ...(p.subject !== undefined ? { subject: p.subject } : {}),
    message: p.message,
  });
  const notifications: Notification[] = [...snapshot.problems.map(fromCollection('error')), ...(snapshot.notes ?? []).map(fromCollection('note'))];
  const findings: Finding[] = [];
  const emitted = new Set<string>();
  const checks: Check[] | undefined = options.recordChecks ? [] : undefined;
  for (const rule of [...rules].sort((a, b) => compareText(a.id, b.id))) {
    for (const subject of subjects[rule.subject]) {
      try {
        // A subject the rule does not apply to is no check of it (its `where` is evaluated twice only here).
        const check: Check | undefined =
          checks && applies(rule, subject) ? { ruleId: rule.id, subject: `${String(subject.data['kind'])} ${String(subject.data['id'])}`, fingerprints: [] } : undefined;
        const found = evaluateRule(rule, subject);
        if (check) checks!.push(check);
        if (found.length === 0) continue;
        const own = new Set<string>();
        for (const finding of found) {
          // Two items of one subject with one discriminator are one finding for alerting: keep the first.
          if (own.has(finding.fingerprint)) continue;
          own.add(finding.fingerprint);
          // Two subjects with one identity (ledger entries sharing an id, or without ids on one line)
          // are two findings: the later one is told apart by an occurrence number, never dropped.
          const kept = emitted.has(finding.fingerprint) ? nextOccurrence(finding, emitted) : finding;
          emitted.add(kept.fingerprint);
          findings.push(kept);
          check?.fingerprints.push(kept.fingerprint);
        }
      } catch (err) {
        notifications.push({
          host,
          level: 'error',
          kind: 'evaluation',
          source: rule.id,
          subject: `${subject.about.kind} ${subject.about.id}`,
          message: `rule ${rule.id} (${rule.name}) failed on ${subject.about.kind} ${subject.about.id}: ${(err as Error).message}`,
        });
      }
    }
  }
  return {
    host,
    takenAt: snapshot.takenAt,
    ledgerPath: snapshot.ledger.path,
    complete: notifications.every((n) => n.level !== 'error'),
    findings: findings.sort(compareFindings),
    notifications,
    ...(checks ? { checks } : {}),
  };
}
