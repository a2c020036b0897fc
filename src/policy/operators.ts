/**
 * The custom JSON Logic operators of mesh-audit: what plain JSON Logic cannot do, or does surprisingly.
 * This list is the single source for the engine, the load-time check and docs/writing-rules.md.
 * Operators receive already-evaluated arguments.
 */

import { posix } from 'node:path';
import deepEqual from 'fast-deep-equal';
import { checkSize, spend } from './budget.js';

type Operator = (...args: unknown[]) => unknown;

export interface OperatorDoc {
  name: string;
  usage: string;
  doc: string;
  fn: Operator;
  /**
   * How the evaluation budget (./budget.ts) charges a call. Unset: every argument is walked first, a step per
   * item, so no operator walks an unbounded value. `own`: the operator spends a step per item it visits
   * itself; for operators whose work is far smaller than their arguments (a lookup in a map), whose arguments
   * are whole env maps read on every subject (walking them was 91 of MA1001's ~150 ms: test/bench/PROFILES.md).
   */
  budget?: 'own';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === null || v === undefined ? [] : [v]);
const own = (o: Record<string, unknown>, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);
/**
 * Deep equality of JSON values: objects whatever the order of their keys, numbers as `===` does (0 and
 * -0 equal) except that NaN equals NaN, and NaN or Infinity never equal to null (comparing JSON text
 * got both wrong). fast-deep-equal is what ajv compares with.
 */
const sameValue = (a: unknown, b: unknown): boolean => deepEqual(a, b);
/** A normalised path (posix.normalize: no `//` left) without its trailing `/`, except `/` itself. */
const withoutTrailingSlash = (p: string): string => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p);
/** Items of a list that pass `keep`, in order, each once (deep equality). */
function distinctWhere(list: unknown, keep: (x: unknown) => boolean): unknown[] {
  const out: unknown[] = [];
  for (const x of asArray(list)) {
    // Quadratic in the worst case: each comparison is a step of the evaluation budget (./budget.ts).
    spend(out.length + 1);
    if (keep(x) && !out.some((y) => sameValue(x, y))) out.push(x);
  }
  return out;
}
const digestOf = (v: unknown): unknown => (isRecord(v) && Object.hasOwn(v, 'digest') ? v['digest'] : v);

