import type { Report } from '../report/report.js';
import type { FailOn } from '../settings/outcome.js';
import {
  sinceOf,
  stateOf,
  statusBody,
  statusOf,
  type ServeState,
  type ServeStatus,
  type ServeView,
  type StatusAnswer,
} from './status.js';

/*
 * The resident loop of `mesh-audit serve`: it holds the current report and keeps it current. What tells it that
 * something changed (the engine's events, file watches, the listeners' poll, the resync timer) calls `changed`;
 * what tells it that it can no longer know (the events stream cut, a watch lost) calls `lost`, which makes the
 * answer `incomplete` at once — never a stale `clean` — until a read that began after the loss ends.
 * Reads never overlap: a change during a read asks for one more read after it, however many changes came.
 */

/** One read of the host, evaluated and triaged: the report `scan` would write now. */
export type ReadHost = () => Promise<Report>;

export interface ResidentOptions {
  read: ReadHost;
  failOn: FailOn;
  now: () => Date;
  /** Changes closer together than this are read once (ms). */
  settleMs: number;
  /**
   * The longest a change waits for its read (ms), however many changes follow it or hold it back (`changed`'s
   * `notBefore`): changes that never stop coming do not keep the answer from being read. None: no bound.
   */
  maxSettleMs?: number;
  /** Told each report as it replaces the one before (alerting, the textfile, the history). */
  onReport?: (report: Report, previous: Report | null) => void | Promise<void>;
  /** Whether the read that just ended read everything anew (none: every read does). */
  whole?: () => boolean;
  /** Told what went wrong in a read that threw (the answer stays incomplete until a read ends well). */
  onReadFailure?: (error: unknown) => void;
  /**
   * A change not answered by a read within this long (ms) makes the answer incomplete until one is: a read that
   * hangs (a source that never answers) must not leave the last `clean` standing. None: no bound.
   */
  overdueMs?: number;
}

/** What a status is made of (the report by identity: a read gives a new one). */
interface AnswerInputs {
  report: Report | null;
  failOn: FailOn;
  reads: string;
  stale: string;
}

const readsKey = (view: ServeView): string => `${view.lastFullRead?.getTime()} ${view.lastRead?.getTime()}`;

const sameInputs = (a: AnswerInputs, b: AnswerInputs): boolean =>
  a.report === b.report && a.failOn === b.failOn && a.reads === b.reads && a.stale === b.stale;

export class Resident {
  private report: Report | null = null;
  private lastFullRead: Date | null = null;
  private lastRead: Date | null = null;
  /** Causes of staleness, by name, each with the time it was met. */
  private readonly stale = new Map<string, Date>();
  /** Causes that still hold (a source still down): a read does not clear them until `recovered`. */
  private readonly pending = new Set<string>();
  private held: { state: ServeState; since: Date } | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  /** When the first change the timer waits to read was met (null: no read is waited for). */
  private waitingSince: number | null = null;
  private stopped = false;
  /** The first change no read begun after it has answered yet; the first change met during the read under way. */
  private unanswered: Date | null = null;
  private unansweredDuringRead: Date | null = null;

  private failOn: FailOn;
  /**
   * The last status made, and what it was made of: a request asks again what nothing changed since (every finding and
   * notification walked, then serialized) only when the report, --fail-on, the reads' times or a cause differs.
   */
  private answered: { of: AnswerInputs; answer: StatusAnswer } | null = null;

  constructor(private readonly options: ResidentOptions) {
    this.failOn = options.failOn;
  }

  view(): ServeView {
    const overdue = this.overdue();
    return {
      report: this.report,
      lastFullRead: this.lastFullRead,
      lastRead: this.lastRead,
      stale: [...this.stale.keys(), ...(overdue === null ? [] : [overdue])],
    };
  }

  /** Why the answer is behind: a change older than `overdueMs` that no read has answered (null: none). */
  private overdue(): string | null {
    const bound = this.options.overdueMs;
    if (bound === undefined || this.unanswered === null || this.report === null) return null;
    const waited = this.options.now().getTime() - this.unanswered.getTime();
    if (waited <= bound) return null;
    return (
      `a change seen at ${this.unanswered.toISOString()} has not been read after ${Math.round(waited / 1000)} s ` +
      '(a read is stuck or failing): the answer is older than it'
    );
  }

