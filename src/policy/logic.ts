import jsonLogic from 'json-logic-js';
import { CUSTOM_OPERATORS } from './operators.js';

/**
 * json-logic-js, hardened as PITFALLS.md says. Its operator table is shared by the whole module:
 * this file is the only one that imports json-logic-js, and it sets the table up once.
 */

/** Operators handled inside json-logic-js's `apply` rather than through the table. */
const CONTROL_OPERATORS = ['if', '?:', 'and', 'or', 'filter', 'map', 'reduce', 'all', 'none', 'some'];

/** Table operators kept from json-logic-js; `log` is left out (it prints to stdout). */
const BUILTIN_OPERATORS = [
  '==', '===', '!=', '!==', '>', '>=', '<', '<=', '!!', '!', '%', 'in', 'cat', 'substr',
  '+', '*', '-', '/', 'min', 'max', 'merge', 'var', 'missing', 'missing_some',
];

jsonLogic.rm_operation('log');

/**
 * `var` reading own properties only (no `constructor`, no prototype), where a path segment may itself
 * contain dots: at each level the longest own key that matches the rest of the path wins, so
 * `labels.mesh.module` reaches `labels["mesh.module"]`.
 */
function ownVar(this: unknown, path?: unknown, fallback?: unknown): unknown {
  const notFound = fallback === undefined ? null : fallback;
  if (path === undefined || path === null || path === '') return this;
  const value = resolvePath(this, String(path).split('.'));
  return value === undefined ? notFound : value;
}

export function resolvePath(data: unknown, parts: string[]): unknown {
  if (parts.length === 0) return data;
  if (data === null || typeof data !== 'object') return undefined;
  for (let take = parts.length; take >= 1; take--) {
    const key = parts.slice(0, take).join('.');
    if (Object.hasOwn(data, key)) {
      const found = resolvePath((data as Record<string, unknown>)[key], parts.slice(take));
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

jsonLogic.add_operation('var', ownVar);
for (const op of CUSTOM_OPERATORS) jsonLogic.add_operation(op.name, op.fn);

export const KNOWN_OPERATORS: ReadonlySet<string> = new Set([
  ...CONTROL_OPERATORS,
  ...BUILTIN_OPERATORS,
  ...CUSTOM_OPERATORS.map((o) => o.name),
]);

export type Logic = unknown;

/**
 * Problems of an expression found without running it: unknown operators, and objects that are
 * not operations (a single-key object would be taken for one and throw only at evaluation).
 * Paths are JSON Pointers relative to the expression.
 */
export function checkLogic(expr: Logic, at = ''): { path: string; message: string }[] {
  if (Array.isArray(expr)) return expr.flatMap((e, i) => checkLogic(e, `${at}/${i}`));
  if (expr === null || typeof expr !== 'object') return [];
  const keys = Object.keys(expr);
  if (keys.length !== 1) {
    return [{ path: at, message: `an object here must be one operation like {"var": "name"}, found keys ${JSON.stringify(keys)}` }];
  }
  const op = keys[0]!;
  if (!KNOWN_OPERATORS.has(op)) {
    return [{ path: at, message: `unknown operator '${op}' (JSON Logic takes every single-key object for an operation: objects cannot be written literally in a rule)` }];
  }
  return checkLogic((expr as Record<string, unknown>)[op], `${at}/${escapePointer(op)}`);
}

const escapePointer = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

export function applyLogic(expr: Logic, data: unknown): unknown {
  return jsonLogic.apply(expr as never, data);
}

export function truthy(value: unknown): boolean {
  return jsonLogic.truthy(value);
}
