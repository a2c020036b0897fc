import { ExitCode } from '../errors.js';
import type { Severity } from '../policy/types.js';
import { allNotifications, standingFindings, type Report } from '../report/report.js';
import { exitCodeOf, type FailOn } from '../settings/outcome.js';
import { shown } from '../shown.js';

/*
 * What `mesh-audit serve` answers on /v1/status and /healthz, and what `mesh-audit status` prints: a pure
 * function of the current report and of what the resident process knows is stale. The state reads exactly as
 * the exit code of `scan` on the same report would (src/settings/outcome.ts): a host agent's heartbeat that
 * calls `status` gets 0, 1 or 3 as the nightly job would have.
 */

/** `starting`: the first read is not done; `incomplete`: something was not read, or the answer may be stale. */
export type ServeState = 'starting' | 'clean' | 'findings' | 'incomplete';

export interface ServeStatus {
  state: ServeState;
  /** The host the answer is about (as its report names it); null before the first read. */
  host: string | null;
  /** Open findings (waived ones not counted; those carried forward unchecked counted), by severity. */
  counts: Record<Severity, number>;
  /** When the state last changed (ISO 8601). */
  since: string;
  /** When the last whole read ended (nothing taken from an earlier read; ISO 8601); null before the first. */
  lastFullRead: string | null;
  /** When the last read ended, whole or of what changed only (ISO 8601); null before the first. */
  lastRead: string | null;
  /** What is not checked now: why the answer may be stale, then each thing the report could not read. */
  notChecked: string[];
}

/** The status as `/v1/status` sends it: the object, and its JSON body (made once per change of what it says). */
export interface StatusAnswer {
  status: ServeStatus;
  body: string;
}

export const statusBody = (status: ServeStatus): string => `${JSON.stringify(status, null, 2)}\n`;

/** What the resident process holds: its current report, and why that report may no longer be current. */
export interface ServeView {
  /** The report of the last evaluation; null while the first read runs. */
  report: Report | null;
  lastFullRead: Date | null;
  lastRead?: Date | null;
  /** Why the answer cannot be trusted as current (the events stream cut, a watch lost…), each named. */
  stale: readonly string[];
}

export function stateOf(view: ServeView, failOn: FailOn): ServeState {
  if (view.report === null) return 'starting';
  if (view.stale.length > 0) return 'incomplete';
  const code = exitCodeOf(view.report, failOn);
  return code === ExitCode.Incomplete ? 'incomplete' : code === ExitCode.Findings ? 'findings' : 'clean';
}

function countsOf(report: Report | null): Record<Severity, number> {
  const counts: Record<Severity, number> = { error: 0, warning: 0, note: 0 };
  for (const f of report === null ? [] : standingFindings(report)) if (f.suppressed === undefined) counts[f.severity]++;
  return counts;
}

/** The status; `since` is kept by the caller (sinceOf) so that it moves only when the state does. */
export function statusOf(view: ServeView, failOn: FailOn, since: Date): ServeStatus {
  const unread =
    view.report === null
      ? ['the first read of the host has not ended']
      : allNotifications(view.report)
          .filter((n) => n.level === 'error')
          .map((n) => n.message);
  return {
    state: stateOf(view, failOn),
    host: view.report?.evaluations[0]?.host ?? null,
    counts: countsOf(view.report),
    since: since.toISOString(),
    lastFullRead: view.lastFullRead?.toISOString() ?? null,
    lastRead: (view.lastRead ?? view.lastFullRead)?.toISOString() ?? null,
    notChecked: [...view.stale, ...unread],
  };
}

/** When the state began: the previous time while it holds, now when it changed. */
export const sinceOf = (previous: { state: ServeState; since: Date } | null, state: ServeState, now: Date): Date =>
  previous !== null && previous.state === state ? previous.since : now;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The one line `mesh-audit status` prints, as a person reads it: the messages come from the host, so each goes
 * through src/shown.ts; at most three are named, the rest counted.
 */
export function statusLine(status: ServeStatus, host: string): string {
  const c = status.counts;
  const counts = `${plural(c.error, 'error')}, ${plural(c.warning, 'warning')}, ${plural(c.note, 'note')}`;
  const read = status.lastFullRead === null ? 'no full read yet' : `last full read ${status.lastFullRead}`;
  const head = `${shown(host)}: ${status.state.toUpperCase()} since ${status.since}: ${counts} open; ${read}`;
  if (status.notChecked.length === 0) return head;
  const named = status.notChecked.slice(0, 3).map((m) => shown(m));
  const more = status.notChecked.length > 3 ? `; and ${status.notChecked.length - 3} more` : '';
  return `${head}\n  not checked: ${named.join('; ')}${more}`;
}

/** The exit code `status` gives: the one `scan` gives on the same report (a state not yet known is not clean). */
export const exitCodeOfState = (state: ServeState): ExitCode =>
  state === 'clean' ? ExitCode.Ok : state === 'findings' ? ExitCode.Findings : ExitCode.Incomplete;
