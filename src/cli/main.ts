import { cac } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CommandContext } from './context.js';
import { registerEvaluate } from './evaluate.js';
import { registerRules } from './rules.js';

const defaultContext: CommandContext = {
  now: () => new Date(),
  info: (message) => process.stderr.write(`${message}\n`),
  stdout: (text) => process.stdout.write(text),
};

/** Runs the CLI and returns the exit code; never throws, never prints a raw error object. */
export async function main(argv: string[], ctx: CommandContext = defaultContext): Promise<number> {
  const cli = cac(TOOL_NAME);
  // Commands, registered in one explicit list.
  registerEvaluate(cli, ctx);
  registerRules(cli, ctx);
  cli.help();
  cli.version(TOOL_VERSION);
  try {
    cli.parse(argv, { run: false });
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
      process.stderr.write(`${TOOL_NAME}: ${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof Error && err.name === 'CACError') {
      process.stderr.write(`${TOOL_NAME}: ${err.message} (see \`mesh-audit --help\`)\n`);
      return ExitCode.Usage;
    }
    // An unexpected failure: say what, not the whole error object (it may carry host data).
    process.stderr.write(`${TOOL_NAME}: internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    return ExitCode.Incomplete;
  }
}
