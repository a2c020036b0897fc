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
