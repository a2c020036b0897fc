import deepEqual from 'fast-deep-equal';
import { readPackText } from './load.js';
import { lineAt, parseYaml } from '../input/yaml.js';
import type { PolicyPack, Rule } from './types.js';
import { escapePointer } from './logic.js';

/**
 * `mesh-audit rules lint`: the traps JSON Logic users fall into, found in a pack without running it.
 * Each warning names the file and line of the expression, the rule, and what to write instead
 * (docs/writing-rules.md, "Writing rules"). A warning is advice: the pack still loads and runs.
 */
export interface LintWarning {
  file: string;
  line: number;
  ruleId: string;
  /** The rule's field the expression is in: `assert`, `where`, `let/NAME`, `escalate/0/when`, … */
  field: string;
  code:
    | 'missing-compares-as-zero'
    | 'loose-equality'
    | 'all-on-empty-list'
    | 'some-on-empty-list'
    | 'numbers-compared-as-text';
  message: string;
}

type Found = { pointer: string; code: LintWarning['code']; message: string };

const ORDERING = new Set(['<', '<=', '>', '>=']);
const isOperation = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1;
const argsOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
const show = (v: unknown): string => JSON.stringify(v);

/** A `var` with no default (or a null one): what it gives when the path is missing is null. */
function varWithoutDefault(v: unknown): string | undefined {
  if (!isOperation(v) || !Object.hasOwn(v, 'var')) return undefined;
  const args = argsOf(v['var']);
  if (args.length >= 2 && args[1] !== null) return undefined;
  // The empty path is the data itself (the item, inside map, all, some…): never missing.
  return (typeof args[0] === 'string' && args[0] !== '') || typeof args[0] === 'number' ? String(args[0]) : undefined;
}

/** A number written, or what an arithmetic operation or `count` gives. */
const NUMBER_OPERATORS = new Set(['count', '+', '-', '*', '/', '%', 'min', 'max']);
const isNumberLike = (v: unknown): boolean =>
  typeof v === 'number' || (isOperation(v) && NUMBER_OPERATORS.has(Object.keys(v)[0]!));

const literalType = (v: unknown): string | undefined =>
  isOperation(v)
    ? undefined
    : v === null
      ? 'null'
      : Array.isArray(v)
        ? v.some(isOperation)
          ? undefined
          : 'array'
        : typeof v;
const NUMERIC_TEXT = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

/** Whether an earlier sibling of an `and`/`or` already looks at whether LIST is empty. */
function guarded(list: unknown, earlier: readonly unknown[]): boolean {
  const looksAt = (e: unknown): boolean => {
    if (Array.isArray(e)) return e.some(looksAt);
    if (!isOperation(e)) return false;
    const [op, raw] = Object.entries(e)[0]!;
    const args = argsOf(raw);
    if ((op === 'count' || op === '!!' || op === '!') && args.length === 1 && deepEqual(args[0], list)) return true;
    return args.some(looksAt);
  };
  return earlier.some(looksAt);
}