  status(): ServeStatus {
    return this.statusAnswer().status;
  }

  /**
   * The status and its body for /v1/status. Made again only when what it says changed: the same inputs give the same
   * state, so `since` holds too, and the answer is the one made last (this is the only place `held` moves).
   */
  statusAnswer(): StatusAnswer {
    const view = this.view();
    const of = { report: view.report, failOn: this.failOn, reads: readsKey(view), stale: JSON.stringify(view.stale) };
    if (this.answered !== null && sameInputs(this.answered.of, of)) return this.answered.answer;
    const state = stateOf(view, this.failOn);
    const since = sinceOf(this.held, state, this.options.now());
    this.held = { state, since };
    const status = statusOf(view, this.failOn, since);
    this.answered = { of, answer: { status, body: statusBody(status) } };
    return this.answered.answer;
  }

  current(): Report | null {
    return this.report;
  }

  /** A new --fail-on (the config read again): the state reads by it from now on. */
  setFailOn(failOn: FailOn): void {
    this.failOn = failOn;
  }

  /**
   * Something changed: read again once the changes settle, and not before `notBefore` (ms since the epoch: a container
   * that went down may be coming straight back, src/serve/coming-back.ts), within `maxSettleMs` of the first change
   * waiting.
   */
  changed(notBefore: number | null = null): void {
    if (this.stopped) return;
    const now = this.options.now();
    if (this.reading !== null) this.unansweredDuringRead ??= now;
    else this.unanswered ??= now;
    const nowMs = now.getTime();
    this.waitingSince ??= nowMs;
    let wait = Math.max(this.options.settleMs, (notBefore ?? 0) - nowMs);
    const bound = this.options.maxSettleMs;
    if (bound !== undefined) wait = Math.min(wait, Math.max(0, this.waitingSince + bound - nowMs));
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.waitingSince = null;
      void this.readNow();
    }, wait);
  }

  /** Knowledge lost (`cause` names it): incomplete now, and a full read starts. */
  lost(cause: string): void {
    if (this.stopped) return;
    if (!this.stale.has(cause)) this.stale.set(cause, this.options.now());
    this.status();
    this.changed();
  }

  /** A cause of staleness is over (the stream is back): the next read that ends clears it. */
  private clearedBy(startedAt: Date): void {
    for (const [cause, at] of this.stale) if (at <= startedAt && !this.pending.has(cause)) this.stale.delete(cause);
  }

  /** A cause holds until `recovered(cause)`: reads in between do not clear it. */
  holding(cause: string): void {
    this.pending.add(cause);
    this.lost(cause);
  }

  /** A fault of what the answer is given to (alerts not delivered): incomplete until `unflag`, no read asked. */
  flag(cause: string): void {
    this.pending.add(cause);
    if (!this.stale.has(cause)) this.stale.set(cause, this.options.now());
    this.status();
  }

  unflag(cause: string): void {
    this.pending.delete(cause);
    this.stale.delete(cause);
    this.status();
  }

  recovered(cause: string): void {
    this.pending.delete(cause);
    this.changed();
  }

  /** Reads now (or once more after the read under way); resolves when the host has been read. */
  readNow(): Promise<void> {
    if (this.reading !== null) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.readOnce().finally(() => {
      this.reading = null;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.readNow();
      }
    });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    const startedAt = this.options.now();
    try {
      const report = await this.options.read();
      const previous = this.report;
      this.report = report;
      this.lastRead = this.options.now();
      // Every change met before this read began is answered by it; those met during it wait for the next.
      this.unanswered = this.unansweredDuringRead;
      this.unansweredDuringRead = null;
      if (this.options.whole?.() ?? true) this.lastFullRead = this.lastRead;
      this.clearedBy(startedAt);
      this.status();
      await this.options.onReport?.(report, previous);
    } catch (e) {
      this.unanswered ??= this.unansweredDuringRead;
      this.unansweredDuringRead = null;
      this.options.onReadFailure?.(e);
      this.stale.set('the last read of the host failed', startedAt);
      this.status();
    }
  }

  /** Waits for any read under way; no read starts after. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.reading;
  }
}
