/** What commands need from the outside world, passed in so tests can run the CLI in-process. */
export interface CommandContext {
  now(): Date;
  stdout(text: string): void;
  /** Errors, progress and file notes. */
  stderr(text: string): void;
  /** Whether stdout is a terminal that takes colour. */
  color: boolean;
  /** Whether a person watches stderr (progress is shown only then). */
  interactive: boolean;
}

export const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)];
