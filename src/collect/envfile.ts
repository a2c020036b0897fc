/**
 * An env file read the ways its consumers read it (docs/ledger.md, "Env files: what each consumer reads").
 * Consumers disagree, so a file has readings, not one meaning:
 * - the literal reading: `docker run --env-file` and `podman run --env-file` (each CLI parses the file
 *   itself) keep every value as written — quotes, ` # …`, trailing blanks — and drop only the line end
 *   and the line's leading blanks;
 * - the Compose reading: docker-compose 1.29's `env_file:` (python-dotenv 0.21's parser): quotes and
 *   escapes removed, inline comments cut, values trimmed, `export` allowed, `${VAR}` interpolated.
 * Both readings were measured on the real tools (test/docker/env-readings.test.ts).
 * Raw values never leave the collector (see secret/value.ts).
 */

/** One assignment of an env file, raw. */
export interface RawEnvEntry {
  key: string;
  /**
   * The value; null for a key written without `=`, which passes the reading tool's own variable through (or nothing).
   */
  value: string | null;
  /** 1-based line where the assignment starts. */
  line: number;
  /**
   * The value depends on the reading tool's environment (`${VAR}` of a variable the file does not set): `value` is what
   * it is when that environment does not set it.
   */
  caller?: true;
}

/** An assignment read from bytes: the value is a string when it is valid UTF-8, its raw bytes otherwise. */
export interface RawEnvBytesEntry {
  key: string;
  value: string | Uint8Array | null;
  line: number;
  caller?: true;
}

/** The literal reading of a file, and whether Docker's CLI takes the file at all. */
export interface RawLiteralReading {
  /** Keys as Podman's CLI reads them (the line up to its first `=`, after the line's leading blanks). */
  entries: RawEnvBytesEntry[];
  /** Docker's CLI reads the first key without a UTF-8 BOM at the start of the file; Podman's keeps it in the key. */
  bom: boolean;
  /**
   * Why `docker run --env-file` refuses the file (a blank in a key, `export`, no key, bytes that are not UTF-8);
   * Podman's CLI takes it.
   */
  dockerRefuses?: string;
}

/*
 * Bytes that are not UTF-8, mapped one to one onto characters the parser treats as plain text: ASCII
 * stays itself (every character the syntax reacts to is ASCII, and no byte of a multi-byte UTF-8
 * sequence is), any other byte b becomes U+E000 + b, a private-use character that is no whitespace
 * (Latin-1 would turn byte 0xA0 into a no-break space, which trimming eats).
 */
const PRIVATE_BASE = 0xe000;
const bytesToText = (bytes: Uint8Array): string => {
  let text = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    text += String.fromCharCode(...Array.from(bytes.subarray(i, i + 8192), (b) => (b < 0x80 ? b : PRIVATE_BASE + b)));
  }
  return text;
};
const textToBytes = (text: string): Buffer => Buffer.from(Array.from(text, (c) => c.charCodeAt(0) & 0xff));
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const utf8OrNull = (bytes: Uint8Array): string | null => {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
};
const hasBom = (bytes: Uint8Array): boolean => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;

/**
 * The Compose reading of an env file's bytes. A file of valid UTF-8 is read as text (parseEnvFile). In
 * one that is not (Compose itself refuses such a file), each value that is not valid UTF-8 is kept as
 * its raw bytes, so it is digested as bytes: the U+FFFD that an engine stores in place of such bytes
 * gives another digest, and the drift is seen.
 */
export function parseEnvBytes(content: Uint8Array): RawEnvBytesEntry[] {
  const text = utf8OrNull(content);
  if (text !== null) return parseEnvFile(text);
  return parseEnvFile(bytesToText(content.subarray(hasBom(content) ? 3 : 0))).map((e) => {
    if (e.value === null) return e;
    const bytes = textToBytes(e.value);
    return { ...e, value: utf8OrNull(bytes) ?? bytes };
  });
}

