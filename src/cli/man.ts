import type { CAC } from 'cac';
import { ExitCode } from '../errors.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CommandContext } from './context.js';
import { FLAG_RULE, specsOf } from './cli-spec.js';
import { EXIT_CODES, GENERAL_EXIT_CODES } from './exit-codes.js';
import { ENV_SETTINGS } from '../settings/registry.js';

/** The page's date is the version's, not today's: the page changes only when the commands do. */
export const MAN_PAGE_DATE = '2026-11-30';

/** roff text: backslashes doubled, a leading dot or quote kept from being read as a request, hyphens as \-. */
const roff = (t: string): string =>
  t
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1');

/** Exit codes as one sentence: `0 clean; 1 findings…`. */
const codes = (lines: readonly string[]): string => lines.map((l) => l.replace(/^(\d) +/, '$1 ')).join('; ');

/**
 * The man page, from the same cac definitions `--help` prints (commands, their options and examples):
 * written by `npm run man` into man/mesh-audit.1, checked by a test to agree with the commands.
 */
export function manPage(cli: CAC, date: string): string {
  const specs = specsOf(cli);
  const option = (rawName: string, description: string) => `.TP\n.B ${roff(rawName)}\n${roff(description)}`;
  const lines: string[] = [
    `.TH ${TOOL_NAME.toUpperCase()} 1 "${date}" "${TOOL_NAME} ${TOOL_VERSION}" "User Commands"`,
    '.SH NAME',
    `${TOOL_NAME} \\- read\\-only policy and audit scanner for mesh\\-managed hosts`,
    '.SH SYNOPSIS',
    ...specs.commands.map(
      (c) => `.B ${TOOL_NAME}\n${roff(cli.commands.find((x) => x.name === c.name)!.rawName)}\n[\\fIoptions\\fR]\n.br`,
    ),
    '.SH DESCRIPTION',
    roff(
      `${TOOL_NAME} snapshots a host (Docker containers, their env, mounts and listening sockets, the composed files ` +
        `and the host agent's ledger), evaluates rules written as data, and writes SARIF, JSON, JSON Lines, ` +
        `Prometheus and text reports. It never changes anything on the host.`,
    ),
    '.PP',
    roff(FLAG_RULE),
    '.SH COMMANDS',
  ];
  for (const c of specs.commands) {
    const command = cli.commands.find((x) => x.name === c.name)!;
    lines.push(`.SS ${roff(command.rawName)}`, roff(c.description));
    for (const o of command.options.filter((x) => !['help', 'version'].includes(x.name))) {
      lines.push(
        option(
          o.rawName,
          o.description + (o.config.default !== undefined ? ` (default: ${String(o.config.default)})` : ''),
        ),
      );
    }
    const examples = command.examples.map((e) => (typeof e === 'function' ? e(TOOL_NAME) : e));
    if (examples.length > 0) lines.push('.PP\nExamples:', ...examples.map((e) => `.PP\n.RS\n${roff(e)}\n.RE`));
  }
  lines.push('.SH GLOBAL OPTIONS');
  for (const o of cli.globalCommand.options) lines.push(option(o.rawName, o.description));
  lines.push(
    '.SH ENVIRONMENT',
    '.TP\n.B MESH_AUDIT_CONFIG\nThe config file to read (else /etc/mesh\\-audit/config.yaml when present).',
    `.TP\n.B ${ENV_SETTINGS.map((e) => e.env.variable).join(', ')}\nSettings below flags and above the config file ` +
      '(managed roots separated by colons, scope selectors by spaces; lists add to those of the config file). ' +
      '\\fBmesh\\-audit config show\\fR tells where each setting came from.',
    '.TP\n.B NO_COLOR\nNo colour in the text report.',
    '.SH FILES',
    '.TP\n.I /etc/mesh\\-audit/config.yaml\nThe system config, read when present.',
    '.TP\n.I /var/lib/mesh\\-audit\nReports and history of runs as root (\\fIreports\\fR in the current folder ' +
      'otherwise).',
    '.TP\n.I .mesh\\-auditignore\nSelectors left out of scope, one a line, optionally \\fBuntil YYYY\\-MM\\-DD\\fR.',
    '.SH EXIT STATUS',
    roff(codes(GENERAL_EXIT_CODES)) + '.',
    // One paragraph per command (not a .SS: the sections of COMMANDS are found by their .SS).
    ...specs.commands.map((c) => `.TP\n.B ${roff(c.name)}\n${roff(codes(EXIT_CODES[c.name] ?? GENERAL_EXIT_CODES))}.`),
    '',
  );
  return lines.join('\n');
}

/** `mesh-audit man`: the man page, from the program itself (the single executable has no man/ folder beside it). */
export function registerMan(cli: CAC, ctx: CommandContext, whole: () => Promise<CAC>): void {
  cli
    .command('man', 'The manual page (roff), as installed in man1: read it with `mesh-audit man | man -l -`')
    .example('mesh-audit man | man -l -')
    .action(async () => {
      ctx.stdout(manPage(await whole(), MAN_PAGE_DATE));
      return ExitCode.Ok;
    });
}
