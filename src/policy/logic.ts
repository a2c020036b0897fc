import jsonLogic from 'json-logic-js';
import { checkSize, spend } from './budget.js';
import { CUSTOM_OPERATORS } from './operators.js';

/**
 * json-logic-js, hardened as ARCHITECTURE.md says (Pitfalls: JSON Logic). Its operator table is shared by the whole
 * module:
 * this file is the only one that imports json-logic-js, and it sets the table up once.
 */

/** Operators handled inside json-logic-js's `apply` rather than through the table. */
const CONTROL_OPERATORS = ['if', '?:', 'and', 'or', 'filter', 'map', 'reduce', 'all', 'none', 'some'];

/** Table operators kept from json-logic-js; `log` is left out (it prints to stdout). */
const BUILTIN_OPERATORS = [
  '==',
  '===',
  '!=',
  '!==',
  '>',
  '>=',
  '<',
  '<=',
  '!!',
  '!',
  '%',
  'in',
  'cat',
  'substr',
  '+',
  '*',
  '-',
  '/',
  'min',
  'max',
  'merge',
  'var',
  'missing',
  'missing_some',
];

jsonLogic.rm_operation('log');

/**
 * `var` reading own properties only (no `constructor`, no prototype), where a path segment may itself
 * contain dots: at each level the longest own key that matches the rest of the path wins, so
 * `labels.mesh.module` reaches `labels["mesh.module"]`.
 */
function ownVar(this: unknown, path?: unknown, fallback?: unknown): unknown {
  const notFound = fallback === undefined ? null : fallback;
  // The bundled program is not strict code: there `this` of an item `false` or `"tcp://…"` is boxed, and
  // that of an item null is the global object.
  const data =
    this === globalThis
      ? null
      : this instanceof Boolean || this instanceof String || this instanceof Number
        ? this.valueOf()
        : this;
  if (path === undefined || path === null || path === '') return data;
  const value = resolvePath(data, pathParts(String(path)));
  return value === undefined ? notFound : value;
}

/** Paths are split once: rules name the same few paths on every subject. Never mutate the lists. */
const splitPaths = new Map<string, readonly string[]>();

/** Every name a JSON value (object, array, text) may have without owning it: its prototypes' members. */
const INHERITED_KEYS: ReadonlySet<string> = new Set(
  [Object.prototype, Array.prototype, String.prototype].flatMap((proto) => Object.getOwnPropertyNames(proto)),
);

function pathParts(path: string): readonly string[] {
  let parts = splitPaths.get(path);
  if (parts === undefined) {
    parts = path.split('.');
    if (splitPaths.size < 10_000) splitPaths.set(path, parts);
  }
  return parts;
}

/**
 * Whether a value has own properties a path can step into: objects and arrays, and strings, whose own
 * properties are their indexes and `length` (`{"var": "name.length"}`, `{"var": "name.0"}`), as in
 * json-logic-js. Numbers and booleans have none (json-logic-js would reach `toFixed` and the like).
 * A string passes as `object`: Object.hasOwn and indexing treat it as its String wrapper.
 */
const steppable = (data: unknown): data is object =>
  (typeof data === 'object' && data !== null) || typeof data === 'string';

