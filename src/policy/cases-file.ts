import { NotRegularFile, readRegularInput } from '../input/read.js';
import { keyLineAt, parseYaml, schemaErrors } from '../input/yaml.js';
import { MeshAuditError } from '../errors.js';
import { builtInText, readPackageText } from '../paths.js';
import { validatorFor, type Validator } from '../input/validate.js';
import { unknownSubjectFields } from './field-check.js';
import { unknownFieldOf } from './fields.js';
import { escapePointer } from './logic.js';
import type { LoadedRule, Severity } from './types.js';

/*
 * A rule's cases, kept as data beside the file that holds the rule (`X.cases.yaml` beside `X.yaml`),
 * read as strictly as the rules: the JSON Schema policies/cases.schema.json (a key it does not know,
 * `expects:` for `expect:`, is refused), and every field a case's subject gives (or calls `unknown`)
 * checked against the rule's subject set like a rule's `var`. Every problem with its file:line.
 */

/** One case: a subject on which a rule must pass (no finding) or fail. */
export interface Case {
  name: string;
  subject: Record<string, unknown>;
  /** For a failing case: the discriminators the findings must have, exactly (optional). */
  expect?: (string | number)[];
  /** For a failing case: the severity every finding must have, after escalation (optional). */
  severity?: Severity;
  /** For a failing case: the findings' messages, exactly (a string: the one finding's). */
  message?: string | string[];
  /** Fields of the subject whose source was not read (`open_ports` without /proc): the rule must not report on them. */
  unknown?: string[];
  /**
   * Rules the ledger entry claiming the subject allows it to break (its `allow:`). In a passing case the
   * subject must break the rule and the finding be suppressed, so the case shows the allowance at work.
   */
  allow?: { rule: string; reason: string }[];
  /** Where the case is written: `file:line`. */
  at: string;
}

export interface RuleCases {
  pass?: Case[];
  fail?: Case[];
  /** Where the rule's cases are written: `file:line` of its id. */
  at: string;
}

/** The cases file of a pack file (or of a rule file of a pack folder). */
export const casesFileOf = (packFile: string): string => packFile.replace(/\.ya?ml$/, '.cases.yaml');

/** The JSON Schema of a cases file, shipped beside the pack schema (editors use it too). */
export async function readCasesSchema(): Promise<object> {
  return JSON.parse(await readPackageText('policies/cases.schema.json')) as object;
}

let validateCases: Validator<unknown> | undefined;

/**
 * The cases in `file` of `rules` (the rules of the file it is beside), checked; no file is no cases.
 * A cases file that is not valid, or a case whose subject gives a field its rule's set does not have,
 * is a usage error listing every problem at its file:line.
 */
export async function loadCasesFile(file: string, rules: readonly LoadedRule[]): Promise<Record<string, RuleCases>> {
  let text: string;
  try {
    // The shipped packs' cases travel inside the single executable, beside their rule files.
    const embedded = builtInText(file);
    if (embedded === undefined) return {};
    text = embedded ?? (await readRegularInput(file)).toString('utf8');
  } catch (err) {
    // No cases file is no cases; one that is a FIFO or a device is never read (it could block forever).
    if (err instanceof NotRegularFile) throw new MeshAuditError(`${file}: cases file ${err.message}`);
    return {};
  }
  const { doc, lines, value } = parseYaml(text, file);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new MeshAuditError(`${file}:1: cases must be a map of rule id to {pass, fail}`);
  const schema = await readCasesSchema();
  validateCases ??= validatorFor('cases', schema);
  if (!validateCases(value))
    throw new MeshAuditError(schemaErrors(file, doc, lines, validateCases.errors ?? [], schema).join('\n'));

  const problems: { line: number; text: string }[] = [];
  const lineOf = (pointer: string) => keyLineAt(doc, lines, pointer);
  const cases: Record<string, RuleCases> = {};
  for (const [id, written] of Object.entries(value as Record<string, Omit<RuleCases, 'at'>>)) {
    const base = `/${escapePointer(id)}`;
    const rule = rules.find((r) => r.id === id);
    const ruleCases: RuleCases = { at: `${file}:${lineOf(base)}` };
    for (const kind of ['pass', 'fail'] as const) {
      const list = written[kind];
      if (list === undefined) continue;
      ruleCases[kind] = list.map((c, i) => {
        const at = `${base}/${kind}/${i}`;
        // A case of a rule the file does not hold is reported when the cases run (it names no set to check against).
        if (rule !== undefined) {
          const which = `rule ${id}: ${kind} case '${c.name}'`;
          for (const p of unknownSubjectFields(rule.subject, c.subject)) {
            const pointer = `${at}/subject/${p.path.map(escapePointer).join('/')}`;
            problems.push({ line: lineOf(pointer), text: `${which}: subject.${p.path.join('.')}: ${p.message}` });
          }
          (c.unknown ?? []).forEach((field, n) => {
            const why = unknownFieldOf(rule.subject, field.split('.'));
            if (why !== null) problems.push({ line: lineOf(`${at}/unknown/${n}`), text: `${which}: unknown: ${why}` });
          });
        }
        return { ...c, at: `${file}:${lineOf(at)}` };
      });
    }
    cases[id] = ruleCases;
  }
  if (problems.length > 0)
    throw new MeshAuditError(
      problems
        .sort((a, b) => a.line - b.line)
        .map((p) => `${file}:${p.line}: ${p.text}`)
        .join('\n'),
    );
  return cases;
}
