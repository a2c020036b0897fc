import { createRequire } from 'node:module';
import { ParseErrorCode, SyntaxKind } from 'jsonc-parser';
import { MeshAuditError } from '../errors.js';
import { MAX_DEPTH, pathTooDeep } from './depth.js';

/*
 * JSON read with locations, for every JSON file mesh-audit reads (snapshots, reports, the ledger).
 * The happy path is JSON.parse (the fastest parser there is); jsonc-parser, the scanner and parser
 * VS Code uses, locates what JSON.parse refused and gives the offsets of a ledger's entries. V8's own
 * messages are never shown: they quote the text around the mistake, and a ledger or a wrongly named
 * file can hold secrets. jsonc-parser accepts comments and trailing commas when asked to: it is run
 * with both refused, so what it locates is an error of strict JSON.
 */

const require = createRequire(import.meta.url);
/** Loaded when a JSON text must be located (a bad file, a ledger), not on every start-up. */
const jsonc = (): typeof import('jsonc-parser') => require('jsonc-parser') as typeof import('jsonc-parser');

/** Where a JSON text stops being JSON: 1-based line and column, and why, without quoting the text. */
export interface JsonSyntaxError {
  offset: number;
  line: number;
  column: number;
  reason: string;
}

/** jsonc-parser's error codes in words (ParseErrorCode is a const enum: these are numbers at run time). */
const REASONS: Record<ParseErrorCode, string> = {
  [ParseErrorCode.InvalidSymbol]: 'unexpected character',
  [ParseErrorCode.InvalidNumberFormat]: 'bad number',
  [ParseErrorCode.PropertyNameExpected]: 'expected a property name',
  [ParseErrorCode.ValueExpected]: 'expected a value',
  [ParseErrorCode.ColonExpected]: "expected ':'",
  [ParseErrorCode.CommaExpected]: "expected ','",
  [ParseErrorCode.CloseBraceExpected]: "expected ',' or '}'",
  [ParseErrorCode.CloseBracketExpected]: "expected ',' or ']'",
  [ParseErrorCode.EndOfFileExpected]: 'unexpected content after the JSON value',
  [ParseErrorCode.InvalidCommentToken]: 'comments are not JSON',
  [ParseErrorCode.UnexpectedEndOfComment]: 'unterminated comment',
  [ParseErrorCode.UnexpectedEndOfString]: 'unterminated string',
  [ParseErrorCode.UnexpectedEndOfNumber]: 'bad number',
  [ParseErrorCode.InvalidUnicode]: 'bad \\u escape in a string',
  [ParseErrorCode.InvalidEscapeCharacter]: 'bad escape in a string',
  [ParseErrorCode.InvalidCharacter]: 'control character in a string',
};

/**
 * jsonc-parser's parser recurses once per nesting level (a few frames each): past this depth the
 * locator stops and says so, at the bracket it stopped at, rather than overflow the stack (4096 levels
 * overflowed under the test runner's deeper stack). Should the stack still run out first, the same is
 * said at the deepest bracket reached. JSON.parse itself has no such limit, and the ledger's entry
 * offsets are found by a loop (elementOffsets), so only locating an error is bounded.
 */
const MAX_LOCATE_DEPTH = 1000;

