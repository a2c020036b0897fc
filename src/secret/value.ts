import { createHmac, randomBytes } from 'node:crypto';

/** A value that may be a secret, as it is stored in a snapshot: never the raw value. */
export interface SafeValue {
  /** `hmac-sha256:<hex>` under a key made fresh for one scan: equality works inside a snapshot only. */
  digest: string;
  /** What is safe to read: for a URL its scheme, host and port; otherwise its length. */
  shape: string;
}

/** Makes SafeValues under one in-memory key. The key is never exposed, so digests cannot be brute-forced later. */
export interface SafeValueMaker {
  /** A string is digested as its UTF-8 bytes; raw bytes (a value that is not valid UTF-8) as they are. */
  (raw: string | Uint8Array): SafeValue;
}

export function createSafeValueMaker(key: Buffer = randomBytes(32)): SafeValueMaker {
  return (raw: string | Uint8Array): SafeValue => ({
    digest: 'hmac-sha256:' + createHmac('sha256', key).update(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw).digest('hex'),
    shape: shapeOf(typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8')),
  });
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/s;
const HOST_PORT = /^(\[[0-9a-zA-Z:.%]*\]|[^:\s]*)(?::(\d*))?$/;

/**
 * The readable shape of a value: `postgresql://…@:20000/…` keeps exactly what 045 showed
 * (an empty host stays visibly empty), anything else becomes `<N chars>`.
 * As in WHATWG URL parsing, the authority ends at the first `/`, `?` or `#`, and userinfo runs to
 * its last `@`, so a password holding `@` stays hidden.
 */
export function shapeOf(raw: string): string {
  const url = SCHEME.exec(raw);
  if (url) {
    const [, scheme, rest] = url as unknown as [string, string, string];
    const end = rest.search(/[/?#]/);
    const authority = end < 0 ? rest : rest.slice(0, end);
    const tail = end < 0 ? '' : rest.slice(end);
    const at = authority.lastIndexOf('@');
    const hostPort = HOST_PORT.exec(at < 0 ? authority : authority.slice(at + 1));
    // An `@` only after the authority may be a password holding `/`: then nothing is shown.
    if (hostPort && !(at < 0 && tail.includes('@'))) {
      const [, host, port] = hostPort;
      return (
        `${scheme}://` +
        (at >= 0 ? '…@' : '') +
        (host ?? '') +
        (port !== undefined ? `:${port}` : '') +
        (tail === '' ? '' : tail === '/' ? '/' : '/…')
      );
    }
  }
  return `<${[...raw].length} chars>`;
}
