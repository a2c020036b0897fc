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

type DeclaredOption = Command['options'][number];

/** The long flags of an option, before `=`-less tokens are matched against them. */
const longFlagsOf = (option: DeclaredOption): string[] => flagsOf(option.rawName).filter((f) => f.startsWith('--'));

const camelOf = (flag: string): string => `--${flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}`;

/**
 * cac 7.1 tells its parser (mri) only the camelCase name of a switch, so a hyphenated switch written before a word
 * takes the word for its value: `evaluate --fail-on-new snap.json` lost the snapshot (cacjs/cac pull request 169, not
 * released). Each hyphenated switch is handed to the parser under the name it knows as a switch; nothing else changes
 * (`--x=value` and everything after `--` are left as written).
 */
export function switchesAsDeclared(argv: readonly string[], declared: readonly DeclaredOption[]): string[] {
  const asParsed = new Map<string, string>();
  for (const option of declared) {
    if (option.isBoolean !== true || option.negated) continue;
    for (const flag of longFlagsOf(option)) if (flag.slice(2).includes('-')) asParsed.set(flag, camelOf(flag));
  }
  const end = argv.indexOf('--');
  return argv.map((a, i) => (end >= 0 && i >= end ? a : (asParsed.get(a) ?? a)));
}

/**
 * cac's parser turns every value that looks like a number into one (`--hostname 007` became 7, `--since 1e3` 1000),
 * and a repeatable flag's values are then made strings of those numbers: every value is kept as it was written. Read
 * back from the command line for each option that takes a value: the last one written (as `lastValueWins` keeps),
 * or every one, in order, for a repeatable flag.
 */
export function valuesAsWritten(
  options: Record<string, unknown>,
  argv: readonly string[],
  declared: readonly DeclaredOption[],
): void {
  const end = argv.indexOf('--');
  const given = end < 0 ? argv : argv.slice(0, end);
  for (const option of declared) {
    if (option.isBoolean === true) continue;
    const flags = flagsOf(option.rawName);
    const written: string[] = [];
    for (let i = 0; i < given.length; i++) {
      const token = given[i]!;
      const eq = token.indexOf('=');
      if (eq > 0 && flags.includes(token.slice(0, eq))) written.push(token.slice(eq + 1));
      else if (flags.includes(token) && i + 1 < given.length) written.push(given[++i]!);
    }
    if (written.length === 0) continue;
    for (const name of option.names) {
      const value = options[name];
      if (Array.isArray(value)) {
        if (value.length === written.length) options[name] = written;
      } else if (value !== undefined && typeof value !== 'boolean') options[name] = written.at(-1);
    }
  }
}
