/*
 * What each command's exit code means (README.md, "Exit codes"; docs/premigration.md; docs/serve.md), as each
 * command's --help and the man page's EXIT STATUS list them.
 */

const USAGE = '2  bad usage, config or input: nothing read, nothing written';
const AUDIT = [
  '0  complete, and nothing at or above --fail-on (with --fail-on-new: nothing new)',
  '1  findings at or above --fail-on (with --fail-on-new: new ones)',
  '2  bad usage, config, policy, waivers, baseline or snapshot: nothing read, nothing written, no run number taken',
  '3  incomplete: something not read or a rule failed on a subject (the reports say what), or an output not ' +
    'delivered whole',
];

/** By command: one line per exit code, `CODE  meaning`. */
export const EXIT_CODES: Readonly<Record<string, readonly string[]>> = {
  scan: AUDIT,
  evaluate: AUDIT,
  snapshot: [
    '0  written, the host read whole',
    USAGE,
    '3  written, but something could not be read (the snapshot says what); or not written',
  ],
  premigrate: [
    '0  ready',
    '1  not ready (the verdict names what blocks)',
    USAGE,
    '3  the node could not be read whole (no verdict), or an output not delivered whole',
  ],
  diff: [
    '0  compared (with --exit-code: nothing new, updated or absent)',
    '1  with --exit-code: a finding new, updated or absent',
    '2  bad usage, or a report missing or not a mesh-audit JSON report',
  ],
  rules: ['0  done', '1  test: a case failed; lint: warnings', '2  bad usage, or a pack refused (it says where)'],
  config: ['0  shown', '2  a bad flag, config value or environment variable'],
  serve: ['0  stopped by SIGTERM or SIGINT', '2  bad usage, config or pack at start'],
  status: [
    "0  clean: complete, nothing open at or above serve's --fail-on",
    "1  findings: something open at or above serve's --fail-on",
    '2  bad usage',
    '3  incomplete or stale, or no serve answered',
  ],
  completion: ['0  the script printed', '2  bad usage (an unknown shell)'],
  man: ['0  the page printed', '2  bad usage'],
};

/** What the exit codes mean whatever the command (the top-level --help). */
export const GENERAL_EXIT_CODES = [
  '0  clean (complete, nothing at or above --fail-on)',
  '1  findings at or above --fail-on (premigrate: not ready; rules test/lint: failed)',
  '2  bad usage, config or input: nothing read, nothing written',
  '3  incomplete: something not read or checked, or an output not delivered',
];

/** The exit codes of a command (the general ones for none), as a help section's lines. */
export const exitCodesOf = (command: string | undefined): readonly string[] =>
  (command !== undefined ? EXIT_CODES[command] : undefined) ?? GENERAL_EXIT_CODES;
