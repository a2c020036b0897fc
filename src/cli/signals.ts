import { removePendingSync } from '../write/pending.js';
import { TOOL_NAME } from '../version.js';
import { describeDeliveries } from './deliveries.js';

/**
 * SIGINT and SIGTERM stop a run cleanly: what it had half-written (temp files, an unpublished run
 * folder) is removed, one line says so on stderr, and the exit code is 128 + the signal's number
 * (130, 143), as a shell reports it. The output folder's lock goes with the process. What the run had
 * already published stays, and the line says what that was and what was not delivered (cli/deliveries.ts:
 * `stopped by SIGTERM; published: the reports in reports/ (run 000042); not delivered: the alerts to
 * Alertmanager at http://127.0.0.1:9093`); before that, `nothing published`, and the previous reports stand.
 */
export function installSignalHandlers(stderr: (text: string) => void = (t) => void process.stderr.write(t)): void {
  const stop = (signal: 'SIGINT' | 'SIGTERM', code: number) => () => {
    const removed = removePendingSync();
    stderr(
      `${TOOL_NAME}: stopped by ${signal}; ${describeDeliveries()}` +
        (removed.length > 0 ? `; ${removed.length} unfinished file(s) removed` : '') +
        '\n',
    );
    process.exit(code);
  };
  process.once('SIGINT', stop('SIGINT', 130));
  process.once('SIGTERM', stop('SIGTERM', 143));
}
