/** What commands need from the outside world, passed in so tests can run the CLI in-process. */
export interface CommandContext {
  now(): Date;
  /** Progress and file notes, on stderr. */
  info(message: string): void;
  stdout(text: string): void;
}

export const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)];
