import type { PostableAlert } from '../report/alerts.js';

/** How an Alertmanager is reached: its base URL (never with credentials in it) and how to authenticate. */
export interface AlertmanagerTarget {
  /** The API's base URL; it holds no user or password (alert/target.ts refuses them there). */
  url: URL;
  auth?: { kind: 'basic'; username: string; password: string } | { kind: 'bearer'; token: string };
  /** The whole exchange (connect, send, answer read) ends by then. */
  timeoutMs: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * The most of Alertmanager's answer that is read. Its answer to a post is empty (or a short error);
 * past this the reply is not Alertmanager's and is not read further (a 4 GB answer was once buffered whole).
 */
export const MAX_REPLY_BYTES = 64 * 1024;

/** A URL as messages show it: credentials, should it carry any, as `***`. */
export function shownUrl(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.username = '***';
  copy.password = '';
  return copy.href;
}

/** `text` with every credential of `target` replaced by `***`, wherever it might have slipped in. */
export function redact(text: string, target: AlertmanagerTarget): string {
  const secrets = !target.auth
    ? []
    : target.auth.kind === 'basic'
      ? [target.auth.password, Buffer.from(`${target.auth.username}:${target.auth.password}`).toString('base64')]
      : [target.auth.token];
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join('***');
  return out;
}

export class AlertDeliveryError extends Error {
  override readonly name = 'AlertDeliveryError';
}

/**
 * Posts alerts to Alertmanager's v2 API. Throws an AlertDeliveryError, one line saying what failed,
 * never the alerts' text nor a credential. A redirect is not followed (fetch would turn a 301/302 POST
 * into a GET and lose every alert, or re-send a 307 POST, credentials and all, to another origin): it is
 * an error naming where it pointed. The answer is read up to MAX_REPLY_BYTES, and the whole exchange
 * ends within `timeoutMs`.
 */
export async function postAlerts(target: AlertmanagerTarget | string, alerts: readonly PostableAlert[]): Promise<void> {
  const to = typeof target === 'string' ? { url: new URL(target), timeoutMs: DEFAULT_TIMEOUT_MS } : target;
  try {
    await post(to, alerts);
  } catch (err) {
    const message =
      err instanceof AlertDeliveryError ? err.message : `Alertmanager at ${to.url.origin}: ${(err as Error).message}`;
    throw new AlertDeliveryError(redact(message, to));
  }
}

async function post(target: AlertmanagerTarget, alerts: readonly PostableAlert[]): Promise<void> {
  const base = target.url.href.endsWith('/') ? target.url.href : `${target.url.href}/`;
  const url = new URL('api/v2/alerts', base);
  const at = `Alertmanager at ${url.origin}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target.auth?.kind === 'basic')
    headers['authorization'] =
      `Basic ${Buffer.from(`${target.auth.username}:${target.auth.password}`).toString('base64')}`;
  if (target.auth?.kind === 'bearer') headers['authorization'] = `Bearer ${target.auth.token}`;
  const signal = AbortSignal.timeout(target.timeoutMs);
  const timedOut = (): AlertDeliveryError =>
    new AlertDeliveryError(
      `${at} did not answer within ${target.timeoutMs / 1000} s; the alerts may not have been taken`,
    );
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(alerts), signal, redirect: 'manual' });
  } catch (err) {
    if (signal.aborted) throw timedOut();
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new AlertDeliveryError(`cannot reach ${at}: ${why}`);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    let where = 'no Location';
    if (location !== null) {
      try {
        where = shownUrl(new URL(location, url));
      } catch {
        where = 'a Location that is not a URL';
      }
    }
    throw new AlertDeliveryError(
      `${at} answered the post with a redirect (HTTP ${response.status}) to ${where}; not followed, no alert sent: ` +
        `point --alertmanager at the address that takes the alerts`,
    );
  }
  try {
    await readBounded(response, at);
  } catch (err) {
    if (signal.aborted) throw timedOut();
    throw err;
  }
  if (!response.ok)
    throw new AlertDeliveryError(
      `${at} refused the alerts: HTTP ${response.status}` +
        (response.status === 401 || response.status === 403
          ? ' (check the credentials: alertmanager in the config, or $MESH_AUDIT_ALERTMANAGER_PASSWORD / _BEARER_TOKEN)'
          : ''),
    );
}

/** Reads and drops the answer, refusing one larger than MAX_REPLY_BYTES (declared or sent). */
async function readBounded(response: Response, at: string): Promise<void> {
  const tooLarge = (): AlertDeliveryError =>
    new AlertDeliveryError(
      `${at} answered with more than ${MAX_REPLY_BYTES / 1024} KiB (HTTP ${response.status}); not read further, and ` +
        `the alerts are not known to be taken: is this an Alertmanager?`,
    );
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_REPLY_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let read = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return;
    read += chunk.value.byteLength;
    if (read > MAX_REPLY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
  }
}
