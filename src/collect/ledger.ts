import { duplicateKeys, elementOffsets, jsonSyntaxError, lineIndex, type DuplicateKey } from '../input/json.js';
import { ledgerRecord } from './ledger-entries.js';
import { kindOf } from '../fs/file-kind.js';
import { isHostPath, locate, resolveRoot } from './files.js';
import { errnoCode, readRegularFile } from './read-file.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { Ledger, LedgerRecord, Problem } from '../snapshot/types.js';
import type { CollectContext, Collector } from './contract.js';

/*
 * The ledger reader: reads one file from the host (same safe walk as the file collector: no symlink
 * followed anywhere, regular file only) and accepts three forms:
 *   - a JSON array of entries;
 *   - a JSON object with `entries` (array) and optional node-level `node` (string), `adopted` (boolean);
 *   - JSON Lines, one entry per non-empty line (a bad line becomes an invalid record, the rest is used).
 * Each record carries the 1-based line where its entry starts, found in the text (never by
 * re-serializing): SARIF points at it. No message made here quotes the file's contents: entries can
 * hold secrets, so parse errors are located by src/input/json.ts, which never quotes.
 */

export interface LedgerReadOptions {
  root: string;
  safe: SafeValueMaker;
  /** A larger ledger is not read (default 32 MiB). */
  maxBytes?: number;
}

export const DEFAULT_MAX_LEDGER_BYTES = 32 * 1024 * 1024;

export async function readLedger(
  hostPath: string,
  options: LedgerReadOptions,
): Promise<{ ledger: Ledger; problems: Problem[] }> {
  // Every message names the ledger (it is read on its own, as a one-line notification) but never its contents.
  const named = (message: string): string => message.replace(/^ledger /, `ledger ${hostPath} `);
  const unavailable = (message: string): { ledger: Ledger; problems: Problem[] } => ({
    ledger: { path: hostPath, available: false, entries: [] },
    problems: [{ source: 'ledger', subject: hostPath, message: named(message) }],
  });
  if (!isHostPath(hostPath)) {
    return {
      ledger: { path: String(hostPath), available: false, entries: [] },
      problems: [
        {
          source: 'ledger',
          subject: String(hostPath),
          message: `ledger path ${JSON.stringify(String(hostPath))} is not an absolute, normalized host path`,
        },
      ],
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
  if (located.state === 'blocked')
    return unavailable(
      `ledger not read: ${located.error}` +
        (located.code && !located.error.includes(located.code) ? ` (${located.code})` : ''),
    );
  const kind = kindOf(located.stat);
  if (kind === 'symlink') return unavailable('ledger is a symlink: refused (symlinks are never followed)');
  if (kind !== 'file') return unavailable(`ledger is a ${kind}, not a regular file: not read`);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_LEDGER_BYTES;
  const read = readRegularFile(located.fsPath, located.stat, maxBytes);
  if (!read.ok)
    return unavailable(
      `ledger not read: ${read.error}${read.code && !read.error.includes(read.code) ? ` (${read.code})` : ''}`,
    );
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
  return {
    ledger,
    problems: parsed.problems.map((message) => ({ source: 'ledger', subject: hostPath, message: named(message) })),
  };
}

/** The ledger's collector (src/collect/contract.ts): the host's ledger, `--ledger` under `--root`. */
export const ledgerCollector: Collector<CollectContext, Ledger> = {
  async collect({ settings, safe, progress }) {
    progress(`reading ledger ${settings.ledger}`);
    const { ledger, problems } = await readLedger(settings.ledger, { root: settings.root, safe });
    return { part: ledger, problems, notes: [] };
  },
  unread: ({ settings }, reason) => ({
    part: { path: settings.ledger, available: false, entries: [] },
    problems: [
      { source: 'ledger', subject: settings.ledger, message: `ledger ${settings.ledger} not read: ${reason}` },
    ],
    notes: [],
  }),
};

export type ParsedLedger =
  | { ok: true; entries: LedgerRecord[]; node?: string; adopted?: boolean; problems: string[] }
  | { ok: false; message: string };

/** Parses the ledger's text (BOM already removed) in whichever of the three forms it is. Pure. */
export function parseLedgerText(text: string, safe: SafeValueMaker): ParsedLedger {
  // A host agent that rewrites its ledger in place leaves it empty for a moment: an empty ledger is one
  // caught mid-rewrite, not a host with nothing applied (which would end every ledger finding as absent).
  if (text.trim() === '')
    return {
      ok: false,
      message: 'ledger is empty (0 bytes or only whitespace): not read (caught while being rewritten?)',
    };
  const doc: LedgerText = {
    text,
    lines: lineIndex(text),
    start: Math.max(0, text.search(/[^ \t\r\n]/)), // the first character after JSON's own whitespace
    safe,
  };
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    // Not one JSON document: JSON Lines, or a damaged document (a truncated array must not pass for JSON Lines).
    return parseJsonLines(doc);
  }
  return parseJsonDocument(doc, whole);
}

/** The ledger's text and what every form's reading needs of it. */
interface LedgerText {
  text: string;
  /** The 1-based line of an offset. */
  lines: (offset: number) => number;
  /** The offset of the first character after JSON's own whitespace. */
  start: number;
  safe: SafeValueMaker;
}

/** A ledger that is one JSON document: an array of entries, an object with `entries`, or one JSON Lines entry. */
function parseJsonDocument(doc: LedgerText, whole: unknown): ParsedLedger {
  const { text, lines, start, safe } = doc;
  const repeated = duplicateKeys(text);
  if (Array.isArray(whole)) {
    const starts = elementOffsets(text);
    const records = whole.map((raw, i) => ledgerRecord(raw, lines(starts[i] ?? start), safe));
    return {
      ok: true,
      entries: uniqueIds(
        withRepeatedKeys(records, repeated, (path) => (typeof path[0] === 'number' ? path[0] : undefined), lines),
      ),
      problems: [],
    };
  }
  if (whole === null || typeof whole !== 'object')
    return {
      ok: false,
      message:
        `ledger is JSON but ${typeName(whole)}, not an array of entries, an object with "entries", or ` + `JSON Lines`,
    };
  const obj = whole as Record<string, unknown>;
  const looksLikeLedger =
    Object.hasOwn(obj, 'entries') ||
    ((Object.hasOwn(obj, 'node') || Object.hasOwn(obj, 'adopted')) &&
      !['id', 'type', 'target'].some((k) => Object.hasOwn(obj, k)));
  if (!looksLikeLedger) {
    // One line of JSON Lines: a single entry.
    return {
      ok: true,
      entries: withRepeatedKeys([ledgerRecord(obj, lines(start), safe)], repeated, () => 0, lines),
      problems: [],
    };
  }
  // JSON.parse kept the last of a repeated top-level key ("entries" twice): the ledger is ambiguous.
  const topLevel = repeated.find((d) => d.path.length === 0);
  if (topLevel) {
    return {
      ok: false,
      message:
        `ledger names ${JSON.stringify(topLevel.key)} twice (lines ${lines(topLevel.firstOffset)} and ` +
        `${lines(topLevel.offset)}): ambiguous, not read`,
    };
  }
  return parseLedgerObject(doc, obj, repeated);
}

/** A ledger object: `entries`, with the node-level `node` and `adopted`. */
function parseLedgerObject(doc: LedgerText, obj: Record<string, unknown>, repeated: DuplicateKey[]): ParsedLedger {
  const { text, lines, start, safe } = doc;
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
    if (!Array.isArray(entries))
      return { ok: false, message: `ledger field "entries" must be an array, not ${typeName(entries)}` };
    const starts = elementOffsets(text, 'entries');
    const records = entries.map((raw, i) => ledgerRecord(raw, lines(starts[i] ?? start), safe));
    out.entries = uniqueIds(
      withRepeatedKeys(
        records,
        repeated,
        (path) => (path[0] === 'entries' && typeof path[1] === 'number' ? path[1] : undefined),
        lines,
      ),
    );
  }
  return out;
}

