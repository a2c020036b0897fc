/** Exit codes (README.md, Exit codes); they belong to the outcome, not to the command. */
export const ExitCode = {
  Ok: 0,
  Findings: 1,
  Usage: 2,
  Incomplete: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The one error class of mesh-audit: a message meant for a person, and the exit code it leads to.
 * Never carries a raw value from the host (HTTP client errors, for one, can hold response bodies).
 */
export class MeshAuditError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = ExitCode.Usage) {
    super(message);
    this.name = 'MeshAuditError';
    this.exitCode = exitCode;
  }
}
