/*
 * What a run has delivered so far, for the one line a run stopped by SIGINT/SIGTERM prints
 * (cli/signals.ts): which outputs were published before the signal, and which were not, so that an
 * operator knows whether the reports stand and whether Alertmanager heard of this run.
 */

type State = 'delivered' | 'under way' | 'not delivered';
const outputs = new Map<string, State>();

/** `what` (`the reports in reports/ (run 000042)`) is published or sent. */
export const delivered = (what: string): void => void outputs.set(what, 'delivered');
/** `what` is being sent and has no answer yet (a post to Alertmanager). */
export const underWay = (what: string): void => void outputs.set(what, 'under way');
/** `what` is to be delivered by this run, or was tried and failed. */
export const notDelivered = (what: string): void => void outputs.set(what, 'not delivered');

/**
 * `nothing published` when nothing was; else `published: A, B; not sent: C (under way, no answer)`.
 * Alerts counted as under way were not confirmed: Alertmanager may or may not have them.
 */
export function describeDeliveries(): string {
  const named = (state: State) => [...outputs].filter(([, s]) => s === state).map(([what]) => what);
  const done = named('delivered');
  const pending = named('under way').map((w) => `${w} (under way, not answered)`);
  const failed = named('not delivered');
  if (done.length === 0 && pending.length === 0)
    return failed.length > 0 ? `nothing published; not delivered: ${failed.join(', ')}` : 'nothing published';
  const notDone = [...pending, ...failed];
  const published = `published: ${done.length > 0 ? done.join(', ') : 'nothing'}`;
  return notDone.length > 0 ? `${published}; not delivered: ${notDone.join(', ')}` : published;
}
