import { ExitCode } from '../errors.js';
import { severityRank, type Severity } from '../policy/types.js';
import { allFindings, type Report } from '../report/report.js';

export type FailOn = Severity | 'none';
export const FAIL_ON_VALUES: readonly FailOn[] = ['error', 'warning', 'note', 'none'];

/**
 * Exit code of a finished run (README.md, Exit codes). An incomplete scan is never read as clean:
 * it exits 3 even when it found nothing, and even when it found something.
 */
export function exitCodeOf(report: Report, failOn: FailOn, options: { onlyNew?: boolean } = {}): ExitCode {
  if (!report.evaluations.every((e) => e.complete)) return ExitCode.Incomplete;
  if (failOn === 'none') return ExitCode.Ok;
  const threshold = severityRank(failOn);
  // A waived finding stays in the reports but does not fail the run; with --fail-on-new only new ones do.
  const counted = allFindings(report).filter(
    (f) => f.suppressed === undefined && (!options.onlyNew || f.state === undefined || f.state === 'new'),
  );
  return counted.some((f) => severityRank(f.severity) >= threshold) ? ExitCode.Findings : ExitCode.Ok;
}