// ---------------------------------------------------------------------------------------------------
// The literal reading: Docker's CLI (cli/opts/file.go, parseKeyValueFile) and Podman's (pkg/env).

/** bufio.Scanner's longest line: both CLIs fail on a longer one ("token too long"). */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * The literal reading, as `docker run --env-file` and `podman run --env-file` give it: lines split at
 * LF, one CR before it dropped; blank lines and lines starting with `#` (after leading blanks) skipped;
 * `KEY=VALUE` split at the first `=`, the value kept as it is; a line `KEY` passes the CLI's own
 * variable through (value null). Docker's CLI refuses the whole file for a key with a blank in it
 * (`export K=v`, `K = v`), an empty key or bytes that are not UTF-8; Podman's takes such a key as it is.
 */
export function readLiteral(content: Uint8Array): RawLiteralReading {
  const bom = hasBom(content);
  const entries: RawEnvBytesEntry[] = [];
  let dockerRefuses: string | undefined;
  const refuse = (why: string): void => {
    dockerRefuses ??= why;
  };
  let start = 0;
  for (let lineNo = 1; start < content.length; lineNo++) {
    let end = content.indexOf(0x0a, start);
    const next = end < 0 ? content.length : end + 1;
    if (end < 0) end = content.length;
    let lineBytes = content.subarray(start, end > start && content[end - 1] === 0x0d ? end - 1 : end);
    start = next;
    if (lineBytes.length >= MAX_LINE_BYTES) {
      // Neither CLI reads past such a line: what follows it is not read by either.
      refuse(`line ${lineNo} is longer than ${MAX_LINE_BYTES} bytes`);
      break;
    }
    const valid = utf8OrNull(lineBytes);
    if (valid === null) refuse(`line ${lineNo} is not valid UTF-8`);
    if (lineNo === 1 && bom) lineBytes = lineBytes.subarray(3);
    // Leading blanks of the line go (Docker's CLI: any Unicode space; Podman's: blanks and tabs).
    let at = 0;
    while (at < lineBytes.length && (lineBytes[at] === 0x20 || lineBytes[at] === 0x09)) at++;
    const rest = lineBytes.subarray(at);
    if (rest.length === 0 || rest[0] === 0x23 /* # */) continue;
    const eq = rest.indexOf(0x3d /* = */);
    const keyBytes = eq < 0 ? rest : rest.subarray(0, eq);
    const key = utf8OrNull(keyBytes) ?? Buffer.from(keyBytes).toString('utf8');
    if (key === '') {
      refuse(`line ${lineNo} has no variable name`);
      continue; // Podman's CLI refuses it too ("invalid variable")
    }
    if (/[ \t]/.test(key)) refuse(`line ${lineNo}: variable '${eq < 0 ? '…' : key.slice(0, 40)}' contains blanks`);
    const fullKey = lineNo === 1 && bom ? `\uFEFF${key}` : key;
    if (eq < 0) {
      entries.push({ key: fullKey, value: null, line: lineNo });
      continue;
    }
    const valueBytes = rest.subarray(eq + 1);
    entries.push({ key: fullKey, value: utf8OrNull(valueBytes) ?? Buffer.from(valueBytes), line: lineNo });
  }
  return { entries, bom, ...(dockerRefuses !== undefined ? { dockerRefuses } : {}) };
}

// ---------------------------------------------------------------------------------------------------
// The Compose reading: python-dotenv 0.21 (dotenv/parser.py, main.py, variables.py) as docker-compose
// 1.29 calls it: dotenv_values(path, encoding='utf-8-sig', interpolate=True).

