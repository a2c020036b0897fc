import { cac } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { TOOL_COMMIT, TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CAC } from 'cac';
import type { CommandContext } from './context.js';
import { useColor } from './output.js';

export { installSignalHandlers } from './signals.js';

type Register = (cli: CAC, ctx: CommandContext) => void;

/**
 * Commands, registered in one explicit list. Each is imported only when it may run, so that start-up
 * does not load what the command does not use (the Docker client is only for scan, snapshot and premigrate).
 */
const COMMANDS: { names: readonly string[]; load: () => Promise<Register> }[] = [
  { names: ['evaluate'], load: async () => (await import('./evaluate.js')).registerEvaluate },
  { names: ['rules'], load: async () => (await import('./rules.js')).registerRules },
  { names: ['scan', 'snapshot'], load: async () => (await import('./scan.js')).registerScan },
  { names: ['diff'], load: async () => (await import('./diff.js')).registerDiff },
  { names: ['premigrate'], load: async () => (await import('./premigrate.js')).registerPremigrate },
];

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

const defaultContext = (): CommandContext => ({
  now: () => new Date(),
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  color: useColor(process.stdout),
  interactive: process.stderr.isTTY === true,
});

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

/** Runs the CLI and returns the exit code; never throws, never prints a raw error object. */
export async function main(argv: string[], ctx: CommandContext = defaultContext()): Promise<number> {
  const cli = cac(TOOL_NAME);
  try {
    for (const register of await Promise.all(commandsFor(argv).map((c) => c.load()))) register(cli, ctx);
  } catch (err) {
    ctx.stderr(`${TOOL_NAME}: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    return ExitCode.Incomplete;
  }
  cli.help();
  cli.version(`${TOOL_VERSION} (commit ${TOOL_COMMIT})`);
  try {
    cli.parse(joinDashValues(argv), { run: false });
    if (cli.options['help'] || cli.options['version']) return ExitCode.Ok;
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) throw new MeshAuditError(`unknown command '${cli.args[0]}' (see \`mesh-audit --help\`)`);
      cli.outputHelp();
      return ExitCode.Usage;
    }
    const code: unknown = await cli.runMatchedCommand();
    return typeof code === 'number' ? code : ExitCode.Ok;
  } catch (err) {
    if (err instanceof MeshAuditError) {
      ctx.stderr(`${TOOL_NAME}: ${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof Error && err.name === 'CACError') {
      ctx.stderr(`${TOOL_NAME}: ${err.message} (see \`mesh-audit --help\`)\n`);
      return ExitCode.Usage;
    }
    // An unexpected failure: say what, not the whole error object (it may carry host data).
    ctx.stderr(`${TOOL_NAME}: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    return ExitCode.Incomplete;
  }
}
