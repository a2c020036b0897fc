/**
 * Whether text on this stream may carry colour: a terminal, no NO_COLOR, not TERM=dumb. In a module of
 * its own so that the entry point does not load the report writers (start-up time, BENCHMARKS.md).
 */
export function useColor(stream: NodeJS.WriteStream): boolean {
  // Node types isTTY as boolean; it is undefined when not a terminal.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare
  return stream.isTTY === true && (process.env['NO_COLOR'] ?? '') === '' && process.env['TERM'] !== 'dumb';
}