/** A ledger that is not one JSON document: JSON Lines (a bad line an invalid record), or a damaged document. */
function parseJsonLines(doc: LedgerText): ParsedLedger {
  const { text, start, safe } = doc;
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
    const error = jsonSyntaxError(text);
    const where = error ? `${error.reason} at line ${error.line}, column ${error.column}` : 'it cannot be parsed';
    return { ok: false, message: `ledger is neither JSON nor JSON Lines: ${where}` };
  }
  const entries = nonEmpty.map((row) => {
    let raw: unknown;
    try {
      raw = JSON.parse(row.text);
    } catch {
      const error = jsonSyntaxError(row.text);
      const why = error ? `${error.reason} at column ${error.column}` : 'cannot be parsed';
      return { line: row.line, valid: false, errors: [`not JSON: ${why}`], entry: {} } satisfies LedgerRecord;
    }
    const record = ledgerRecord(raw, row.line, safe);
    return withRepeatedKeys(
      [record],
      duplicateKeys(row.text),
      () => 0,
      () => row.line,
    )[0]!;
  });
  return { ok: true, entries: uniqueIds(entries), problems: [] };
}

/**
 * An entry that names a key twice is ambiguous (JSON.parse kept only the last value): it stays in the
 * ledger, invalid, with an error naming the key and both lines, so it is reported (ledger-well-formed)
 * and the other entries are still used. `entryOf` says which entry a repeated key's object is in.
 */
function withRepeatedKeys(
  records: LedgerRecord[],
  repeated: DuplicateKey[],
  entryOf: (path: (string | number)[]) => number | undefined,
  lines: (offset: number) => number,
): LedgerRecord[] {
  for (const dup of repeated) {
    const i = entryOf(dup.path);
    const record = i === undefined ? undefined : records[i];
    if (!record) continue;
    record.valid = false;
    record.errors.push(
      `${JSON.stringify(dup.key)} is given twice (lines ${lines(dup.firstOffset)} and ${lines(dup.offset)}): ambiguous`,
    );
  }
  return records;
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
  return value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`;
}

function splitLines(text: string): Array<{ line: number; text: string }> {
  return text.split('\n').map((t, i) => ({ line: i + 1, text: t.endsWith('\r') ? t.slice(0, -1) : t }));
}
