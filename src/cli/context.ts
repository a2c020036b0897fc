/** What commands need from the outside world, passed in so tests can run the CLI in-process. */
export interface CommandContext {
  now(): Date;
  stdout(text: string): void;
  /**
   * Why stdout did not take everything written to it (`stdout: cannot write: ENOSPC …`), said once;
   * undefined when it did, or when stdout is not a real one (tests). A run that had one exits 3.
   */
  stdoutFailure?(): string | undefined;
  /** Errors, progress and file notes. */
  stderr(text: string): void;
  /** Whether stdout is a terminal that takes colour (and --no-color was not given). */
  color: boolean;
  /** Whether a person watches stderr (progress is shown only then). */
  interactive: boolean;
  /** --quiet: only findings and problems; nothing on stderr for a clean, complete run. */
  quiet?: boolean;
  /** --verbose: what was read, and how long each step took. */
  verbose?: boolean;
  /** Env of the run (config discovery reads it); the process's when absent. */
  env?: NodeJS.ProcessEnv;
}

/** A note worth a line on stderr (`wrote …`, `kept snapshot …`): not under --quiet. */
export const note = (ctx: CommandContext, text: string): void => {
  if (!ctx.quiet) ctx.stderr(text.endsWith('\n') ? text : `${text}\n`);
};

/** A detail for --verbose only: what was read, timings. */
export const detail = (ctx: CommandContext, text: string): void => {
  if (ctx.verbose && !ctx.quiet) ctx.stderr(`mesh-audit: ${text}\n`);
};

export const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)];