class Located extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** The first error of `text` as one strict JSON document (no comments, no trailing commas), or null when it is JSON. */
export function jsonSyntaxError(text: string): JsonSyntaxError | null {
  // What is open, innermost last: a missing comma is reported as `expected ',' or '}'` (or ']').
  const open: ('}' | ']')[] = [];
  let deepest = 0;
  const enter =
    (close: '}' | ']') =>
    (offset: number): void => {
      deepest = offset;
      if (open.push(close) > MAX_LOCATE_DEPTH) throw new Located(offset, 'nesting too deep');
    };
  const leave = (): void => {
    open.pop();
  };
  const reasonOf = (code: ParseErrorCode, offset: number): string => {
    if (code === ParseErrorCode.UnexpectedEndOfString) return REASONS[code];
    if (offset >= text.length) return 'unexpected end of input';
    if (code === ParseErrorCode.CommaExpected) return `expected ',' or '${open.at(-1) ?? '}'}'`;
    return REASONS[code];
  };
  let found: Located | null = null;
  try {
    jsonc().visit(
      text,
      {
        onObjectBegin: enter('}'),
        onArrayBegin: enter(']'),
        onObjectEnd: leave,
        onArrayEnd: leave,
        // The first error is the one to fix; the parser's recovery after it is of no use here.
        onError: (code, offset, length) => {
          // An unterminated string is reported at its opening quote: say where the text ran out instead.
          const at = code === ParseErrorCode.UnexpectedEndOfString ? offset + length : offset;
          throw new Located(at, reasonOf(code, at));
        },
      },
      { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
    );
  } catch (error) {
    if (error instanceof RangeError) found = new Located(deepest, 'nesting too deep');
    else if (error instanceof Located) found = error;
    else throw error;
  }
  if (found === null) return null;
  const { line, column } = positionIn(text, found.offset);
  return { offset: found.offset, line, column, reason: found.reason };
}

/**
 * 1-based line and column (in UTF-16 code units) of an offset; lines end at \n (a \r before it belongs to the line).
 */
export function positionIn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return { line, column: offset - (text.lastIndexOf('\n', offset - 1) + 1) + 1 };
}

/** offset -> 1-based line, for many offsets into one text (the ledger's entries). */
export function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/**
 * Offsets where each element starts of the top-level array of a (valid) JSON text or, given `key`, of
 * the array that is the value of that key of the top-level object (the last one, as JSON.parse keeps).
 * A loop over jsonc-parser's scanner, so any nesting depth is fine.
 */
export function elementOffsets(text: string, key?: string): number[] {
  const scanner = jsonc().createScanner(text, true);
  // The depth of the wanted array's elements: 1 for a top-level array, 2 for an array under a key.
  const target = key === undefined ? 1 : 2;
  let offsets: number[] = [];
  let depth = 0;
  let inTarget = false; // inside the wanted array
  let expectElement = false; // next token at the target depth starts an element
  let expectKey = false; // next string at depth 1 is a key of the top-level object
  let lastKey: string | undefined;
  let afterColon = false;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    const opens = token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken;
    const closes = token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken;
    if (inTarget && depth === target && expectElement && !closes) {
      offsets.push(scanner.getTokenOffset());
      expectElement = false;
    }
    let startsTarget = depth === 0 && key === undefined && token === SyntaxKind.OpenBracketToken;
    if (key !== undefined && depth === 1) {
      if (expectKey && token === SyntaxKind.StringLiteral) {
        lastKey = scanner.getTokenValue();
        expectKey = false;
      } else if (token === SyntaxKind.ColonToken) {
        afterColon = true;
      } else if (afterColon) {
        afterColon = false;
        if (lastKey === key) {
          offsets = []; // a repeated key: JSON.parse keeps the last value, so do its offsets
          startsTarget = token === SyntaxKind.OpenBracketToken;
        }
      } else if (token === SyntaxKind.CommaToken) {
        expectKey = true;
      }
    }
    if (opens) {
      depth++;
      if (depth === 1) expectKey = token === SyntaxKind.OpenBraceToken;
      if (startsTarget) inTarget = expectElement = true;
    } else if (closes) {
      if (depth === target) inTarget = false;
      depth--;
    } else if (token === SyntaxKind.CommaToken && inTarget && depth === target) {
      expectElement = true;
    }
  }
  return offsets;
}

/**
 * A key an object of a JSON text names twice: where it is again, where it was first, and the path of that object (`[]`:
 * the top level).
 */
export interface DuplicateKey {
  key: string;
  offset: number;
  firstOffset: number;
  path: (string | number)[];
}