/** Python's `\s` (str.isspace) for the characters it differs from JavaScript's on. */
const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const sticky = (source: string): RegExp => new RegExp(source, 'uy');
const BLANK = `[${PY_SPACE.replace('\\n', '').replace('\\r', '')}]`; // [^\S\r\n]
const MULTILINE_WHITESPACE = sticky(`[${PY_SPACE}]*`);
const EXPORT = sticky(`(?:export${BLANK}+)?`);
const SINGLE_QUOTED_KEY = sticky(`'([^']+)'`);
const UNQUOTED_KEY = sticky(`([^=#${PY_SPACE}]+)`);
const WHITESPACE = sticky(`${BLANK}*`);
const EQUAL_SIGN = sticky(`(=${BLANK}*)`);
const UNQUOTED_VALUE = sticky(`([^\\r\\n]*)`);
const COMMENT = sticky(`(?:${BLANK}*#[^\\r\\n]*)?`);
const END_OF_LINE = sticky(`${BLANK}*(?:\\r\\n|\\n|\\r|$)`);
const REST_OF_LINE = sticky(`[^\\r\\n]*(?:\\r|\\n|\\r\\n)?`);
// python-dotenv's `\s+#.*` and `\s+$`, tried only where a run of white space starts (the look-behind):
// else every character of a long run starts the run's reading again, and one line of 60 kB of spaces
// cost seconds (issue 46). The first match is the same either way: it starts where a run starts.
const INLINE_COMMENT = new RegExp(`(?<![${PY_SPACE}])[${PY_SPACE}]+#.*`, 'u');
const TRAILING_SPACE = new RegExp(`(?<![${PY_SPACE}])[${PY_SPACE}]+$`, 'u');
/** codecs.decode(…, 'unicode-escape') of the escapes python-dotenv decodes. */
const ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};
/** `${NAME}` and `${NAME:-default}`: the only interpolation python-dotenv 0.21 does (not `$NAME`). */
const POSIX_VARIABLE = /\$\{([^}:]*)(?::-([^}]*))?\}/g;

class ParseError extends Error {}

class Reader {
  at = 0;
  line = 1;
  constructor(readonly text: string) {}
  hasNext(): boolean {
    return this.at < this.text.length;
  }
  peek(): string {
    return this.text.charAt(this.at);
  }
  private advance(to: number): void {
    for (let i = this.at; i < to; i++) if (this.text.charCodeAt(i) === 0x0a) this.line++;
    this.at = to;
  }
  read(regex: RegExp): string[] {
    regex.lastIndex = this.at;
    const match = regex.exec(this.text);
    if (!match) throw new ParseError();
    this.advance(this.at + match[0].length);
    return match.slice(1).map((g: string | undefined) => g ?? '');
  }
  /**
   * A quoted value, as python-dotenv's `Q((?:\\Q|[^Q])*)Q` matches it: the body runs to the first
   * quote not escaped by a backslash; with none, the regular expression backtracks to the last escaped
   * one (the body then ends with its backslash); with neither, it is an error. One pass.
   */
  readQuoted(quote: string): string {
    const open = this.at;
    let lastEscaped = -1;
    for (let i = open + 1; i < this.text.length; i++) {
      const c = this.text[i];
      if (c === '\\' && this.text[i + 1] === quote) {
        lastEscaped = i + 1;
        i++;
      } else if (c === quote) return this.take(open, i);
    }
    if (lastEscaped < 0) throw new ParseError();
    return this.take(open, lastEscaped);
  }
  private take(open: number, close: number): string {
    const body = this.text.slice(open + 1, close);
    this.advance(close + 1);
    return body;
  }
}

