import { createHash } from 'node:crypto';

/**
 * How a string the host controls (a container's name, a label, a ledger id or target, a path, or a
 * message made over them) is shown to a person: on the terminal, in the text and Markdown views, in an
 * alert's labels and annotations, on stderr. The one rule for every such output; the JSON, SARIF and
 * JSONL files keep each value whole (JSON escapes it).
 *
 * - Every character that can move the cursor, clear the screen, start a terminal sequence (OSC 8 links)
 *   or reorder or hide text is written as a visible escape: C0 and C1 controls and DEL as `\n`, `\r`,
 *   `\t`, `\xHH`; the bidirectional marks, overrides and isolates, the zero-width characters, the line
 *   and paragraph separators, the byte order mark and lone surrogates as `\uHHHH`. The backslash itself
 *   is `\\`, so the shown form is unambiguous: two different strings never show the same.
 * - A value longer than its bound is cut, at the end of a character or an escape, to a prefix and
 *   `… (N characters, sha256:XXXXXXXXXXXX)` (the first 12 hex digits of the SHA-256 of its UTF-8): the
 *   shown form is never longer than the bound, and the whole value is in the JSON reports.
 *
 * One pass over the value, no regular expression: linear in its length, whatever it holds.
 */

/** The longest a single value (a name, a label, an id, a path) is shown. */
export const SHOWN_BOUND = 256;
/** The longest a finished message (a rule's message, a problem) is shown: a sentence over a few values. */
export const SHOWN_MESSAGE_BOUND = 4096;

/** Whether a UTF-16 code unit is shown as an escape (the backslash, then every invisible or moving one). */
function escaped(code: number): boolean {
  return (
    code === 0x5c || // backslash: escaped so that every escape is unambiguous
    code < 0x20 || // C0 controls: newline, carriage return, escape…
    (code >= 0x7f && code <= 0x9f) || // DEL and C1 controls (0x9b is a one-byte CSI)
    code === 0x061c || // Arabic letter mark
    (code >= 0x200b && code <= 0x200f) || // zero-width space/joiners, left-to-right and right-to-left marks
    (code >= 0x2028 && code <= 0x202e) || // line and paragraph separators, bidi embeddings and overrides
    (code >= 0x2060 && code <= 0x2069) || // word joiner, invisible operators, bidi isolates
    code === 0xfeff // byte order mark, zero-width no-break space
  );
}

const hex = (code: number, digits: number): string => code.toString(16).padStart(digits, '0');

function escapeOf(code: number): string {
  switch (code) {
    case 0x5c:
      return '\\\\';
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    default:
      return code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
  }
}

const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * `value` as a person may read it: every control, bidi or invisible character escaped (see above), cut
 * to `bound` characters with its length and digest when longer.
 */
export function shown(value: string, bound: number = SHOWN_BOUND): string {
  // First pass: is anything to escape, and how many characters (code points) is it?
  let plain = true;
  let pairs = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (isHigh(code) && i + 1 < value.length && isLow(value.charCodeAt(i + 1))) {
      pairs++;
      i++;
    } else if (escaped(code) || isHigh(code) || isLow(code)) plain = false;
  }
  if (plain && value.length <= bound) return value;
  const characters = value.length - pairs;
  const suffixLength = `… (${characters} characters, sha256:123456789012)`.length;
  const room = bound - suffixLength;
  // Second pass: one piece at a time (a character, a surrogate pair, an escape), so a cut never splits one.
  let out = '';
  let fits = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    let piece: string;
    if (isHigh(code) && i + 1 < value.length && isLow(value.charCodeAt(i + 1))) {
      piece = value.slice(i, i + 2);
      i++;
    } else if (escaped(code) || isHigh(code) || isLow(code)) piece = escapeOf(code);
    else piece = value[i]!;
    out += piece;
    if (out.length <= room) fits = out.length;
    if (out.length > bound) return `${out.slice(0, fits)}${suffixOf(value, characters)}`;
  }
  return out;
}