function walk(expr: unknown, at: string, earlier: readonly unknown[], out: Found[]): void {
  if (Array.isArray(expr)) {
    expr.forEach((e, i) => walk(e, `${at}/${i}`, [], out));
    return;
  }
  if (!isOperation(expr)) return;
  const [op, raw] = Object.entries(expr)[0]!;
  const args = argsOf(raw);
  const argAt = (i: number) => (Array.isArray(raw) ? `${at}/${escapePointer(op)}/${i}` : `${at}/${escapePointer(op)}`);

  if (ORDERING.has(op)) {
    const number = args.find(isNumberLike);
    args.forEach((a, i) => {
      const path = varWithoutDefault(a);
      if (path !== undefined && number !== undefined) {
        out.push({
          pointer: argAt(i),
          code: 'missing-compares-as-zero',
          message:
            `${show(a)} is compared with the number ${show(number)}, and where "${path}" is missing it is ` +
            `null, which compares as 0 (${show({ [op]: [null, 1] })} is ${jsonLogicCompare(op, 0, 1)}): check it ` +
            `first, e.g. {"!==": [${show(a)}, null]}, or give a default that fails safe, {"var": ["${path}", ` +
            `DEFAULT]}`,
        });
      }
      if (typeof a === 'string' && NUMERIC_TEXT.test(a)) {
        out.push({
          pointer: argAt(i),
          code: 'numbers-compared-as-text',
          message:
            `"${a}" is text: against a text value it compares character by character ("10" < "9" is true); ` +
            `write the number ${Number(a)}`,
        });
      }
    });
  }
  if ((op === '==' || op === '!=') && args.length >= 2) {
    const [a, b] = [literalType(args[0]), literalType(args[1])];
    if (a === undefined || b === undefined || a !== b) {
      out.push({
        pointer: at,
        code: 'loose-equality',
        message:
          `${op} is JavaScript's loose equality: across types it converts ("1" == 1, 0 == false, [1] == "1" ` +
          `are true); write ${op === '==' ? '===' : '!=='}`,
      });
    }
  }
  if ((op === 'all' || op === 'some') && args.length >= 1) {
    const list = args[0];
    const literalNonEmpty = Array.isArray(list) && list.length > 0;
    if (!literalNonEmpty && !guarded(list, earlier)) {
      out.push(
        op === 'all'
          ? {
              pointer: argAt(0),
              code: 'all-on-empty-list',
              message:
                `"all" over an empty or missing list is false, so an assert of it reports a finding and a ` +
                `where of it skips the subject: for "every item passes" that holds on an empty list write {"none": ` +
                `[LIST, {"!": TEST}]}, or check {"count": [LIST]} first in an "and"`,
            }
          : {
              pointer: argAt(0),
              code: 'some-on-empty-list',
              message:
                `"some" over an empty or missing list is false, so an assert of it reports a finding for an ` +
                `empty list: if that is not meant, check {"count": [LIST]} first in an "and" or "or"`,
            },
      );
    }
  }
  // Inside `and`/`or`, each operand sees the operands before it (a guard written first counts).
  args.forEach((a, i) => walk(a, argAt(i), op === 'and' || op === 'or' ? args.slice(0, i) : [], out));
}

function jsonLogicCompare(op: string, a: number, b: number): boolean {
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
}

/** Warnings for every expression of every rule of a loaded pack, with the lines of the file each rule is in. */
export async function lintPack(pack: PolicyPack): Promise<LintWarning[]> {
  return (await Promise.all(pack.parts.map(lintPackFile))).flat();
}

/** Warnings for the rules of one file of a pack (a pack file, or a rule file of a pack folder). */
async function lintPackFile(file: string): Promise<LintWarning[]> {
  // The rules as written in the file (already validated by the loader), so that indexes are the file's.
  const { doc, lines, value } = parseYaml(await readPackText(file), file);
  const warnings: LintWarning[] = [];
  ((value as { rules?: Rule[] }).rules ?? []).forEach((rule, index) => {
    const base = `/rules/${index}`;
    const fields: [string, unknown][] = [
      ['where', rule.where],
      ['each', rule.each],
      ['discriminator', rule.discriminator],
      ...Object.entries(rule.let ?? {}).map(([name, e]): [string, unknown] => [`let/${escapePointer(name)}`, e]),
      ['assert', rule.assert],
      ...(rule.escalate ?? []).map((step, i): [string, unknown] => [`escalate/${i}/when`, step.when]),
    ];
    for (const [field, expr] of fields) {
      if (expr === undefined) continue;
      const found: Found[] = [];
      walk(expr, `${base}/${field}`, [], found);
      for (const f of found)
        warnings.push({
          file,
          line: lineAt(doc, lines, f.pointer),
          ruleId: rule.id,
          field,
          code: f.code,
          message: f.message,
        });
    }
  });
  return warnings.sort((a, b) => a.line - b.line);
}

export const formatWarning = (w: LintWarning): string =>
  `${w.file}:${w.line}: warning: rule ${w.ruleId}: ${w.field}: ${w.message} [${w.code}]`;
