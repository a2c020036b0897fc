/**
 * The evaluation budget of one rule on one subject (docs/writing-rules.md, "Writing rules": the budget). A pack is
 * data a user may write, and JSON Logic can make work and values that grow without bound: a `reduce`
 * whose step doubles its accumulator, a `map` inside a `map` over long lists. Past the budget the rule
 * stops on that subject with an error — the evaluator turns it into an error notification (that rule
 * is not checked on that subject, the run is incomplete) — and every other rule and subject goes on.
 *
 * - steps: each JSON Logic application (json-logic-js's own recursion, per item of `map`, `filter`,
 *   `reduce`, `all`, `some`, `none`), each item a custom operator walks, each item measured below;
 * - size: a value made by `merge`, `cat`, `join` or a `reduce` step holds at most MAX_VALUE_ITEMS items
 *   (array items counted through nesting, string characters, object members).
 */

export const MAX_STEPS = 1_000_000;
export const MAX_VALUE_ITEMS = 1_000_000;

export class BudgetExceeded extends Error {}

let stepsLeft = MAX_STEPS;
/** Outside withBudget (a rule's `where` checked by the loader, say) nothing is counted. */
let counting = false;

/** Runs one rule's evaluation on one subject with a fresh budget. */
export function withBudget<T>(evaluation: () => T): T {
  stepsLeft = MAX_STEPS;
  counting = true;
  try {
    return evaluation();
  } finally {
    counting = false;
  }
}

/**
 * withBudget for `check(rule, subject)`, without a function made per call (the evaluator's loop: every
 * rule on every subject).
 */
export function withBudgetOf<A, B, T>(check: (a: A, b: B) => T, a: A, b: B): T {
  stepsLeft = MAX_STEPS;
  counting = true;
  try {
    return check(a, b);
  } finally {
    counting = false;
  }
}

/**
 * Within measuringOnce: the steps each object already measured took (checkSize). An object measured
 * again costs its steps again, without the walk: rules name the same maps (a container's env, a
 * file's readings) in several operators, once per item of `each`. Only objects the evaluation never
 * changes are measured twice: subject data, and values operators made; a rule's scope, which gets
 * its `let` values one by one, is forgotten at each (`changed`).
 */
let measured: WeakMap<object, number> | null = null;

/** Runs `evaluation` (every rule on every subject of one snapshot) remembering what checkSize measured. */
export function measuringOnce<T>(evaluation: () => T): T {
  const outer = measured;
  measured = new WeakMap();
  try {
    return evaluation();
  } finally {
    measured = outer;
  }
}

/** `value` was changed (a scope given a `let` value): measured again when next asked. */
export function changed(value: object): void {
  measured?.delete(value);
}

/** Below this many steps a measurement is not remembered: walking it costs what looking it up does. */
const REMEMBERED_FROM = 8;

/** Spends `n` steps; throws past the budget. */
export function spend(n = 1): void {
  if (!counting) return;
  stepsLeft -= n;
  if (stepsLeft < 0)
    throw new BudgetExceeded(
      `stopped: more than ${MAX_STEPS.toLocaleString('en-US')} evaluation steps on one subject (the evaluation budget)`,
    );
}

/**
 * Throws when `value` holds more than MAX_VALUE_ITEMS items. The walk stops at the limit (and spends a
 * step per item), so measuring costs no more than the budget allows; a shared sub-array counts each
 * time it appears, as it would when printed or compared.
 */
export function checkSize(value: unknown, made: string): void {
  if (!counting) return;
  // Speed: a text, number or null is one step (as the walk below would count it) without the walk's
  // stack; most arguments are (hundreds of thousands a run on a 10,000-container host).
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'string' && value.length > MAX_VALUE_ITEMS) throw tooLarge(made);
    spend(1);
    return;
  }
  const remember = measured;
  if (remember !== null) {
    // Measured before within the limit: the same steps, which throw just where the walk's would.
    const steps = remember.get(value);
    if (steps !== undefined) {
      spend(steps);
      return;
    }
  }
  let steps = 0;
  let items = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') items += v.length;
    else if (Array.isArray(v)) {
      items += v.length;
      for (const x of v)
        if (typeof x === 'object' && x !== null) stack.push(x);
        else if (typeof x === 'string') items += x.length;
    } else if (typeof v === 'object' && v !== null) {
      const values = Object.values(v);
      items += values.length;
      for (const x of values) if (typeof x === 'object' || typeof x === 'string') stack.push(x);
    }
    if (items > MAX_VALUE_ITEMS) throw tooLarge(made);
    spend(1);
    steps++;
  }
  if (remember !== null && steps >= REMEMBERED_FROM) remember.set(value, steps);
}

const tooLarge = (made: string) =>
  new BudgetExceeded(
    `stopped: ${made} made a value of more than ${MAX_VALUE_ITEMS.toLocaleString('en-US')} items ` +
      '(the evaluation budget)',
  );
