import { cac, type CAC } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { shownLines } from '../shown.js';
import { TOOL_NAME } from '../version.js';
import type { CommandContext } from './context.js';
import { useColor } from './color.js';
import { flagsOf, lastValueWins, switchesAsDeclared, valuesAsWritten } from './cli-spec.js';
import { addGlobalOptions, COMMAND_NAMES, COMMANDS, definedCli } from './commands.js';
import { didYouMean } from './choices.js';
import { checkedStdout } from './stdout.js';

export { installSignalHandlers } from './signals.js';

/**
 * The commands this argv needs registered: the one it names first; none for a lone --version;
 * every one otherwise (help, an unknown command, options before the command), exactly as before.
 */
function commandsFor(argv: readonly string[]): typeof COMMANDS {
  const args = argv.slice(2);
  if (args.some((a) => a === '--help' || a === '-h')) return COMMANDS;
  if (args.length > 0 && args.every((a) => a === '--version' || a === '-v')) return [];
  const named = COMMANDS.find((c) => c.names.includes(args[0] ?? ''));
  return named ? [named] : COMMANDS;
}

/**
 * stdout is written to the last byte (cli/stdout.ts): a short or failed write is named and the run exits
 * 3. A closed stdout (`mesh-audit rules list | head -1`) is not a failure of the run: what is left to
 * print is dropped, and the run ends with the exit code it had, without a stack trace.
 */
function defaultContext(): CommandContext {
  const stdout = checkedStdout();
  // What is printed through process.stdout (cac's help) fails the same way.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => stdout.fail(err));
  return {
    now: () => new Date(),
    stdout: (text) => stdout.write(text),
    stdoutFailure: () => stdout.takeFailure(),
    stderr: (text) => void process.stderr.write(text),
    color: useColor(process.stdout),
    // Node types isTTY as boolean; it is undefined when not a terminal.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare
    interactive: process.stderr.isTTY === true,
  };
}

/** The option parser takes a lone `-` for a flag; `--out -` (stdout) is meant as a value. */
function joinDashValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1] === '-') {
      out.push('--out=-');
      i++;
    } else out.push(argv[i]!);
  }
  return out;
}

/**
 * A short flag written as its long one (`-o` as `--output`), where every command that declares it means the same: cac
 * copies an alias's value over its long name's, so `-o a --output b` would keep `a` against the rule that the last
 * value wins (`lastValueWins`).
 */
function longFlags(argv: readonly string[], cli: CAC): string[] {
  const longOf = new Map<string, string | null>();
  for (const option of [...cli.globalCommand.options, ...cli.commands.flatMap((c) => c.options)]) {
    const flags = flagsOf(option.rawName);
    const [short, long] = [flags.find((f) => /^-\w$/.test(f)), flags.find((f) => f.startsWith('--'))];
    if (short === undefined || long === undefined) continue;
    longOf.set(short, longOf.has(short) && longOf.get(short) !== long ? null : long);
  }
  const end = argv.indexOf('--');
  return argv.map((a, i) => (end >= 0 && i >= end ? a : (longOf.get(a) ?? a)));
}

/**
 * The command line read by the commands cac defines: `--out -` as a value, short flags as their long ones, hyphenated
 * switches as switches, values as written, and each flag given twice by the one rule (`lastValueWins`). Returns the
 * arguments as read (for the unknown-flag check).
 */
export function parseArgs(cli: CAC, argv: string[]): string[] {
  const args = joinDashValues(argv);
  const every = [...cli.globalCommand.options, ...cli.commands.flatMap((c) => c.options)];
  const read = switchesAsDeclared(longFlags(args, cli), every);
  cli.parse(read, { run: false });
  const declared = [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])];
  lastValueWins(cli.options, declared);
  valuesAsWritten(cli.options, read, declared);
  return args;
}

/** The arguments before `--` (after it, everything is a value). */
const beforeDashDash = (args: readonly string[]): readonly string[] => {
  const end = args.indexOf('--');
  return end < 0 ? args : args.slice(0, end);
};

/**
 * Every option the user typed that the command does not know, echoed exactly as typed (cac would
 * answer `--failOn` for `--fail-on`), with the nearest known option when one is close.
 */