export const CUSTOM_OPERATORS: readonly OperatorDoc[] = [
  {
    name: 'all_equal_to',
    usage: '{"all_equal_to": [LIST, VALUE]}',
    doc:
      'True when every item of LIST equals VALUE (deep equality); true for an empty list. It compares, it runs no ' +
      'test per item: ' +
      'for that, `{"none": [LIST, {"!": TEST}]}` holds on an empty list, where `all` is false.',
    fn: (list, value) => asArray(list).every((x) => sameValue(x, value)),
  },
  {
    name: 'count',
    usage: '{"count": [LIST]}',
    doc:
      'Number of items in a list (0 for null); number of own keys of an object; length of a string, as `{"var": ' +
      '"s.length"}` gives it ' +
      '(UTF-16 units). A number or boolean is an error, not 0.',
    fn: (v) => {
      if (Array.isArray(v)) return v.length;
      if (isRecord(v)) return Object.keys(v).length;
      if (typeof v === 'string') return v.length;
      if (v === null || v === undefined) return 0;
      throw new TypeError(`count takes a list, an object or a string, not a ${typeof v}`);
    },
  },
  {
    name: 'difference',
    usage: '{"difference": [A, B]}',
    doc: 'Items of list A not in list B (deep equality), in the order of A, without repeats.',
    fn: (a, b) => distinctWhere(a, (x) => (spend(asArray(b).length), !asArray(b).some((y) => sameValue(x, y)))),
  },
  {
    name: 'env_diff',
    usage: '{"env_diff": [HELD, COMPOSED, MORE...]}',
    doc:
      'Keys of env map COMPOSED whose value HELD lacks or holds with another digest, sorted. ' +
      'Maps are `{KEY: {digest, shape}}`; keys only in HELD (image defaults such as PATH) are ignored. ' +
      'With several readings of one file (COMPOSED, MORE…; null ones skipped), a key is listed only when every ' +
      'reading names it and HELD matches none: ' +
      'a value one reading gives is no drift (docs/ledger.md, "Env files").',
    budget: 'own',
    fn: (held, ...readings) => {
      // One map given twice (Docker's and Podman's readings of a file are often one object) is compared once.
      const maps = readings.filter((r, i): r is Record<string, unknown> => isRecord(r) && readings.indexOf(r) === i);
      if (maps.length === 0) return [];
      const h = isRecord(held) ? held : {};
      // A step per key of a reading; HELD is only looked up. A digest that is not a plain value (never in a
      // snapshot, but a rule may pass anything) is measured before it is compared deeply.
      const differs = (m: Record<string, unknown>, k: string): boolean => {
        spend(1);
        if (!Object.hasOwn(m, k)) return false;
        if (!Object.hasOwn(h, k)) return true;
        // Both own (checked above): read directly.
        const a = digestOf(h[k]);
        const b = digestOf(m[k]);
        if (typeof a === 'object' && a !== null) checkSize(a, 'an argument of env_diff');
        if (typeof b === 'object' && b !== null) checkSize(b, 'an argument of env_diff');
        return !sameValue(a, b);
      };
      // A key is listed only when every map names it, so the first map's keys are the only candidates.
      // Speed: loops, without a closure or a set per call: this runs for every container source.
      const out: string[] = [];
      for (const k of Object.keys(maps[0]!)) {
        let listed = true;
        for (let i = 0; listed && i < maps.length; i++) listed = differs(maps[i]!, k);
        if (listed) out.push(k);
      }
      return out.sort();
    },
  },
  {
    name: 'get',
    usage: '{"get": [OBJECT, KEY, DEFAULT?]}',
    doc:
      'Own property KEY of OBJECT, taken whole (a key may contain dots: `mesh.module`); DEFAULT or null when ' +
      "absent. A string's own properties are its indexes and `length`.",
    // A lookup: one step whatever OBJECT holds; KEY is measured (made into text, a list would be walked).
    budget: 'own',
    fn: (obj, key, fallback) => {
      checkSize(key, 'an argument of get');
      const v =
        isRecord(obj) || Array.isArray(obj) || typeof obj === 'string'
          ? own(obj as Record<string, unknown>, String(key))
          : undefined;
      return v === undefined ? (fallback === undefined ? null : fallback) : v;
    },
  },
  {
    name: 'intersection',
    usage: '{"intersection": [A, B]}',
    doc: 'Items of list A that are also in list B (deep equality), in the order of A, without repeats.',
    fn: (a, b) => distinctWhere(a, (x) => (spend(asArray(b).length), asArray(b).some((y) => sameValue(x, y)))),
  },
  {
    name: 'join',
    usage: '{"join": [LIST, SEPARATOR]}',
    doc: 'The items of LIST as text, joined by SEPARATOR (default ", ").',
    fn: (list, sep) =>
      asArray(list)
        .map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))
        .join(typeof sep === 'string' ? sep : ', '),
  },
  {
    name: 'keys',
    usage: '{"keys": [OBJECT]}',
    doc: 'Own keys of OBJECT, sorted; [] for anything else.',
    fn: (obj) => (isRecord(obj) ? Object.keys(obj).sort() : []),
  },
  {
    name: 'mode_beyond',
    usage: '{"mode_beyond": [MODE, ALLOWED]}',
    doc:
      'The permission bits of MODE (octal text, as `mode` facts are: `"0660"`) that ALLOWED (octal text) does not ' +
      'grant, as four octal digits (`"0002"`); null when MODE grants nothing more (stricter is never a finding) or ' +
      'is not octal text.',
    fn: (mode, allowed) => {
      const octal = (v: unknown): number | null =>
        typeof v === 'string' && /^[0-7]{1,6}$/.test(v) ? Number.parseInt(v, 8) & 0o7777 : null;
      const m = octal(mode);
      const a = octal(allowed);
      if (m === null || a === null) return null;
      const beyond = m & ~a;
      return beyond === 0 ? null : beyond.toString(8).padStart(4, '0');
    },
  },
  {
    name: 'path_within',
    usage: '{"path_within": [PATH, FOLDERS]}',
    doc:
      'The first of FOLDERS that PATH is or lies under, by whole components (`/etc` holds `/etc/ssl`, not `/etcd`; ' +
      '`/` holds only `/` itself); null when none. Paths are normalised first (`//`, `.`, `..`, a trailing `/`).',
    fn: (path, folders) => {
      if (typeof path !== 'string' || !path.startsWith('/')) return null;
      const p = withoutTrailingSlash(posix.normalize(path));
      for (const folder of asArray(folders)) {
        spend(1);
        if (typeof folder !== 'string' || !folder.startsWith('/')) continue;
        const f = withoutTrailingSlash(posix.normalize(folder));
        if (p === f || (f !== '/' && p.startsWith(`${f}/`))) return folder;
      }
      return null;
    },
  },
  {
    name: 'pluck',
    usage: '{"pluck": [LIST, KEY]}',
    doc: 'Own property KEY of each object in LIST (a key may contain dots); items without it are skipped.',
    fn: (list, key) =>
      asArray(list)
        .filter(isRecord)
        .map((o) => own(o, String(key)))
        .filter((v) => v !== undefined),
  },
  {
    name: 'starts_with',
    usage: '{"starts_with": [TEXT, PREFIX]}',
    doc: 'True when TEXT is a string starting with PREFIX.',
    fn: (text, prefix) => typeof text === 'string' && typeof prefix === 'string' && text.startsWith(prefix),
  },
  {
    name: '===',
    usage: '{"===": [A, B]}',
    doc: 'Strict equality (built in); prefer it to `==`, which is JavaScript loose equality.',
    fn: (a, b) => a === b,
  },
];
