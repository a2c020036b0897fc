/*
 * File names are bytes; a path in a snapshot is a string. A name that is valid UTF-8 is its decoded
 * text, exactly as before. A byte that is not part of a valid UTF-8 sequence becomes the lone
 * surrogate U+DC00 + byte (U+DC80..U+DCFF), as Python's `surrogateescape` does (PEP 383): no valid
 * UTF-8 ever decodes to a surrogate, so an escaped name never equals a valid one, and the bytes come
 * back exactly (`bytesOfName`). JSON writes such a string as `\udcff`, and reads it back the same.
 * Node's own decoding writes U+FFFD instead, which loses the byte (the file's lstat then fails).
 *
 * Imports nothing of mesh-audit: the hashing workers (src/collect/hash-worker.ts) use it.
 */

/** A surrogate that is not half of a pair: what no valid UTF-8 decodes to. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const SURROGATE = /[\uD800-\uDFFF]/;
/** Whether a string holds a lone surrogate; the first test is the quick one (paths seldom hold any surrogate). */
const hasLoneSurrogate = (s: string): boolean => SURROGATE.test(s) && LONE_SURROGATE.test(s);

/** Strict UTF-8, a leading U+FEFF kept (a name may begin with it). Faster than Buffer's own decoding here. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none (RFC 3629). */
function sequenceAt(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (at: number, lo = 0x80, hi = 0xbf): boolean => at < b.length && b[at]! >= lo && b[at]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    // E0 needs A0..BF next (no overlong form), ED 80..9F (no surrogate).
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    // F0 needs 90..BF next (no overlong form), F4 80..8F (nothing past U+10FFFF).
    const lo = c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

/** A name (or path) read as bytes, as a string: decoded UTF-8, each byte outside a valid sequence as U+DC80..U+DCFF. */
export function nameFromBytes(bytes: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    // not UTF-8: decoded sequence by sequence below
  }
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let out = '';
  let run = 0; // where the current run of valid sequences began
  let i = 0;
  while (i < buffer.length) {
    const n = sequenceAt(buffer, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += buffer.toString('utf8', run, i) + String.fromCharCode(0xdc00 + buffer[i]!);
    run = ++i;
  }
  return out + buffer.toString('utf8', run, i);
}

/**
 * The bytes a name stands for, or null when none do: a surrogate other than an escape (U+DC80..U+DCFF), or escapes
 * that spell valid UTF-8 (that name is written decoded; two strings for one file would be two records of it).
 */
export function bytesOfName(name: string): Buffer | null {
  if (!hasLoneSurrogate(name)) return Buffer.from(name, 'utf8');
  const parts: Buffer[] = [];
  let run = 0;
  for (let i = 0; i < name.length; i++) {
    const unit = name.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit <= 0xdbff) {
      const next = name.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // a pair: a character beyond U+FFFF, encoded with the run
        continue;
      }
      return null;
    }
    if (unit < 0xdc80) return null;
    parts.push(Buffer.from(name.slice(run, i), 'utf8'), Buffer.of(unit - 0xdc00));
    run = i + 1;
  }
  parts.push(Buffer.from(name.slice(run), 'utf8'));
  const bytes = Buffer.concat(parts);
  return nameFromBytes(bytes) === name ? bytes : null;
}

/** What to hand fs for a name: the string itself when it has no escape (UTF-8 is its bytes), else its bytes. */
export function fsName(name: string): string | Buffer {
  if (!hasLoneSurrogate(name)) return name;
  const bytes = bytesOfName(name);
  // The callers refuse such a name first (isByteName); this only keeps fs from reading another file in its place.
  if (bytes === null) throw Object.assign(new Error('a name that stands for no bytes'), { code: 'EILSEQ' });
  return bytes;
}

/** Whether a name stands for bytes (see bytesOfName); every name read from a file system does. */
export const isByteName = (name: string): boolean => !hasLoneSurrogate(name) || bytesOfName(name) !== null;
