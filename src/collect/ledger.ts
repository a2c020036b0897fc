import { ledgerRecord } from './ledger-entries.js';
import { isHostPath, kindOf, locate, resolveRoot } from './files.js';
import { errnoCode, readRegularFile } from './read-file.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { Ledger, LedgerRecord, Problem } from '../snapshot/types.js';

/*
 * The ledger reader: reads one file from the host (same safe walk as the file collector: no symlink
 * followed anywhere, regular file only) and accepts three forms:
 *   - a JSON array of entries;
 *   - a JSON object with `entries` (array) and optional node-level `node` (string), `adopted` (boolean);
 *   - JSON Lines, one entry per non-empty line (a bad line becomes an invalid record, the rest is used).
 * Each record carries the 1-based line where its entry starts, found by scanning the text (never by
 * re-serializing). No message made here quotes the file's contents: entries can hold secrets, and
 * V8's JSON.parse messages quote the input, so parse errors are located by our own checker.
 */

export interface LedgerReadOptions {
  root: string;
  safe: SafeValueMaker;
  /** A larger ledger is not read (default 32 MiB). */
  maxBytes?: number;
}

export const DEFAULT_MAX_LEDGER_BYTES = 32 * 1024 * 1024;

export async function readLedger(hostPath: string, options: LedgerReadOptions): Promise<{ ledger: Ledger; problems: Problem[] }> {
  // Every message names the ledger (it is read on its own, as a one-line notification) but never its contents.
  const named = (message: string): string => message.replace(/^ledger /, `ledger ${hostPath} `);
  const unavailable = (message: string): { ledger: Ledger; problems: Problem[] } => ({
    ledger: { path: hostPath, available: false, entries: [] },
    problems: [{ source: 'ledger', subject: hostPath, message: named(message) }],
  });
  if (!isHostPath(hostPath)) {
    return {
      ledger: { path: String(hostPath), available: false, entries: [] },
      problems: [{ source: 'ledger', subject: String(hostPath), message: `ledger path ${JSON.stringify(String(hostPath))} is not an absolute, normalized host path` }],
    };
  }
  let realRoot: string;
  try {
    realRoot = await resolveRoot(options.root);
  } catch (error) {
    return unavailable(`ledger not read: the host root ${options.root} cannot be read (${errnoCode(error)})`);
  }
  const located = locate(realRoot, hostPath);
  if (located.state === 'missing') return unavailable('ledger not found (ENOENT)');
  if (located.state === 'blocked') return unavailable(`ledger not read: ${located.error}${located.code && !located.error.includes(located.code) ? ` (${located.code})` : ''}`);
  const kind = kindOf(located.stat);
  if (kind === 'symlink') return unavailable('ledger is a symlink: refused (symlinks are never followed)');
  if (kind !== 'file') return unavailable(`ledger is a ${kind}, not a regular file: not read`);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_LEDGER_BYTES;
  const read = readRegularFile(located.fsPath, located.stat, maxBytes);
  if (!read.ok) return unavailable(`ledger not read: ${read.error}${read.code && !read.error.includes(read.code) ? ` (${read.code})` : ''}`);
  if (read.tooLarge || !read.content) return unavailable(`ledger is larger than ${maxBytes} bytes: not read`);

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(read.content);
  } catch {
    return unavailable('ledger is not valid UTF-8: not read');
  }
  text = text.replace(/^\uFEFF/, '');
  const parsed = parseLedgerText(text, options.safe);
  if (!parsed.ok) return unavailable(parsed.message);
  const ledger: Ledger = {
    path: hostPath,
    available: true,
    ...(parsed.node !== undefined ? { node: parsed.node } : {}),
    ...(parsed.adopted !== undefined ? { adopted: parsed.adopted } : {}),
    entries: parsed.entries,
  };
  return { ledger, problems: parsed.problems.map((message) => ({ source: 'ledger', subject: hostPath, message: named(message) })) };
}

export type ParsedLedger =
  | { ok: true; entries: LedgerRecord[]; node?: string; adopted?: boolean; problems: string[] }
  | { ok: false; message: string };

