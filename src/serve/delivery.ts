import { alertsOf, type PostableAlert } from '../report/alerts.js';
import { allFindings, type Report } from '../report/report.js';

/*
 * Alerts as the answer changes (`serve --alertmanager`): the nightly job's alerts (src/report/alerts.ts: the same
 * labels, annotations, startsAt from firstSeen, endsAt `ttlHours` ahead) posted when the findings change, and again
 * at each resync to keep them firing. A finding of the previous answer that is gone from a complete answer is
 * resolved (endsAt now); from an incomplete one it is not: what was not read is not gone.
 */

/** What a change of the findings is, for alerting: each finding's fingerprint, severity and whether it is waived. */
const keyOf = (report: Report): string =>
  allFindings(report)
    .map((f) => `${f.fingerprint} ${f.severity} ${f.suppressed === undefined ? 'open' : 'waived'}`)
    .sort()
    .join('\n') + (report.evaluations.every((e) => e.complete) ? '' : '\nincomplete');

/** The alerts to post now, or null when nothing changed and no renewal is due. */
export function alertsToPost(
  report: Report,
  previous: { report: Report; postedAt: number } | null,
  options: { ttlHours: number; now: number; renewEveryMs: number },
): PostableAlert[] | null {
  const due = previous === null || options.now - previous.postedAt >= options.renewEveryMs;
  if (!due && keyOf(previous.report) === keyOf(report)) return null;
  const complete = report.evaluations.every((e) => e.complete);
  const standing = new Set(allFindings(report).map((f) => f.fingerprint));
  const gone =
    previous === null || !complete
      ? []
      : allFindings(previous.report).filter((f) => !standing.has(f.fingerprint) && f.suppressed === undefined);
  const absent = [...(report.baseline?.absent ?? []), ...gone];
  const withGone: Report =
    gone.length === 0 ? report : { ...report, baseline: { ...(report.baseline ?? { source: 'serve' }), absent } };
  return alertsOf(withGone, { ttlHours: options.ttlHours });
}
