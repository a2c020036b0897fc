/**
 * Helpers of the terminal views only (text.ts, premigration/text.ts): JSON, SARIF and every file keep
 * each value whole.
 */

/**
 * A 64-hex digest (sha256, a container id) in a line a person reads: its first 12 hex digits, as `docker ps` shows ids.
 */
const LONG_HEX = /(?<![0-9a-f])([0-9a-f]{12})[0-9a-f]{52}(?![0-9a-f])/g;

export const shortenDigests = (s: string): string => s.replace(LONG_HEX, '$1…');
