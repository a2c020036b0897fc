/** One assignment of an env file, raw: it never leaves the collector (see secret/value.ts). */
export interface RawEnvEntry {
  key: string;
  value: string;
  /** 1-based line where the assignment starts. */
  line: number;
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
      let body = rest.slice(1);
      let close = findClose(body, quote);
      while (close < 0 && i + 1 < lines.length) {
        i++;
        body += '\n' + lines[i]!;
        close = findClose(body, quote);
      }
      if (close < 0) {
        // Unterminated: dotenv takes the line as it stands.
        i = start;
        value = rest.trim();
      } else {
        const raw = body.slice(0, close);
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

function findClose(body: string, quote: string): number {
  for (let j = 0; j < body.length; j++) {
    if (quote === '"' && body[j] === '\\') {
      j++;
      continue;
    }
    if (body[j] === quote) return j;
  }
  return -1;
}
