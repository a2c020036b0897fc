import { createHmac, randomBytes } from 'node:crypto';
import { isIPv6 } from 'node:net';

/** A value that may be a secret, as it is stored in a snapshot: never the raw value. */
export interface SafeValue {
  /** `hmac-sha256:<hex>` under a key made fresh for one scan: equality works inside a snapshot only. */
  digest: string;
  /**
   * What is safe to read (see shapeOf): for a URL its scheme, a host that is no credential, port and structure;
   * otherwise its length.
   */
  shape: string;
}

/** Makes SafeValues under one in-memory key. The key is never exposed, so digests cannot be brute-forced later. */
export interface SafeValueMaker {
  /** A string is digested as its UTF-8 bytes; raw bytes (a value that is not valid UTF-8) as they are. */
  (raw: string | Uint8Array): SafeValue;
}

export function createSafeValueMaker(key: Buffer = randomBytes(32)): SafeValueMaker {
  const make = (raw: string | Uint8Array): SafeValue => ({
    digest:
      'hmac-sha256:' +
      // A string is given to the HMAC as it is, encoded to UTF-8 there as Buffer.from would (lone surrogates as U+FFFD
      // both ways: test/unit/secret.test.ts), without a Buffer per value (~55,000 values at 2,000 containers).
      (typeof raw === 'string'
        ? createHmac('sha256', key).update(raw, 'utf8')
        : createHmac('sha256', key).update(raw)
      ).digest('hex'),
    shape: shapeOf(typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8')),
  });
  // A scan meets most values several times (the container's env, its process's, the env file's two
  // readings): each short string is digested once per maker, which lives as long as its key (one scan).
  const made = new Map<string, SafeValue>();
  return (raw: string | Uint8Array): SafeValue => {
    if (typeof raw !== 'string' || raw.length > REMEMBERED_LENGTH) return make(raw);
    let value = made.get(raw);
    if (value === undefined) made.set(raw, (value = make(raw)));
    return value;
  };
}

/** Values up to this length are digested once per maker; longer ones (rare) each time. */
const REMEMBERED_LENGTH = 4096;

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/s;

/**
 * Every text shapeOf can give, as a JSON Schema pattern: a snapshot read back (`evaluate`, history,
 * baselines) whose shapes do not match was not made by the scanner and may hold raw values, so it is
 * refused rather than printed. test/unit/secret.test.ts checks that every shape matches.
 */
export const SHAPE_PATTERN =
  '^(?:<[0-9]+ chars>|[a-zA-Z][a-zA-Z0-9+.-]*://(?:…@)?' +
  '(?:…|localhost|(?:[0-9]{1,3}\\.){3}[0-9]{1,3}|(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}|' +
  '\\[[0-9A-Fa-f:.]+(?:%[^\\]/?#@]*)?\\])?' +
  '(?::(?:[0-9]{1,5}|…)?)?(?:/…?)?(?:\\?…)?(?:#…)?)$';

/**
 * The readable shape of a value. What a shape may show, and nothing else (everything else is `…`):
 * - for a URL written `scheme://…`: the scheme; whether there is userinfo (`…@`, never what it holds);
 *   the host only when it is plainly not a credential — empty (045's `postgresql://…@:20000/…` shows
 *   an empty host), an IPv4 address, an IPv6 address in brackets, `localhost`, or a lowercase DNS name
 *   with a dot and a top-level label of letters (`db.mesh.internal`); a port of at most five digits
 *   (up to 65535); and the structure of the rest: `/` alone, `/…` for a longer path, `?…` for a query,
 *   `#…` for a fragment. A one-word host (`redis://<token>`) is `…`.
 * - anything else (plain text, `token:<x>`, `user:password`): its length, `<N chars>`.
 * As in WHATWG URL parsing, the authority ends at the first `/`, `?` or `#`, and userinfo runs to its
 * last `@`, so a password holding `@` stays hidden; an `@` only after the authority may be a password
 * holding `/`, and then only the scheme is shown.
 */
export function shapeOf(raw: string): string {
  const url = SCHEME.exec(raw);
  if (!url) return `<${codePoints(raw)} chars>`;
  const [, scheme = '', rest = ''] = url; // both groups always match when the expression does
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const tail = end < 0 ? '' : rest.slice(end);
  const at = authority.lastIndexOf('@');
  if (at < 0 && tail.includes('@')) return `${scheme}://…`;
  const { host, port } = splitHostPort(at < 0 ? authority : authority.slice(at + 1));
  const shownPortPart = port === undefined ? '' : `:${shownPort(port)}`;
  return `${scheme}://${at >= 0 ? '…@' : ''}${shownHost(host)}${shownPortPart}${tailShape(tail)}`;
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

/** Code points, as a person counts characters (a lone surrogate counts one): without an array per value. */
function codePoints(raw: string): number {
  return raw.length - (raw.match(SURROGATE_PAIR)?.length ?? 0);
}

function splitHostPort(hostPort: string): { host: string; port: string | undefined } {
  const close = hostPort.startsWith('[') ? hostPort.indexOf(']') : -1;
  const colon = hostPort.indexOf(':', close < 0 ? 0 : close);
  if (hostPort.startsWith('[') && close < 0) return { host: hostPort, port: undefined };
  return colon < 0
    ? { host: hostPort, port: undefined }
    : { host: hostPort.slice(0, colon), port: hostPort.slice(colon + 1) };
}

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const DNS_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

function shownHost(host: string): string {
  if (host === '' || host === 'localhost' || IPV4.test(host) || DNS_NAME.test(host)) return host;
  if (host.startsWith('[') && host.endsWith(']') && isIPv6(host.slice(1, -1))) return host;
  return '…';
}

const shownPort = (port: string): string =>
  port === '' || (/^[0-9]{1,5}$/.test(port) && Number(port) <= 65535) ? port : '…';

function tailShape(tail: string): string {
  const query = tail.indexOf('?');
  const fragment = tail.indexOf('#');
  const pathEnd = Math.min(query < 0 ? tail.length : query, fragment < 0 ? tail.length : fragment);
  const path = tail.slice(0, pathEnd);
  return (
    (path === '' || path === '/' ? path : '/…') +
    (query >= 0 && (fragment < 0 || query < fragment) ? '?…' : '') +
    (fragment >= 0 ? '#…' : '')
  );
}
