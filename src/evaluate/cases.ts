import { evaluateRule } from './evaluate.js';
import type { Finding } from './finding.js';
import type { Subject } from '../facts/subjects.js';
import { casesFileOf, loadCasesFile, type Case, type RuleCases } from '../policy/cases-file.js';

export type { Case, RuleCases } from '../policy/cases-file.js';
import type { LoadedRule, PolicyPack } from '../policy/types.js';

export interface CaseResult {
  ruleId: string;
  kind: 'pass' | 'fail' | 'coverage';
  name: string;
  ok: boolean;
  /** Why it failed, after the `file:line` of the case. */
  detail?: string;
}

/** The cases of one file of a pack (`X.cases.yaml` beside `X.yaml`), and the rules that file holds. */
export interface FileCases {
  file: string;
  rules: LoadedRule[];
  cases: Record<string, RuleCases>;
}

/**
 * The cases of every file of a pack (a pack folder's rule files each have their own, beside them),
 * checked as strictly as rules (src/policy/cases-file.ts): a usage error at the first bad file.
 */
export async function loadCases(pack: PolicyPack): Promise<FileCases[]> {
  const all: FileCases[] = [];
  for (const part of pack.parts) {
    const rules = pack.rules.filter((r) => r.source.file === part);
    all.push({ file: casesFileOf(part), rules, cases: await loadCasesFile(casesFileOf(part), rules) });
  }
  return all;
}

function caseSubject(
  rule: LoadedRule,
  data: Record<string, unknown>,
  unknown: readonly string[] = [],
  allow: Case['allow'] = [],
): Subject {
  const id = String(data['id'] ?? data['name'] ?? data['path'] ?? 'case');
  return {
    set: rule.subject,
    // A case is about no container, file or entry of a host: its own kind, outside Subject's kinds on
    // purpose, shows in `rules test` output only; there is no typed way to say so without widening Subject.
    about: { kind: 'case', id } as unknown as Subject['about'],
    part: null,
    data: { host: 'case-host', id, ...data },
    ...(unknown.length > 0
      ? {
          unknown: unknown.map((field) => ({
            field: String(field),
            source: 'proc' as const,
            reason: 'not read (case)',
          })),
        }
      : {}),
    locate: () => ({ physical: [], logical: [] }),
    resource: null,
    module: null,
    ...(allow.length > 0
      ? { allowances: allow.map((a) => ({ rule: String(a.rule), reason: String(a.reason), by: `case (${id})` })) }
      : {}),
  };
}

/** Runs every case of every rule; a rule without a passing and a failing case is itself a failure. */
export function runCases(file: string, rules: readonly LoadedRule[], cases: Record<string, RuleCases>): CaseResult[] {
  const results: CaseResult[] = [];
  const ruleFile = file.replace(/\.cases(\.ya?ml)$/, '$1');
  for (const [id, mine] of Object.entries(cases)) {
    if (!rules.some((r) => r.id === id))
      results.push({
        ruleId: id,
        kind: 'coverage',
        name: 'cases name a rule',
        ok: false,
        detail: `${mine.at}: no rule ${id} in the file these cases are beside (${ruleFile})`,
      });
  }
  for (const rule of rules) {
    const mine = cases[rule.id];
    if ((mine?.pass ?? []).length === 0 || (mine?.fail ?? []).length === 0) {
      results.push({
        ruleId: rule.id,
        kind: 'coverage',
        name: 'has passing and failing cases',
        ok: false,
        detail: `${mine?.at ?? file}: every rule needs at least one pass and one fail case`,
      });
    }
    for (const kind of ['pass', 'fail'] as const) {
      for (const c of mine?.[kind] ?? []) {
        const why = judge(rule, kind, c);
        results.push({
          ruleId: rule.id,
          kind,
          name: c.name,
          ok: why === undefined,
          ...(why !== undefined ? { detail: `${c.at}: ${why}` } : {}),
        });
      }
    }
  }
  return results;
}

/** Messages under a case's FAIL line, one per line. */
const lines = (messages: readonly string[]): string => messages.map((m) => `\n         ${m}`).join('');

/** Why a case does not hold, or undefined when it does. */
function judge(rule: LoadedRule, kind: 'pass' | 'fail', c: Case): string | undefined {
  let all: Finding[];
  const probe = { unfilled: [] as string[] };
  try {
    all = evaluateRule(rule, caseSubject(rule, c.subject, c.unknown, c.allow), probe);
  } catch (err) {
    return `threw: ${(err as Error).message}`;
  }
  // What a ledger `allow:` accepts is no standing finding; a passing case naming one must show it at work.
  const findings = all.filter((f) => f.suppressed === undefined);
  if (kind === 'pass' && (c.allow ?? []).length > 0 && all.length === findings.length)
    return 'the case names an allowance but its subject breaks no allowed rule: it shows nothing';
  if (kind === 'pass')
    return findings.length > 0 ? `expected no finding, got: ${findings.map((f) => f.message).join(' | ')}` : undefined;
  if (findings.length === 0) return 'expected a finding, got none';
  const wrongSeverity = c.severity !== undefined ? findings.find((f) => f.severity !== c.severity) : undefined;
  if (wrongSeverity) return `expected severity ${c.severity}, got ${wrongSeverity.severity}`;
  if (c.expect !== undefined) {
    const got = findings.map((f) => f.discriminator ?? '').sort();
    const want = c.expect.map(String).sort();
    if (JSON.stringify(got) !== JSON.stringify(want))
      return `expected findings for [${want.join(', ')}], got [${got.join(', ')}]`;
  }
  if (c.message !== undefined) {
    const got = findings.map((f) => f.message).sort();
    const want = (typeof c.message === 'string' ? [c.message] : c.message).slice().sort();
    if (JSON.stringify(got) !== JSON.stringify(want))
      return `expected the message${want.length === 1 ? '' : 's'}${lines(want)}\n       got${lines(got)}`;
  }
  // A placeholder the case gives no value for prints `-`: the message was never really shown.
  const unfilled = [...new Set(probe.unfilled)];
  if (unfilled.length > 0)
    return (
      `the message has no value for ${unfilled.map((n) => `{${n}}`).join(', ')} (printed as '-'): ` +
      'give the subject the field(s) it names'
    );
  return undefined;
}

/** A case as a rule's page shows it: what it is, and the findings the rule gives on it (none for a passing case). */
export interface CaseExample {
  kind: 'pass' | 'fail';
  name: string;
  subject: Record<string, unknown>;
  /** Fields the case leaves unread. */
  unknown: string[];
  findings: { message: string; severity: string; discriminator: string | null }[];
}

/** Each case of a rule run as `rules test` runs it, kept with what the rule said: the examples of its page. */
export function caseExamples(rule: LoadedRule, cases: RuleCases | undefined): CaseExample[] {
  return (['fail', 'pass'] as const).flatMap((kind) =>
    (cases?.[kind] ?? []).map((c) => ({
      kind,
      name: c.name,
      subject: c.subject,
      unknown: (c.unknown ?? []).map(String),
      findings: evaluateRule(rule, caseSubject(rule, c.subject, c.unknown, c.allow)).map((f) => ({
        message: f.message,
        severity: f.severity,
        discriminator: f.discriminator,
      })),
    })),
  );
}
