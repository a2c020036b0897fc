import { writeSync } from 'node:fs';
import { osErrorText } from '../write/os-error.js';

/**
 * stdout, written to the last byte or said not to be. Node's own process.stdout drops the rest of a
 * short write to a file (a report redirected onto a full disk was cut at 32,768 bytes with nothing said)
 * and only emits an event for a failed one; here each write is `write(2)` in a loop until every byte is
 * out, and the first failure is kept for the run to report (exit 3). Nothing more is written after a
 * failure: the reader already has a report with a hole in it. A closed pipe (EPIPE: `… | head -1`) is
 * the reader going away, not a failure: the rest is dropped quietly (docs/command-line.md, "Errors that help").
 */
export interface CheckedStdout {
  write(text: string): void;
  /** The failure to report (`stdout: cannot write: ENOSPC …`), once; undefined when all went out. */
  takeFailure(): string | undefined;
  /** A failure of a write made elsewhere (process.stdout's 'error' event): kept like one of ours. */
  fail(error: unknown): void;
}

/** How long to wait when a non-blocking stdout is full (a pipe whose reader is slow) before trying again. */
const FULL_PIPE_WAIT_MS = 5;
const waitCell = new Int32Array(new SharedArrayBuffer(4));

export function checkedStdout(fd = 1): CheckedStdout {
  let closed = false;
  /** What went wrong (`ENOSPC (no space left on device)`); the byte counts are added when it is reported. */
  let failure: string | undefined;
  let reported = false;
  let offered = 0;
  let written = 0;
  const fail = (error: unknown): void => {
    if ((error as NodeJS.ErrnoException | null)?.code === 'EPIPE') closed = true;
    else failure ??= osErrorText(error);
  };
  return {
    write(text) {
      const bytes = Buffer.from(text, 'utf8');
      offered += bytes.length;
      if (closed || failure !== undefined) return;
      let at = 0;
      while (at < bytes.length) {
        try {
          const n = writeSync(fd, bytes, at, bytes.length - at);
          if (n <= 0) {
            failure = 'the write took no bytes';
            return;
          }
          at += n;
          written += n;
        } catch (err) {
          // A non-blocking stdout (Node makes a pipe's non-blocking once process.stdout is used) that is full.
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
            Atomics.wait(waitCell, 0, 0, FULL_PIPE_WAIT_MS);
            continue;
          }
          fail(err);
          return;
        }
      }
    },
    takeFailure() {
      if (failure === undefined || reported) return undefined;
      reported = true;
      return `stdout: cannot write: ${failure}; ${written} of ${offered} bytes written, the rest lost`;
    },
    fail,
  };
}