/** Parses the ledger's text (BOM already removed) in whichever of the three forms it is. Pure. */
export function parseLedgerText(text: string, safe: SafeValueMaker): ParsedLedger {
  // A host agent that rewrites its ledger in place leaves it empty for a moment: an empty ledger is one
  // caught mid-rewrite, not a host with nothing applied (which would end every ledger finding as absent).
  if (text.trim() === '') return { ok: false, message: 'ledger is empty (0 bytes or only whitespace): not read (caught while being rewritten?)' };
  const lines = lineIndex(text);
  let whole: unknown;
  let parsedWhole: boolean;
  try {
    whole = JSON.parse(text);
    parsedWhole = true;
  } catch {
    parsedWhole = false;
  }
  const start = skipWs(text, 0);
  if (parsedWhole) {
    if (Array.isArray(whole)) {
      const starts = arrayElementStarts(text, start);
      return { ok: true, entries: uniqueIds(whole.map((raw, i) => ledgerRecord(raw, lines(starts[i] ?? start), safe))), problems: [] };
    }
    if (whole !== null && typeof whole === 'object') {
      const obj = whole as Record<string, unknown>;
      const looksLikeLedger = Object.hasOwn(obj, 'entries') || ((Object.hasOwn(obj, 'node') || Object.hasOwn(obj, 'adopted')) && !['id', 'type', 'target'].some((k) => Object.hasOwn(obj, k)));
      if (!looksLikeLedger) {
        // One line of JSON Lines: a single entry.
        return { ok: true, entries: [ledgerRecord(obj, lines(start), safe)], problems: [] };
      }
      const problems: string[] = [];
      const out: ParsedLedger = { ok: true, entries: [], problems };
      if (Object.hasOwn(obj, 'node')) {
        if (typeof obj['node'] === 'string') out.node = obj['node'];
        else problems.push(`ledger field "node" must be a string, not ${typeName(obj['node'])}: ignored`);
      }
      if (Object.hasOwn(obj, 'adopted')) {
        if (typeof obj['adopted'] === 'boolean') out.adopted = obj['adopted'];
        else problems.push(`ledger field "adopted" must be true or false, not ${typeName(obj['adopted'])}: ignored`);
      }
      if (Object.hasOwn(obj, 'entries')) {
        const entries = obj['entries'];
        if (!Array.isArray(entries)) return { ok: false, message: `ledger field "entries" must be an array, not ${typeName(entries)}` };
        const at = objectValueStart(text, start, 'entries');
        const starts = at < 0 ? [] : arrayElementStarts(text, at);
        out.entries = uniqueIds(entries.map((raw, i) => ledgerRecord(raw, lines(starts[i] ?? (at < 0 ? start : at)), safe)));
      }
      return out;
    }
    return { ok: false, message: `ledger is JSON but ${typeName(whole)}, not an array of entries, an object with "entries", or JSON Lines` };
  }

  // Not one JSON document: JSON Lines, or a damaged document (a truncated array must not pass for JSON Lines).
  const rows = splitLines(text);
  const nonEmpty = rows.filter((r) => r.text.trim() !== '');
  const parses = (s: string): boolean => {
    try {
      JSON.parse(s);
      return true;
    } catch {
      return false;
    }
  };
  const firstParses = nonEmpty.length > 0 && parses(nonEmpty[0]!.text);
  const objectLines = nonEmpty.filter((r) => r.text.trim().startsWith('{') && parses(r.text)).length;
  const isJsonLines = firstParses || (text[start] !== '[' && objectLines >= 2);
  if (!isJsonLines) {
    const error = findJsonError(text, 0, text.length);
    const where = error ? `${error.reason} at line ${lines(error.offset)}, column ${columnOf(text, error.offset)}` : 'it cannot be parsed';
    return { ok: false, message: `ledger is neither JSON nor JSON Lines: ${where}` };
  }
  const entries = nonEmpty.map((row) => {
    let raw: unknown;
    try {
      raw = JSON.parse(row.text);
    } catch {
      const error = findJsonError(row.text, 0, row.text.length);
      const why = error ? `${error.reason} at column ${error.offset + 1}` : 'cannot be parsed';
      return { line: row.line, valid: false, errors: [`not JSON: ${why}`], entry: {} } satisfies LedgerRecord;
    }
    return ledgerRecord(raw, row.line, safe);
  });
  return { ok: true, entries: uniqueIds(entries), problems: [] };
}

/**
 * The host keeps one entry per id: a second entry with an id already used is not a claim the scanner
 * can trust (which of the two is current?). It stays in the ledger, invalid, with an error naming the
 * line of the first, so it is reported (ledger-well-formed) rather than merged with the first.
 */
function uniqueIds(records: LedgerRecord[]): LedgerRecord[] {
  const firstLine = new Map<string, number>();
  for (const record of records) {
    const id = record.entry.id;
    if (typeof id !== 'string') continue;
    const first = firstLine.get(id);
    if (first === undefined) {
      firstLine.set(id, record.line);
      continue;
    }
    record.valid = false;
    record.errors.push(`id is also the id of the entry at line ${first} (ids must be unique)`);
  }
  return records;
}

function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

// ---------------------------------------------------------------------------------------------
// Positions in the text.

/** offset -> 1-based line (lines end at \n; a \r before it belongs to the line). */
function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
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

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1) + 1;
}

