import type { PostableAlert } from '../report/alerts.js';

/**
 * Posts alerts to Alertmanager's v2 API. Throws one line saying what failed; the alerts' text is
 * never part of the error.
 */
export async function postAlerts(baseUrl: string, alerts: readonly PostableAlert[], timeoutMs = 10_000): Promise<void> {
  const url = new URL('api/v2/alerts', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new Error(`cannot reach Alertmanager at ${url.origin}: ${why}`);
  }
  await response.arrayBuffer().catch(() => undefined);
  if (!response.ok) throw new Error(`Alertmanager at ${url.origin} refused the alerts: HTTP ${response.status}`);
}