const decodeEscapes = (body: string, escapes: RegExp): string => body.replace(escapes, (m) => ESCAPES[m[1]!] ?? m);
const DOUBLE_QUOTE_ESCAPES = /\\[\\'"abfnrtv]/g;
const SINGLE_QUOTE_ESCAPES = /\\[\\']/g;

function parseValue(reader: Reader): string {
  const c = reader.peek();
  if (c === "'") return decodeEscapes(reader.readQuoted("'"), SINGLE_QUOTE_ESCAPES);
  if (c === '"') return decodeEscapes(reader.readQuoted('"'), DOUBLE_QUOTE_ESCAPES);
  if (c === '' || c === '\n' || c === '\r') return '';
  const [part = ''] = reader.read(UNQUOTED_VALUE);
  return part.replace(INLINE_COMMENT, '').replace(TRAILING_SPACE, '');
}

/** One binding: a key (null for a comment or blank), its value (null without `=`), the key's line. */
function parseBinding(reader: Reader): { key: string | null; value: string | null; line: number } {
  try {
    reader.read(MULTILINE_WHITESPACE);
    if (!reader.hasNext()) return { key: null, value: null, line: reader.line };
    reader.read(EXPORT);
    const line = reader.line;
    let key: string | null = null;
    if (reader.peek() === "'") [key = null] = reader.read(SINGLE_QUOTED_KEY);
    else if (reader.peek() !== '#') [key = null] = reader.read(UNQUOTED_KEY);
    reader.read(WHITESPACE);
    let value: string | null = null;
    if (reader.peek() === '=') {
      reader.read(EQUAL_SIGN);
      value = parseValue(reader);
    }
    reader.read(COMMENT);
    reader.read(END_OF_LINE);
    return { key, value, line };
  } catch (error) {
    if (!(error instanceof ParseError)) throw error;
    // python-dotenv warns and skips what is left of the line.
    reader.read(REST_OF_LINE);
    return { key: null, value: null, line: reader.line };
  }
}

/**
 * The Compose reading of an env file's text, as docker-compose 1.29 gives it (python-dotenv 0.21):
 * a BOM dropped, CR LF and lone CR read as LF (Python's universal newlines), `export` prefixes,
 * `#` comments (whole-line, or after a blank in an unquoted value), single quotes with `\'` and `\\`,
 * double quotes with `\n`, `\t`, `\"`… escapes, quoted values spanning lines, unquoted values trimmed,
 * a line python-dotenv cannot parse (text after a closing quote, an unterminated quote) skipped, and
 * `${VAR}` / `${VAR:-default}` replaced by an earlier key of the file or, failing that, by the
 * tool's own environment (such a value is marked `caller`; `value` is what it is when that
 * environment does not set the variable).
 */
export function parseEnvFile(text: string): RawEnvEntry[] {
  const body = text.replace(/^\uFEFF/, '');
  // Lines are counted as an editor counts them (at LF): a lone CR ends a line for Python only.
  const lfLineOf = [1];
  let lf = 1;
  for (const m of body.matchAll(/\r\n|\r|\n/g)) {
    if (m[0] !== '\r') lf++;
    lfLineOf.push(lf);
  }
  const reader = new Reader(body.replace(/\r\n?/g, '\n'));
  const raw: { key: string; value: string | null; line: number }[] = [];
  while (reader.hasNext()) {
    const binding = parseBinding(reader);
    if (binding.key !== null)
      raw.push({ key: binding.key, value: binding.value, line: lfLineOf[binding.line - 1] ?? binding.line });
  }
  // resolve_variables(override=True): earlier keys of the file win over the tool's environment.
  const resolved = new Map<string, { value: string | null; caller: boolean }>();
  return raw.map(({ key, value, line }): RawEnvEntry => {
    if (value === null) {
      resolved.set(key, { value: null, caller: true });
      return { key, value: null, line };
    }
    const from = { caller: false };
    const result = value.replace(POSIX_VARIABLE, (_whole, name: string, fallback: string | undefined) => {
      const earlier = resolved.get(name);
      if (earlier === undefined) {
        // Not set by the file: the tool's environment gives it, else the default.
        from.caller = true;
        return fallback ?? '';
      }
      if (earlier.caller && earlier.value !== null) from.caller = true;
      // A key written without `=` is None to python-dotenv: it interpolates as '' whatever the environment says.
      return earlier.value ?? '';
    });
    resolved.set(key, { value: result, caller: from.caller });
    return { key, value: result, line, ...(from.caller ? { caller: true as const } : {}) };
  });
}