/**
 * Every key repeated within one object of a (valid) JSON text. JSON.parse keeps the last value of a
 * repeated key and drops the others without a word: for the ledger that is ambiguous input (which of
 * two `entries` lists, which of two `target`s is meant?), so it is found here and refused by the
 * reader. A loop over jsonc-parser's scanner, as elementOffsets is, so any nesting depth is fine.
 * Keys are compared as JSON.parse sees them (escapes decoded: "a" and "\u0061" are one key).
 */
export function duplicateKeys(text: string): DuplicateKey[] {
  const scanner = jsonc().createScanner(text, true);
  const found: DuplicateKey[] = [];
  // One frame per open object or array: its path, and where its members stand now.
  // A frame knows its parent and its place there, not its whole path: copying paths would cost the
  // square of the depth on a deeply nested text; a path is made only for a repeated key.
  interface Frame {
    parent: Frame | undefined;
    /** Where this object or array sits in its parent. */
    at: string | number;
    /** Objects: the keys seen, where each was first. Arrays: null. */
    keys: Map<string, number> | null;
    expectKey: boolean;
    /** Objects: the key whose value comes next. Arrays: the index of the element being read. */
    member: string | number;
  }
  const frames: Frame[] = [];
  const open = (keys: Map<string, number> | null): void => {
    const parent = frames.at(-1);
    frames.push({ parent, at: parent?.member ?? '', keys, expectKey: keys !== null, member: keys ? '' : 0 });
  };
  const pathOf = (frame: Frame): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let f: Frame = frame; f.parent; f = f.parent) path.unshift(f.at);
    return path;
  };
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    const frame = frames.at(-1);
    if (token === SyntaxKind.OpenBraceToken) open(new Map());
    else if (token === SyntaxKind.OpenBracketToken) open(null);
    else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) frames.pop();
    else if (frame && token === SyntaxKind.CommaToken) {
      if (frame.keys) frame.expectKey = true;
      else frame.member = (frame.member as number) + 1;
    } else if (frame?.keys && frame.expectKey && token === SyntaxKind.StringLiteral) {
      frame.expectKey = false;
      const key = scanner.getTokenValue();
      frame.member = key;
      const offset = scanner.getTokenOffset();
      const first = frame.keys.get(key);
      if (first === undefined) frame.keys.set(key, offset);
      else found.push({ key, offset, firstOffset: first, path: pathOf(frame) });
    }
  }
  return found;
}

/**
 * Where the first array or object nested deeper than `limit` opens in a (valid) JSON text, or null when none
 * is. A loop over jsonc-parser's scanner, so any nesting depth is fine.
 */
export function deepOffset(text: string, limit: number): number | null {
  const scanner = jsonc().createScanner(text, true);
  let depth = 0;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) {
      if (++depth > limit) return scanner.getTokenOffset();
    } else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) depth--;
  }
  return null;
}

/**
 * Where a parsed JSON text first nests deeper than `limit` (1-based line and column of the bracket), or null when
 * it does not. Measured on the value (src/input/depth.ts); the text is scanned only to say where.
 */
export function jsonTooDeep(text: string, value: unknown, limit: number): { line: number; column: number } | null {
  if (pathTooDeep(value, limit) === null) return null;
  return positionIn(text, deepOffset(text, limit) ?? 0);
}

/**
 * JSON.parse, with an error that says `file:line:column: what is not valid JSON: why` and never quotes the text;
 * a document nested deeper than `maxDepth` is refused the same way (nothing after this may walk it).
 */
export function parseJsonInput(text: string, path: string, what: string, maxDepth: number = MAX_DEPTH): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    const error = jsonSyntaxError(text);
    // JSON.parse and jsonc-parser agree on strict JSON; should they ever not, the file is still refused.
    throw new MeshAuditError(
      error
        ? `${path}:${error.line}:${error.column}: ${what} is not valid JSON: ${error.reason}`
        : `${path}: ${what} is not valid JSON`,
    );
  }
  const deep = jsonTooDeep(text, value, maxDepth);
  if (deep !== null)
    throw new MeshAuditError(`${path}:${deep.line}:${deep.column}: ${what} nests more than ${maxDepth} levels deep`);
  return value;
}
