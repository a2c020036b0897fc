import { cac, type CAC } from 'cac';
import { TOOL_COMMIT, TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CommandContext } from './context.js';
import { FLAG_RULE } from './cli-spec.js';
import { exitCodesOf } from './exit-codes.js';

/**
 * A command's registration. `whole` gives every command defined on one parser (`definedCli`): what
 * `completion` and `man` describe, handed to them so that they do not import this list that loads them.
 */
export type Register = (cli: CAC, ctx: CommandContext, whole: () => Promise<CAC>) => void;

/**
 * Commands, registered in one explicit list. Each is imported only when it may run, so that start-up
 * does not load what the command does not use (the Docker client is only for scan, snapshot and premigrate).
 */
export const COMMANDS: { names: readonly string[]; load: () => Promise<Register> }[] = [
  { names: ['completion'], load: async () => (await import('./completion.js')).registerCompletion },
  { names: ['config'], load: async () => (await import('./config.js')).registerConfig },
  { names: ['diff'], load: async () => (await import('./diff.js')).registerDiff },
  { names: ['evaluate'], load: async () => (await import('./evaluate.js')).registerEvaluate },
  { names: ['man'], load: async () => (await import('./man.js')).registerMan },
  { names: ['premigrate'], load: async () => (await import('./premigrate.js')).registerPremigrate },
  { names: ['rules'], load: async () => (await import('./rules.js')).registerRules },
  { names: ['scan', 'snapshot'], load: async () => (await import('./scan.js')).registerScan },
  { names: ['serve', 'status'], load: async () => (await import('./serve.js')).registerServe },
];

export const COMMAND_NAMES: readonly string[] = COMMANDS.flatMap((c) => c.names);

/** Options every command takes. */
export function addGlobalOptions(cli: CAC): CAC {
  cli.option('-q, --quiet', 'Only findings and what was not checked: a clean, complete run prints nothing at all');
  cli.option('--verbose', 'Also say what was read and how long each step took');
  cli.option('--no-color', 'No colour in the text report (as NO_COLOR=1 does)');
  cli.help((sections) => withExitCodes(withFlagRule(withoutNegatedDefaults(sections)), cli.matchedCommand?.name));
  cli.version(`${TOOL_VERSION} (commit ${TOOL_COMMIT})`);
  return cli;
}

/**
 * cac gives a `--no-x` flag the default `true` (x is on unless negated) and prints it after the flag,
 * where it reads as if `--no-color` were on by default: the line says what the flag does, nothing more.
 */
function withoutNegatedDefaults(sections: { title?: string; body: string }[]): { title?: string; body: string }[] {
  return sections.map((s) =>
    s.title === 'Options'
      ? // eslint-disable-next-line regexp/no-super-linear-move -- cac's help text for our own options, not the host's
        { ...s, body: s.body.replace(/^(\s+--no-[\w-]+\b.*?) \(default: true\)$/gm, '$1').replace(/ +$/gm, '') }
      : s,
  );
}

/** What a flag given twice does, said under every help's options. */
function withFlagRule(sections: { title?: string; body: string }[]): { title?: string; body: string }[] {
  return sections.flatMap((s) => (s.title === 'Options' ? [s, { body: `  ${FLAG_RULE}` }] : [s]));
}

/** Each command's exit codes (src/cli/exit-codes.ts), last in its help; the top-level help's, the general ones. */
function withExitCodes(
  sections: { title?: string; body: string }[],
  command: string | undefined,
): { title?: string; body: string }[] {
  return [
    ...sections,
    {
      title: 'Exit codes',
      body: exitCodesOf(command)
        .map((l) => `  ${l}`)
        .join('\n'),
    },
  ];
}

/**
 * Every command defined on one parser, as `--help` shows them: the single source of the shell
 * completions and the man page.
 */
export async function definedCli(ctx: CommandContext): Promise<CAC> {
  const cli = cac(TOOL_NAME);
  for (const register of await Promise.all(COMMANDS.map((c) => c.load()))) register(cli, ctx, () => definedCli(ctx));
  return addGlobalOptions(cli);
}
