import { cac } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CommandContext } from './context.js';
import { registerEvaluate } from './evaluate.js';
import { registerRules } from './rules.js';
import { registerScan } from './scan.js';
import { registerDiff } from './diff.js';
import { registerPremigrate } from './premigrate.js';
import { useColor } from './output.js';

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
  // Commands, registered in one explicit list.
  registerEvaluate(cli, ctx);
  registerRules(cli, ctx);
  registerScan(cli, ctx);
  registerDiff(cli, ctx);
  registerPremigrate(cli, ctx);
  cli.help();
  cli.version(TOOL_VERSION);
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
