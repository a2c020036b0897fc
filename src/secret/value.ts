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
  (raw: string): SafeValue;
}

export function createSafeValueMaker(key: Buffer = randomBytes(32)): SafeValueMaker {
  return (raw: string): SafeValue => ({
    digest: 'hmac-sha256:' + createHmac('sha256', key).update(raw, 'utf8').digest('hex'),
    shape: shapeOf(raw),
  });
}

// scheme://[userinfo@]host[:port][/rest] — userinfo, path and query are hidden, host and port are kept.
const URL_PATTERN = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(?:([^@/?#]*)@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?([/?#].*)?$/s;

/**
 * The readable shape of a value: `postgresql://…@:20000/…` keeps exactly what 045 showed
 * (an empty host stays visibly empty), anything else becomes `<N chars>`.
 */
export function shapeOf(raw: string): string {
  const match = URL_PATTERN.exec(raw);
  if (match) {
    const [, scheme, userinfo, host, port, rest] = match;
    return (
      `${scheme}://` +
      (userinfo !== undefined ? '…@' : '') +
      (host ?? '') +
      (port !== undefined ? `:${port}` : '') +
      (rest !== undefined && rest.length > 0 ? (rest === '/' ? '/' : '/…') : '')
    );
  }
  return `<${[...raw].length} chars>`;
}