export function resolvePath(data: unknown, parts: readonly string[]): unknown {
  if (parts.length === 0) return data;
  if (!steppable(data)) return undefined;
  if (parts.length === 1)
    return Object.hasOwn(data, parts[0]!) ? (data as Record<string, unknown>)[parts[0]!] : undefined;
  for (let take = parts.length; take >= 1; take--) {
    const key = parts.slice(0, take).join('.');
    if (Object.hasOwn(data, key)) {
      const found = resolvePath((data as Record<string, unknown>)[key], parts.slice(take));
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * resolvePath for one fixed path, made once: the keys each level tries (longest first) are joined
 * ahead. Paths of more than 6 segments (2^n closures) keep the general walk.
 */
export function pathResolver(parts: readonly string[]): (data: unknown) => unknown {
  if (parts.length === 0) return (data) => data;
  if (parts.length > 6) return (data) => resolvePath(data, parts);
  if (parts.length === 1) {
    const key = parts[0]!;
    // Speed (every `var` ends here): a key no prototype of a JSON value has (`claimed`, not `length` or
    // `constructor`) is own whenever reading it gives a value, so one read does; an own key holding
    // `undefined` gives `undefined` either way.
    if (!INHERITED_KEYS.has(key))
      return (data) => (steppable(data) ? (data as Record<string, unknown>)[key] : undefined);
    return (data) => (steppable(data) && Object.hasOwn(data, key) ? (data as Record<string, unknown>)[key] : undefined);
  }
  const tries: { key: string; rest: (data: unknown) => unknown }[] = [];
  for (let take = parts.length; take >= 1; take--)
    tries.push({ key: parts.slice(0, take).join('.'), rest: pathResolver(parts.slice(take)) });
  return (data) => {
    if (!steppable(data)) return undefined;
    for (const { key, rest } of tries) {
      if (Object.hasOwn(data, key)) {
        const found = rest((data as Record<string, unknown>)[key]);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
}

jsonLogic.add_operation('var', ownVar);

/*
 * The evaluation budget (./budget.ts). json-logic-js recurses through the `apply` property of its own
 * module object, once per sub-expression and per item of map/filter/reduce/all/some/none: wrapping
 * that property counts every step without forking the library. The operators that make values larger
 * than their inputs (merge, cat, join, an array written in a rule: `[acc, acc]` in a reduce) have
 * their results measured; custom operators have their arguments measured, so none walks an
 * unbounded value, but for those that charge the items they visit themselves (`budget: 'own'`).
 */
const libraryApply = jsonLogic.apply.bind(jsonLogic);
jsonLogic.apply = (logic: unknown, data?: unknown): unknown => {
  spend(1);
  const value = libraryApply(logic as Parameters<typeof libraryApply>[0], data) as unknown;
  if (Array.isArray(logic) && logic.length > 0) checkSize(value, 'a list written in the rule');
  return value;
};
const measured = (made: string, fn: (...args: unknown[]) => unknown) =>
  function (this: unknown, ...args: unknown[]): unknown {
    const value = fn.apply(this, args);
    checkSize(value, made);
    return value;
  };
const budgetedMerge = measured('merge', (...lists: unknown[]) =>
  lists.flatMap((l) => (Array.isArray(l) ? (l as unknown[]) : [l])),
);
const budgetedCat = measured('cat', (...args: unknown[]) => args.join(''));
jsonLogic.add_operation('merge', budgetedMerge);
jsonLogic.add_operation('cat', budgetedCat);
const budgetedCustom = (op: (typeof CUSTOM_OPERATORS)[number]) =>
  function (this: unknown, ...args: unknown[]): unknown {
    if (op.budget !== 'own') for (const arg of args) checkSize(arg, `an argument of ${op.name}`);
    const value = op.fn.apply(this, args);
    if (op.name === 'join') checkSize(value, 'join');
    return value;
  };
// `===` is documented with the custom operators but is json-logic-js's own: it has nothing to measure (below).
for (const op of CUSTOM_OPERATORS) if (op.name !== '===') jsonLogic.add_operation(op.name, budgetedCustom(op));

export const KNOWN_OPERATORS: ReadonlySet<string> = new Set([
  ...CONTROL_OPERATORS,
  ...BUILTIN_OPERATORS,
  ...CUSTOM_OPERATORS.map((o) => o.name),
]);

export type Logic = unknown;

/**
 * Operators a rule author may write expecting something else: refused when a pack loads, with what
 * to write instead (docs/writing-rules.md, "Writing rules").
 */
const REFUSED_OPERATORS: Readonly<Record<string, string>> = Object.assign(
  Object.create(null) as Record<string, string>,
  {
    log: "unknown operator 'log' (removed: it prints to stdout, where JSON or SARIF may be written)",
    every:
      "operator 'every' is not part of mesh-audit's JSON Logic: it once compared each item with a value rather than " +
      'running a test per item. ' +
      'For a test per item that holds on an empty list write {"none": [LIST, {"!": TEST}]}; ' +
      'to compare each item with a value, {"all_equal_to": [LIST, VALUE]}',
  },
);

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
    return [
      {
        path: at,
        message: `an object here must be one operation like {"var": "name"}, found keys ${JSON.stringify(keys)}`,
      },
    ];
  }
  const op = keys[0]!;
  const refused = REFUSED_OPERATORS[op];
  if (refused !== undefined) return [{ path: at, message: refused }];
  if (!KNOWN_OPERATORS.has(op)) {
    return [
      {
        path: at,
        message:
          `unknown operator '${op}' (JSON Logic takes every single-key object for an operation: objects ` +
          `cannot be written literally in a rule)`,
      },
    ];
  }
  return checkLogic((expr as Record<string, unknown>)[op], `${at}/${escapePointer(op)}`);
}

/**
 * Whether an expression may read one of `names` from its scope (when in doubt, it may): a `var` whose
 * path starts with one of them (any dotted prefix), or anything scopeReads cannot tell (the whole
 * scope, which `get` and the like then look into; a computed path; `missing`/`missing_some`).
 */
export function mayReadNames(expr: unknown, names: ReadonlySet<string>): boolean {
  const { reads, opaque } = scopeReads(expr);
  return opaque || reads.some(({ steps }) => steps.some((_, i) => names.has(steps.slice(0, i + 1).join('.'))));
}

export const escapePointer = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Operators whose later arguments are evaluated against each item (or `{current, accumulator}`), not the scope. */
const ITEM_SCOPED = new Set(['map', 'filter', 'all', 'none', 'some', 'reduce']);

/** A field an expression reads of its scope, as written: the path's steps, and the JSON Pointer of where. */
export interface ScopeRead {
  /** `{"var": "a.b"}` gives ['a', 'b']; `{"get": [{"var": ""}, "a.b"]}` gives ['a.b'] (get takes its key whole). */
  steps: string[];
  pointer: string;
}

/**
 * Every field an expression reads of its scope (the subject's data, with `item` and the `let` names
 * where the rule binds them) that can be told without running it, and whether it may read more
 * (`opaque`: a computed path, the whole scope, `missing`/`missing_some`). Inside `map`, `filter`,
 * `all`, `none`, `some` and `reduce` a `var` names a field of the item (no parent scope: ARCHITECTURE.md,
 * Pitfalls): only the list, and reduce's initial value, are read of the scope. Pointers are relative
 * to `at`.
 */
export function scopeReads(expr: unknown, at = ''): { reads: ScopeRead[]; opaque: boolean } {
  const out = { reads: [] as ScopeRead[], opaque: false };
  walkReads(expr, at, out);
  return out;
}

function walkReads(expr: unknown, at: string, out: { reads: ScopeRead[]; opaque: boolean }): void {
  if (Array.isArray(expr)) {
    expr.forEach((e, i) => walkReads(e, `${at}/${i}`, out));
    return;
  }
  if (expr === null || typeof expr !== 'object') return;
  for (const [op, args] of Object.entries(expr)) {
    const list: unknown[] = Array.isArray(args) ? args : [args];
    const argAt = (i: number) =>
      Array.isArray(args) ? `${at}/${escapePointer(op)}/${i}` : `${at}/${escapePointer(op)}`;
    const literal = (v: unknown, pointer: string, steps: (s: string) => string[]) => {
      if (typeof v === 'string' && v !== '') out.reads.push({ steps: steps(v), pointer });
      else walkReads(v, pointer, out);
    };
    if (op === 'var') {
      const path = list[0];
      if (typeof path === 'string' && path !== '') out.reads.push({ steps: path.split('.'), pointer: argAt(0) });
      else if (typeof path !== 'number') {
        out.opaque = true; // the whole scope, or a path worked out at run time
        walkReads(path, argAt(0), out);
      }
      list.slice(1).forEach((e, i) => walkReads(e, argAt(i + 1), out));
    } else if (op === 'missing') {
      out.opaque = true;
      list.forEach((name, i) => literal(name, argAt(i), (s) => s.split('.')));
    } else if (op === 'missing_some') {
      out.opaque = true;
      walkReads(list[0], argAt(0), out);
      if (Array.isArray(list[1])) list[1].forEach((name, i) => literal(name, `${argAt(1)}/${i}`, (s) => s.split('.')));
      else walkReads(list[1], argAt(1), out);
    } else if (op === 'get' && isWholeScope(list[0])) {
      out.opaque = true;
      literal(list[1], argAt(1), (s) => [s]);
      list.slice(2).forEach((e, i) => walkReads(e, argAt(i + 2), out));
    } else if (ITEM_SCOPED.has(op)) {
      walkReads(list[0], argAt(0), out);
      if (op === 'reduce') walkReads(list[2], argAt(2), out);
    } else {
      list.forEach((e, i) => walkReads(e, argAt(i), out));
    }
  }
}

/** `{"var": ""}` (or `{"var": [""]}`): the whole scope. */
const isWholeScope = (v: unknown): boolean => {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, 'var')) return false;
  const args = (v as { var: unknown }).var;
  const path = Array.isArray(args) ? (args as unknown[])[0] : args;
  return path === '' || path === undefined || path === null;
};

type TableOperator = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The table operators evaluated without going through json-logic-js's `apply` (same code as there,
 * same `this`): the ones rules use on every subject. Any other operation — `filter`, `map`, `reduce`,
 * `all`, `none`, `some`, the arithmetic, `missing`, dotted names, unknown ones — is left to `apply`
 * itself, whole, so it behaves (and fails) exactly as before.
 */
const FAST_OPERATORS: Record<string, TableOperator> = Object.assign(
  Object.create(null) as Record<string, TableOperator>,
  {
    '==': (a: unknown, b: unknown) => a == b,
    '===': (a: unknown, b: unknown) => a === b,
    '!=': (a: unknown, b: unknown) => a != b,
    '!==': (a: unknown, b: unknown) => a !== b,
    // The comparisons keep json-logic-js's own loose semantics on any JSON value, hence `any`.
    /* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access,
       @typescript-eslint/no-unsafe-call */
    '>': (a: any, b: any) => a > b,
    '>=': (a: any, b: any) => a >= b,
    '<': (a: any, b: any, c: any) => (c === undefined ? a < b : a < b && b < c),
    '<=': (a: any, b: any, c: any) => (c === undefined ? a <= b : a <= b && b <= c),
    '!!': (a: unknown) => jsonLogic.truthy(a),
    '!': (a: unknown) => !jsonLogic.truthy(a),
    in: (a: unknown, b: any) => (!b || typeof b.indexOf === 'undefined' ? false : b.indexOf(a) !== -1),
    /* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access,
       @typescript-eslint/no-unsafe-call */
    cat: budgetedCat,
    // MA3003 and MA5002 build their `each` list with it on every claimed container.
    merge: budgetedMerge,
    var: ownVar,
    // The custom operators, measured; but `===` (documented with them) stays the built-in one above: it
    // compares two references or primitives, whatever their size, so it has nothing to measure.
    ...Object.fromEntries(
      CUSTOM_OPERATORS.filter((op) => op.name !== '===').map((op) => [op.name, budgetedCustom(op)]),
    ),
  },
);

type Compiled = (data: unknown) => unknown;
const compiled = new WeakMap<object, Compiled>();

const isLogic = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1;

/** An expression turned into closures once: the walk json-logic-js's `apply` does on every call, done ahead. */
function compile(logic: unknown): Compiled {
  if (Array.isArray(logic)) {
    const parts = logic.map(compile);
    return (data) => parts.map((p) => p(data));
  }
  if (!isLogic(logic)) return () => logic;
  const op = Object.keys(logic)[0]!;
  const raw = logic[op];
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (op === 'if' || op === '?:') {
    const parts = values.map(compile);
    return (data) => {
      let i;
      for (i = 0; i < parts.length - 1; i += 2) if (jsonLogic.truthy(parts[i]!(data))) return parts[i + 1]!(data);
      if (parts.length === i + 1) return parts[i]!(data);
      return null;
    };
  }
  if (op === 'and' || op === 'or') {
    const parts = values.map(compile);
    const stopWhen = op === 'or';
    return (data) => {
      let current: unknown;
      for (const p of parts) {
        current = p(data);
        if (jsonLogic.truthy(current) === stopWhen) return current;
      }
      return current;
    };
  }
  if (
    op === 'var' &&
    typeof values[0] === 'string' &&
    values.length <= 2 &&
    !isLogic(values[1]) &&
    !Array.isArray(values[1])
  ) {
    // A constant path (what rules write): resolved by closures made once, not split and joined per call.
    if (values[0] === '') return (data) => data;
    const resolve = pathResolver(pathParts(values[0]));
    const notFound = values[1] === undefined ? null : values[1];
    return (data) => {
      const value = resolve(data);
      return value === undefined ? notFound : value;
    };
  }
  const fn = FAST_OPERATORS[op];
  if (fn === undefined) return (data) => jsonLogic.apply(logic, data) as unknown;
  const parts = values.map(compile);
  // Speed: operands passed as they are for the usual counts (no list made per call: ~100 MB a run on a
  // 10,000-container host).
  const [a, b, c] = parts;
  if (parts.length === 1) return (data) => fn.call(data, a!(data));
  if (parts.length === 2) return (data) => fn.call(data, a!(data), b!(data));
  if (parts.length === 3) return (data) => fn.call(data, a!(data), b!(data), c!(data));
  return (data) =>
    fn.apply(
      data,
      parts.map((p) => p(data)),
    );
}

export function applyLogic(expr: Logic, data: unknown): unknown {
  if (typeof expr !== 'object' || expr === null) return expr;
  let fn = compiled.get(expr);
  if (fn === undefined) compiled.set(expr, (fn = compile(expr)));
  return fn(data);
}

export function truthy(value: unknown): boolean {
  return jsonLogic.truthy(value);
}
