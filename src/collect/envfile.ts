/** One assignment of an env file, raw: it never leaves the collector (see secret/value.ts). */
export interface RawEnvEntry {
  key: string;
  value: string;
  /** 1-based line where the assignment starts. */
  line: number;
}

/** An assignment read from bytes: the value is a string when it is valid UTF-8, its raw bytes otherwise. */
export interface RawEnvBytesEntry {
  key: string;
  value: string | Uint8Array;
  line: number;
}

/*
 * Bytes that are not UTF-8, mapped one to one onto characters the parser treats as plain text: ASCII
 * stays itself (every character the syntax reacts to is ASCII, and no byte of a multi-byte UTF-8
 * sequence is), any other byte b becomes U+E000 + b, a private-use character that is no whitespace
 * (Latin-1 would turn byte 0xA0 into a no-break space, which trim() eats).
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

/**
 * Parses an env file's bytes. A file of valid UTF-8 is parsed as text (parseEnvFile). In one that is
 * not, each value that is not valid UTF-8 is kept as its raw bytes, so it is digested as bytes: the
 * U+FFFD that Docker stores in place of such bytes gives another digest, and the drift is seen
 * (decoding with replacement made both sides equal by accident).
 */
export function parseEnvBytes(content: Uint8Array): RawEnvBytesEntry[] {
  const text = utf8OrNull(content);
  if (text !== null) return parseEnvFile(text);
  const bom = content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf ? 3 : 0;
  return parseEnvFile(bytesToText(content.subarray(bom))).map((e) => {
    const bytes = textToBytes(e.value);
    return { key: e.key, value: utf8OrNull(bytes) ?? bytes, line: e.line };
  });
}

const ASSIGNMENT = /^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*(.*)$/s;
const DOUBLE_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\', $: '$' };

/**
 * Parses an env file with dotenv semantics: CRLF or LF, `export` prefixes, `#` comments (whole-line,
 * or after whitespace in an unquoted value), single quotes literal, double quotes with escapes,
 * quoted values spanning lines. A line that is not an assignment is skipped.
 */
export function parseEnvFile(text: string): RawEnvEntry[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const entries: RawEnvEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    const trimmed = lines[i]!.trimStart();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const match = ASSIGNMENT.exec(trimmed);
    if (!match) continue;
    const key = match[1]!;
    let rest = match[2]!;
    const quote = rest[0];
    let value: string;
    if (quote === '"' || quote === "'" || quote === '`') {
      // Find the closing quote, reading further lines when the value spans them.
      const closed = closeQuote(lines, i, rest.slice(1), quote);
      if (closed === null) {
        // Unterminated: dotenv takes the line as it stands.
        value = rest.trim();
      } else {
        i = closed.lastLine;
        const raw = closed.body;
        value = quote === '"' ? raw.replace(/\\(.)/g, (whole, c: string) => DOUBLE_ESCAPES[c] ?? whole) : raw;
      }
    } else {
      const comment = rest.search(/[ \t]#/);
      if (comment >= 0) rest = rest.slice(0, comment);
      value = rest.trim();
    }
    entries.push({ key, value, line: start + 1 });
  }
  return entries;
}

/**
 * The body of a quoted value that starts with `first` (the text after the opening quote, on line
 * `line`) and may go on over the following lines, up to the closing quote; null when it never closes.
 * Each character is looked at once, so an unterminated quote costs one pass over the rest of the file
 * (rescanning the growing body line after line made a 1 MiB file take minutes). In double quotes a
 * backslash escapes the next character, the line break included.
 */
function closeQuote(lines: readonly string[], line: number, first: string, quote: string): { body: string; lastLine: number } | null {
  const parts: string[] = [];
  let escaped = false;
  let segment = first;
  for (let at = line; ; ) {
    for (let j = 0; j < segment.length; j++) {
      if (escaped) {
        escaped = false;
        continue;
      }
      const c = segment[j];
      if (quote === '"' && c === '\\') escaped = true;
      else if (c === quote) {
        parts.push(segment.slice(0, j));
        return { body: parts.join('\n'), lastLine: at };
      }
    }
    parts.push(segment);
    if (at + 1 >= lines.length) return null;
    at++;
    escaped = false; // an escape at the end of a line took the line break
    segment = lines[at]!;
  }
}
