import { NotRegularFile, readRegularInput } from '../input/read.js';
import { evaluateRule } from './evaluate.js';
import type { Subject } from '../facts/subjects.js';
import { MeshAuditError } from '../errors.js';
import { parseYaml } from '../input/yaml.js';
import type { LoadedRule, PolicyPack } from '../policy/types.js';

/** Cases kept as data beside a pack (`<pack>.cases.yaml`): subjects on which a rule must pass or fail. */
export interface RuleCases {
  pass?: Case[];
  fail?: Case[];
}
interface Case {
  name: string;
  subject: Record<string, unknown>;
  /** For a failing case: the discriminators the findings must have, exactly (optional). */
  expect?: string[];
  /** For a failing case: the severity every finding must have, after escalation (optional). */
  severity?: string;
  /**
   * Fields of the subject whose source was not read (e.g. `open_ports` without /proc): the rule must not report on
   * them.
   */
  unknown?: string[];
  /**
   * Rules the ledger entry claiming the subject allows it to break (its `allow:`). In a passing case the
   * subject must break the rule and the finding be suppressed, so the case shows the allowance at work.
   */
  allow?: { rule: string; reason: string }[];
}

export interface CaseResult {
  ruleId: string;
  kind: 'pass' | 'fail' | 'coverage';
  name: string;
  ok: boolean;
  detail?: string;
}

export const casesFileOf = (packFile: string): string => packFile.replace(/\.ya?ml$/, '.cases.yaml');

/** The cases of one file of a pack (`X.cases.yaml` beside `X.yaml`), and the rules that file holds. */
export interface FileCases {
  file: string;
  rules: LoadedRule[];
  cases: Record<string, RuleCases>;
}

/** The cases of every file of a pack: a pack folder's rule files each have their own, beside them. */
export async function loadCases(pack: PolicyPack): Promise<FileCases[]> {
  return Promise.all(
    pack.parts.map(async (part) => ({
      file: casesFileOf(part),
      rules: pack.rules.filter((r) => r.source.file === part),
      cases: await loadCasesFile(casesFileOf(part)),
    })),
  );
}

async function loadCasesFile(file: string): Promise<Record<string, RuleCases>> {
  let text: string;
  try {
    text = (await readRegularInput(file)).toString('utf8');
  } catch (err) {
    // No cases file is no cases; one that is a FIFO or a device is never read (it could block forever).
    if (err instanceof NotRegularFile) throw new MeshAuditError(`${file}: cases file ${err.message}`);
    return {};
  }
  const { value } = parseYaml(text, file);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new MeshAuditError(`${file}: cases must be a map of rule id to {pass, fail}`);
  return value as Record<string, RuleCases>;
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
    ...(allow.length > 0
      ? { allowances: allow.map((a) => ({ rule: String(a.rule), reason: String(a.reason), by: `case (${id})` })) }
      : {}),
  };
}

/** Runs every case of every rule; a rule without a passing and a failing case is itself a failure. */
export function runCases(rules: readonly LoadedRule[], cases: Record<string, RuleCases>): CaseResult[] {
  const results: CaseResult[] = [];
  for (const id of Object.keys(cases)) {
    if (!rules.some((r) => r.id === id))
      results.push({
        ruleId: id,
        kind: 'coverage',
        name: 'cases name a rule',
        ok: false,
        detail: `no rule ${id} in the file these cases are beside`,
      });
  }
  for (const rule of rules) {
    const mine = cases[rule.id] ?? {};
    if ((mine.pass ?? []).length === 0 || (mine.fail ?? []).length === 0) {
      results.push({
        ruleId: rule.id,
        kind: 'coverage',
        name: 'has passing and failing cases',
        ok: false,
        detail: 'every rule needs at least one pass and one fail case',
      });
    }
    for (const kind of ['pass', 'fail'] as const) {
      for (const c of mine[kind] ?? []) {
        let all;
        try {
          all = evaluateRule(rule, caseSubject(rule, c.subject, c.unknown, c.allow));
        } catch (err) {
          results.push({ ruleId: rule.id, kind, name: c.name, ok: false, detail: `threw: ${(err as Error).message}` });
          continue;
        }
        // What a ledger `allow:` accepts is no standing finding; a passing case naming one must show it at work.
        const findings = all.filter((f) => f.suppressed === undefined);
        if (kind === 'pass' && (c.allow ?? []).length > 0 && all.length === findings.length) {
          results.push({
            ruleId: rule.id,
            kind,
            name: c.name,
            ok: false,
            detail: 'the case names an allowance but its subject breaks no allowed rule: it shows nothing',
          });
          continue;
        }
        const got = findings.map((f) => f.discriminator ?? '').sort();
        const wrongSeverity =
          kind === 'fail' && c.severity !== undefined ? findings.find((f) => f.severity !== c.severity) : undefined;
        if (wrongSeverity) {
          results.push({
            ruleId: rule.id,
            kind,
            name: c.name,
            ok: false,
            detail: `expected severity ${c.severity}, got ${wrongSeverity.severity}`,
          });
        } else if (kind === 'pass') {
          results.push({
            ruleId: rule.id,
            kind,
            name: c.name,
            ok: findings.length === 0,
            ...(findings.length > 0
              ? { detail: `expected no finding, got: ${findings.map((f) => f.message).join(' | ')}` }
              : {}),
          });
        } else if (c.expect !== undefined) {
          const want = [...c.expect].map(String).sort();
          const ok = JSON.stringify(got) === JSON.stringify(want);
          results.push({
            ruleId: rule.id,
            kind,
            name: c.name,
            ok,
            ...(ok ? {} : { detail: `expected findings for [${want.join(', ')}], got [${got.join(', ')}]` }),
          });
        } else {
          results.push({
            ruleId: rule.id,
            kind,
            name: c.name,
            ok: findings.length > 0,
            ...(findings.length === 0 ? { detail: 'expected a finding, got none' } : {}),
          });
        }
      }
    }
  }
  return results;
}
