import { removePendingSync } from '../write/pending.js';
import { TOOL_NAME } from '../version.js';

/**
 * SIGINT and SIGTERM stop a run cleanly: what it had half-written (temp files, an unpublished run
 * folder) is removed, one line says so on stderr, and the exit code is 128 + the signal's number
 * (130, 143), as a shell reports it. The output folder's lock goes with the process. Nothing is
 * published by a stopped run: the previous reports stand.
 */
export function installSignalHandlers(stderr: (text: string) => void = (t) => void process.stderr.write(t)): void {
  const stop = (signal: 'SIGINT' | 'SIGTERM', code: number) => () => {
    const removed = removePendingSync();
    stderr(`${TOOL_NAME}: stopped by ${signal}; nothing published${removed.length > 0 ? `, ${removed.length} unfinished file(s) removed` : ''}\n`);
    process.exit(code);
  };
  process.once('SIGINT', stop('SIGINT', 130));
  process.once('SIGTERM', stop('SIGTERM', 143));
}
