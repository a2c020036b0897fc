import type { CAC, Command } from 'cac';

/*
 * What the command line defines, read off cac's own definitions: the flags of an option, each command's options.
 * Completion scripts, the man page and the unknown-flag check read it; it imports no command.
 */

/**
 * The long and short flags an option's raw name declares: `-o, --output <file>` → [`-o`, `--output`]; `--no-x` also
 * `--x`.
 */
export function flagsOf(rawName: string): string[] {
  const flags = [...rawName.matchAll(/(^|[\s,])(--?[A-Za-z][\w-]*)/g)].map((m) => m[2]!);
  return flags.flatMap((f) => (f.startsWith('--no-') ? [f, `--${f.slice(5)}`] : [f]));
}

/** What a shell needs of one command: its name, one line of description, its long options. */
export interface CommandSpec {
  name: string;
  description: string;
  options: { flags: string[]; description: string; takesValue: boolean }[];
}

/** The commands and options exactly as `--help` defines them (cac's own definitions). */
export function specsOf(cli: CAC): { commands: CommandSpec[]; global: CommandSpec['options'] } {
  const optionsOf = (c: Command) =>
    c.options
      .filter((o) => !['help', 'version'].includes(o.name))
      .map((o) => ({
        flags: flagsOf(o.rawName).filter((f) => !(o.negated && !f.startsWith('--no-'))),
        description: o.description,
        takesValue: /[<[]/.test(o.rawName),
      }));
  return {
    commands: cli.commands
      .filter((c) => c.name !== '')
      .map((c) => ({ name: c.name, description: c.description, options: optionsOf(c) })),
    global: [
      ...optionsOf(cli.globalCommand),
      { flags: ['-h', '--help'], description: 'Display this message', takesValue: false },
    ],
  };
}

/** What a flag given twice does (`lastValueWins`), as `--help` and the man page say it. */
export const FLAG_RULE =
  'A flag given twice takes its last value (--out a --out b is b); a repeatable one keeps every value. A value is ' +
  'never split on its commas.';

/** How a flag that keeps every value it is given is declared: cac then always gives a list of strings. */
export const REPEATABLE = { type: [String] };

/**
 * A flag given twice (issue 47): cac gives every value of a flag given more than once, as a list, and a list read as
 * one value was its items joined with commas (`--out a --out b` wrote into `a,b`). One rule for every flag: a flag
 * declared repeatable (`REPEATABLE`: the settings whose arity is `repeatable`, src/settings/registry.ts) keeps every
 * value; every other one — single-valued settings, switches, the flags a command declares itself — takes the last, as
 * git and docker do. No value is ever split: `--out a,b` is the folder `a,b`.
 */
export function lastValueWins(options: Record<string, unknown>, declared: readonly Command['options'][number][]): void {
  for (const option of declared) {
    if (Array.isArray(option.config.type)) continue;
    for (const name of option.names) {
      const value = options[name];
      if (Array.isArray(value)) options[name] = value.at(-1);
    }
  }
}