function suffixOf(value: string, characters: number): string {
  const digest = createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 12);
  return `… (${characters} characters, sha256:${digest})`;
}

/** A finished message (made over host values) as a person may read it: `shown` with the message bound. */
export const shownMessage = (message: string): string => shown(message, SHOWN_MESSAGE_BOUND);

/**
 * Each line of a text the tool wrote over several lines (an error listing what it refused), shown: the
 * line breaks it wrote stay, every other control is escaped. A host value in it cannot clear the screen
 * or plant a link; it could still start a line of its own, so messages that name a host thing one value
 * at a time use `shown` on that value instead.
 */
export const shownLines = (text: string): string =>
  text
    .split('\n')
    .map((line) => shown(line, SHOWN_MESSAGE_BOUND))
    .join('\n');

/** ASCII punctuation Markdown (CommonMark, GFM tables) gives a meaning to inline: escaped with a backslash. */
function markdownEscaped(code: number): boolean {
  switch (code) {
    case 0x5c: // \
    case 0x60: // `
    case 0x2a: // *
    case 0x5f: // _
    case 0x5b: // [
    case 0x5d: // ]
    case 0x3c: // <
    case 0x3e: // >
    case 0x7c: // | (a table cell's border)
    case 0x26: // & (an entity)
    case 0x7e: // ~ (strikethrough)
      return true;
    default:
      return false;
  }
}

/**
 * A host value (or a message over host values) as Markdown text: shown (`shown`, cut at `bound`), then
 * every character Markdown reads as markup escaped with a backslash, a leading `#` too, so it renders as
 * exactly the shown form, in a table cell (it keeps the row's columns) or a list item: no link, no HTML,
 * no emphasis, no code span of its own.
 */
export function shownMarkdown(value: string, bound: number = SHOWN_BOUND): string {
  const text = shown(value, bound);
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (!markdownEscaped(text.charCodeAt(i))) continue;
    out += `${text.slice(from, i)}\\${text[i]}`;
    from = i + 1;
  }
  out += text.slice(from);
  return out.startsWith('#') ? `\\${out}` : out;
}

/**
 * A host value (an id, a name, a path, a command) as a Markdown code span: shown (`shown`, cut at
 * `bound`), fenced by one backtick more than the longest run of backticks in it, so nothing in it ends
 * the span. In a table cell (`cell`) each `|` is written `\|`, which GFM reads as part of the cell (and
 * shows as `|` inside the span); elsewhere the span is left as is.
 */
export function shownCode(value: string, options: { cell?: boolean; bound?: number } = {}): string {
  const text = shown(value, options.bound ?? SHOWN_BOUND);
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    run = text.charCodeAt(i) === 0x60 ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  const body = options.cell === true ? text.split('|').join('\\|') : text;
  const fence = '`'.repeat(longest + 1);
  // A span's content that starts or ends with a backtick, or with a space at both ends, is padded by one space
  // each side (CommonMark strips exactly one); an empty span is one space.
  const pad =
    body === '' || body.startsWith('`') || body.endsWith('`') || (body.startsWith(' ') && body.endsWith(' '))
      ? ' '
      : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/**
 * A value as one line of JSON a person reads and may paste (the adoption plan's entries in Markdown):
 * `JSON.stringify`, which escapes C0 controls, `"` and `\` but leaves DEL, C1 controls and the bidi and
 * invisible characters raw, with those written as `\uHHHH` too. The same JSON value, nothing cut.
 */
export function shownJson(value: unknown): string {
  const json = JSON.stringify(value);
  let out = '';
  let from = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code === 0x5c || code < 0x20 || !escaped(code)) continue;
    out += `${json.slice(from, i)}\\u${hex(code, 4)}`;
    from = i + 1;
  }
  return out + json.slice(from);
}