function splitLines(text: string): Array<{ line: number; text: string }> {
  return text.split('\n').map((t, i) => ({ line: i + 1, text: t.endsWith('\r') ? t.slice(0, -1) : t }));
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipWs(text: string, i: number): number {
  while (i < text.length && isWs(text.charCodeAt(i))) i++;
  return i;
}

/** End (exclusive) of the string starting at the quote at i. */
function skipString(text: string, i: number): number {
  i++;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return i;
}

/** End (exclusive) of the (valid) JSON value starting at i; tracks strings, escapes and depth. */
function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    while (i < text.length) {
      const d = text[i];
      if (d === '"') {
        i = skipString(text, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return i;
  }
  while (i < text.length && !isWs(text.charCodeAt(i)) && !',]}'.includes(text[i]!)) i++;
  return i;
}

/** Offsets where each element of the (valid) array opening at `open` begins. */
export function arrayElementStarts(text: string, open: number): number[] {
  const starts: number[] = [];
  if (text[open] !== '[') return starts;
  let i = skipWs(text, open + 1);
  if (text[i] === ']') return starts;
  while (i < text.length) {
    i = skipWs(text, i);
    starts.push(i);
    i = skipWs(text, skipValue(text, i));
    if (text[i] === ',') i++;
    else break;
  }
  return starts;
}

/** Offset of the value of top-level `key` in the (valid) object opening at `open` (the last one, as JSON.parse keeps), or -1. */
function objectValueStart(text: string, open: number, key: string): number {
  if (text[open] !== '{') return -1;
  let found = -1;
  let i = skipWs(text, open + 1);
  if (text[i] === '}') return -1;
  while (i < text.length && text[i] === '"') {
    const keyEnd = skipString(text, i);
    let name: unknown;
    try {
      name = JSON.parse(text.slice(i, keyEnd));
    } catch {
      return found;
    }
    i = skipWs(text, keyEnd);
    if (text[i] !== ':') return found;
    i = skipWs(text, i + 1);
    if (name === key) found = i;
    i = skipWs(text, skipValue(text, i));
    if (text[i] !== ',') break;
    i = skipWs(text, i + 1);
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Where JSON is broken, without quoting it (V8's own messages quote the input).

export interface JsonError {
  offset: number;
  reason: string;
}

class Stop extends Error {
  constructor(readonly at: JsonError) {
    super(at.reason);
  }
}

const MAX_DEPTH = 4096;

/** The first syntax error in text[from, to) as one JSON document, or null when it is valid JSON. */
export function findJsonError(text: string, from: number, to: number): JsonError | null {
  let i = from;
  const fail = (reason?: string): never => {
    throw new Stop({ offset: i, reason: reason ?? (i >= to ? 'unexpected end of input' : 'unexpected character') });
  };
  const ws = (): void => {
    while (i < to && isWs(text.charCodeAt(i))) i++;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (i >= to || text[i] !== ch) fail();
      i++;
    }
  };
  const digits = (): void => {
    if (i >= to || !/[0-9]/.test(text[i]!)) fail();
    while (i < to && /[0-9]/.test(text[i]!)) i++;
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= to) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail('control character in a string');
      if (c === 0x5c) {
        i++;
        if (i >= to) fail('unterminated string');
        const e = text[i]!;
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (i >= to || !/[0-9a-fA-F]/.test(text[i]!)) fail('bad \\u escape');
          }
        } else if (!'"\\/bfnrt'.includes(e)) fail('bad escape');
      }
      i++;
    }
  };
  const value = (depth: number): void => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    ws();
    if (i >= to) fail();
    const c = text[i]!;
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}' && i < to) {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (i >= to || text[i] !== '"') fail(i >= to ? undefined : 'expected a property name');
        string();
        ws();
        if (i >= to || text[i] !== ':') fail(i >= to ? undefined : "expected ':'");
        i++;
        value(depth + 1);
        ws();
        if (i < to && text[i] === ',') {
          i++;
          continue;
        }
        if (i < to && text[i] === '}') {
          i++;
          return;
        }
        fail(i >= to ? undefined : "expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']' && i < to) {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (i < to && text[i] === ',') {
          i++;
          continue;
        }
        if (i < to && text[i] === ']') {
          i++;
          return;
        }
        fail(i >= to ? undefined : "expected ',' or ']'");
      }
    }
    if (c === '"') { string(); return; }
    if (c === 't') { literal('true'); return; }
    if (c === 'f') { literal('false'); return; }
    if (c === 'n') { literal('null'); return; }
    if (c === '-' || /[0-9]/.test(c)) {
      if (c === '-') i++;
      if (text[i] === '0' && i < to) i++;
      else digits();
      if (i < to && text[i] === '.') {
        i++;
        digits();
      }
      if (i < to && (text[i] === 'e' || text[i] === 'E')) {
        i++;
        if (i < to && (text[i] === '+' || text[i] === '-')) i++;
        digits();
      }
      return;
    }
    fail();
  };
  try {
    value(0);
    ws();
    if (i < to) fail('unexpected content after the JSON value');
    return null;
  } catch (error) {
    if (error instanceof Stop) return error.at;
    return { offset: i, reason: 'cannot be parsed' };
  }
}