function checkOptions(cli: CAC, args: readonly string[]): void {
  const command = cli.matchedCommand;
  const known = [...(command?.options ?? []), ...cli.globalCommand.options].flatMap((o) => flagsOf(o.rawName));
  const where = command ? `${TOOL_NAME} ${command.name} --help` : `${TOOL_NAME} --help`;
  for (const arg of beforeDashDash(args)) {
    if (!arg.startsWith('-') || arg === '-' || /^-\d/.test(arg)) continue;
    const typed = arg.split('=')[0]!;
    // Bundled short flags (`-qh`) are each checked.
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- the regex admits ASCII letters only
    const flags = /^-[A-Za-z]{2,}$/.test(typed) ? [...typed.slice(1)].map((c) => `-${c}`) : [typed];
    for (const flag of flags) {
      if (known.includes(flag)) continue;
      const longs = known.filter((k) => k.startsWith('--'));
      throw new MeshAuditError(
        `unknown option \`${flag}\`${command ? ` for \`${command.name}\`` : ''}` +
          didYouMean(flag.replace(/^-+/, '--'), longs, (s) => `\`${s}\``) +
          ` (see \`${where}\`)`,
        ExitCode.Usage,
      );
    }
  }
}

/** --quiet, --verbose and --no-color shape the context every command gets. */
function shaped(ctx: CommandContext, args: readonly string[]): CommandContext {
  const given = beforeDashDash(args);
  const has = (...flags: string[]) =>
    given.some(
      (a) => flags.includes(a) || (/^-[A-Za-z]{2,}$/.test(a) && flags.some((f) => f.length === 2 && a.includes(f[1]!))),
    );
  const quiet = has('-q', '--quiet');
  const verbose = has('--verbose');
  if (quiet && verbose)
    throw new MeshAuditError('--quiet and --verbose ask for opposite things; choose one', ExitCode.Usage);
  return { ...ctx, quiet, verbose, color: ctx.color && !has('--no-color') };
}

/** Runs the CLI and returns the exit code; never throws, never prints a raw error object. */
export async function main(argv: string[], context?: CommandContext): Promise<number> {
  const base = context ?? defaultContext();
  const code = await run(argv, base);
  // Whatever the command, a report cut short on stdout is not a complete run.
  const failure = base.stdoutFailure?.();
  if (failure === undefined) return code;
  base.stderr(`${TOOL_NAME}: ${failure}\n`);
  return Math.max(code, ExitCode.Incomplete);
}

async function run(argv: string[], base: CommandContext): Promise<number> {
  const cli = cac(TOOL_NAME);
  let ctx: CommandContext;
  try {
    const shapedCtx = (ctx = shaped(base, argv.slice(2)));
    const whole = () => definedCli(shapedCtx);
    for (const register of await Promise.all(commandsFor(argv).map((c) => c.load()))) register(cli, ctx, whole);
  } catch (err) {
    if (err instanceof MeshAuditError) {
      base.stderr(`${TOOL_NAME}: ${shownLines(err.message)}\n`);
      return err.exitCode;
    }
    base.stderr(`${TOOL_NAME}: internal error: ${shownLines(err instanceof Error ? err.message : String(err))}\n`);
    return ExitCode.Incomplete;
  }
  addGlobalOptions(cli);
  try {
    const args = parseArgs(cli, argv);
    if (cli.options['help'] || cli.options['version']) return ExitCode.Ok;
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) {
        const name = String(cli.args[0]);
        throw new MeshAuditError(
          `unknown command '${name}'${didYouMean(name, COMMAND_NAMES)} (commands: ${COMMAND_NAMES.join(', ')}; see ` +
            `\`${TOOL_NAME} --help\`)`,
        );
      }
      checkOptions(cli, args.slice(2));
      cli.outputHelp();
      return ExitCode.Usage;
    }
    checkOptions(cli, args.slice(2));
    const code: unknown = await cli.runMatchedCommand();
    return typeof code === 'number' ? code : ExitCode.Ok;
  } catch (err) {
    if (err instanceof MeshAuditError) {
      ctx.stderr(`${TOOL_NAME}: ${shownLines(err.message)}\n`);
      return err.exitCode;
    }
    if (err instanceof Error && err.name === 'CACError') {
      const command = cli.matchedCommand?.name;
      ctx.stderr(`${TOOL_NAME}: ${err.message} (see \`${TOOL_NAME}${command ? ` ${command}` : ''} --help\`)\n`);
      return ExitCode.Usage;
    }
    // An unexpected failure: say what, not the whole error object (it may carry host data).
    ctx.stderr(`${TOOL_NAME}: internal error: ${shownLines(err instanceof Error ? err.message : String(err))}\n`);
    return ExitCode.Incomplete;
  }
}
