import type { Command } from 'cac';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { PolicyChoice } from '../policy/load.js';
import { absolutePath, resolveSettings, type ConfigFile, type ResolvedSettings } from '../config.js';
import { MeshAuditError } from '../errors.js';
import { readInput } from '../input/read.js';
import { parseIgnoreFile, parseSelector, type IgnoreEntry, type Scope, type Selector } from '../scope.js';
import { parseCount } from './choices.js';
import { REPEATABLE } from './cli-spec.js';
import {
  CONFIG_HELP,
  helpOf,
  longFlagOf,
  POLICY_HELP,
  ids,
  SETTINGS,
  settingOf,
  type FlagReading,
  type SettingCommand,
} from '../settings/registry.js';
import { list, type CommandContext } from './context.js';

export { CONFIG_HELP, POLICY_HELP };

/**
 * Each setting's flag, from the table of settings (src/settings/registry.ts), in the order given: its help (the
 * command's own wording when it has one), the default cac shows. A setting the table does not give this command is a
 * programming error, thrown when the command is defined. cac gives a `--no-` flag a default of true; cleared here, so
 * that an absent flag leaves the config's value in force (and the help shows no "(default: true)").
 */
export function addSettingOptions(command: Command, keys: readonly string[]): Command {
  const name = command.name as SettingCommand;
  for (const key of keys) {
    const spec = settingOf(key);
    if (spec.flag === undefined || !spec.commands.includes(name))
      throw new Error(`the setting '${key}' has no flag on ${command.name} (src/settings/registry.ts)`);
    const { help, shownDefault } = helpOf(spec, name);
    command.option(spec.flag, help, {
      ...(shownDefault !== undefined ? { default: shownDefault } : {}),
      // Every value of a repeatable flag is kept; any other flag given twice takes the last (cli-spec.ts).
      ...(spec.arity === 'repeatable' ? REPEATABLE : {}),
    });
    const negated = command.options.find((o) => o.rawName === spec.flag && o.negated);
    if (negated) negated.config.default = undefined;
  }
  return command;
}

/** `--policy` and `--no-default-policy`, as every command that loads packs takes them. */
export const addPolicyOptions = (command: Command): Command =>
  addSettingOptions(command, ['policy', 'defaultPolicy', 'skip']);

/** The ignore file read when none is named: in the folder the command runs from, when present. */
export const IGNORE_FILE = '.mesh-auditignore';

/** The scope options of every command that reads or evaluates a host: scan, snapshot, evaluate, premigrate. */
export const addScopeOptions = (command: Command): Command =>
  addSettingOptions(command, ['include', 'exclude', 'replaceLists', 'ignoreFile']);

/** Flags as cac hands them over (a repeatable flag's values as a list; any other flag given twice, its last value). */
export interface SettingFlags {
  config?: string;
  dockerHost?: string;
  ledger?: string;
  root?: string;
  managedRoot?: string | string[];
  hostname?: string;
  keep?: string | number;
  maxFiles?: string | number;
  out?: string;
  failOn?: string;
  include?: string | string[];
  exclude?: string | string[];
  format?: string;
  profile?: string;
  baseline?: string;
  failOnNew?: boolean;
  onlyNew?: boolean;
  promFile?: string;
  waivers?: string;
  policy?: string | string[];
  /** False with `--no-default-policy` (cac gives true when the flag is absent). */
  defaultPolicy?: boolean;
  ignoreFile?: string;
  /** --skip: rule ids not to evaluate (each value may list several, comma-separated). */
  skip?: string | string[];
  /** --replace-lists: list flags replace the config's lists instead of adding to them. */
  replaceLists?: boolean;
}

/** A path flag made absolute against the working directory (`--ledger host/ledger.json`), as a shell user means it. */
const absolute = (flag: string, value: unknown): string => {
  const s = String(value);
  if (s === '') throw new MeshAuditError(`${flag} needs a path`);
  return absolutePath(s);
};

/** How each kind of flag value becomes its setting's (undefined: the flag sets nothing). */
const READINGS: Record<Exclude<FlagReading, 'own'>, (flag: string, value: unknown) => unknown> = {
  string: (_flag, value) => String(value),
  absolute: absolute,
  count: (flag, value) => parseCount(flag, value, 1),
  list: (_flag, value) => list(value as string | string[]),
  absoluteList: (flag, value) => {
    const paths = list(value as string | string[]).map((v) => absolute(flag, v));
    return paths.length > 0 ? paths : undefined;
  },
  idList: (_flag, value) => list(value as string | string[]).flatMap(ids),
  true: (_flag, value) => (value === true ? true : undefined),
  false: (_flag, value) => (value === false ? false : undefined),
};

/** The name cac gives a flag's value: `--managed-root` → managedRoot, `--no-default-policy` → defaultPolicy. */
const optionNameOf = (flag: string): string =>
  flag.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The settings the flags give, each read by its kind (src/settings/registry.ts); the first bad one is exit 2. */
function flagSettings(flags: SettingFlags): ConfigFile {
  const fromFlags: Record<string, unknown> = {};
  for (const spec of SETTINGS) {
    const flag = longFlagOf(spec);
    if (flag === undefined || spec.reading === undefined || spec.reading === 'own') continue;
    const value = (flags as Record<string, unknown>)[optionNameOf(flag)];
    if (value === undefined) continue;
    const read = READINGS[spec.reading](flag, value);
    if (read !== undefined) fromFlags[spec.key] = read;
  }
  return fromFlags;
}

/** Flags, config file (discovered), environment and defaults, merged once, with each setting's origin. */
export async function settingsOf(flags: SettingFlags, ctx: CommandContext): Promise<ResolvedSettings> {
  return withAddedPolicies(
    await resolveSettings(flagSettings(flags), flags.config, ctx.env ?? process.env, {
      replaceLists: flags.replaceLists === true,
    }),
    list(flags.policy),
  );
}

/**
 * Packs add up: the config's `policy` (relative to the config file's folder), then each `--policy`,
 * all on top of the shipped pack unless `defaultPolicy` is false (docs/writing-rules.md, "A pack of your own").
 */
function withAddedPolicies(resolved: ResolvedSettings, fromFlags: string[]): ResolvedSettings {
  const folder = resolved.configFile !== undefined ? dirname(resolve(resolved.configFile)) : process.cwd();
  const fromConfig =
    resolved.origins.policy === 'default' ? [] : resolved.settings.policy.map((p) => resolve(folder, p));
  if (fromFlags.length === 0) return { ...resolved, settings: { ...resolved.settings, policy: fromConfig } };
  const origin = fromConfig.length > 0 ? `${resolved.origins.policy} + flag --policy` : 'flag --policy';
  return {
    ...resolved,
    settings: { ...resolved.settings, policy: [...fromConfig, ...fromFlags] },
    origins: { ...resolved.origins, policy: origin },
  };
}

/** The packs a run loads, from the merged settings (withAddedPolicies). */
export const policyChoiceOf = (resolved: ResolvedSettings): PolicyChoice => ({
  added: resolved.settings.policy,
  shipped: resolved.settings.defaultPolicy,
  // The hardening pack is loaded for its profile alone: a run without it is what it always was.
  hardening: resolved.settings.profile === 'hardening',
});

/**
 * The scope of a run: include/exclude selectors and ignore entries (config, then the ignore file); every bad one
 * reported at once.
 */
export async function scopeOf(resolved: ResolvedSettings, ignoreFile: string | undefined): Promise<Scope> {
  const errors: string[] = [];
  const selectorsOf = (key: 'include' | 'exclude'): Selector[] =>
    resolved.settings[key].flatMap((text) => {
      try {
        return [parseSelector(text, `${key} (${resolved.origins[key]})`)];
      } catch (err) {
        if (!(err instanceof MeshAuditError)) throw err;
        errors.push(err.message);
        return [];
      }
    });
  const include = selectorsOf('include');
  const exclude = selectorsOf('exclude');
  const ignore: IgnoreEntry[] = [];
  resolved.settings.ignore.forEach((item, i) => {
    const where = `${resolved.configFile ?? 'config'}: ignore[${i}]`;
    try {
      const text = typeof item === 'string' ? item : item.select;
      const until = typeof item === 'string' ? undefined : item.until;
      ignore.push({ selector: parseSelector(text, where), ...(until !== undefined ? { until } : {}), source: where });
    } catch (err) {
      if (!(err instanceof MeshAuditError)) throw err;
      errors.push(err.message);
    }
  });
  const file = ignoreFile ?? (existsSync(IGNORE_FILE) ? IGNORE_FILE : undefined);
  if (file !== undefined) {
    try {
      ignore.push(...parseIgnoreFile(await readInput(file, 'ignore file'), file));
    } catch (err) {
      if (!(err instanceof MeshAuditError)) throw err;
      errors.push(err.message);
    }
  }
  if (errors.length > 0) throw new MeshAuditError(errors.join('\n'));
  return { include, exclude, ignore };
}

/**
 * The layered settings and the scope of a run, worked out (and every mistake in them found) before anything is read.
 */
export async function settingsAndScopeOf(
  flags: SettingFlags,
  ctx: CommandContext,
): Promise<{ resolved: ResolvedSettings; scope: Scope }> {
  const resolved = await settingsOf(flags, ctx);
  return { resolved, scope: await scopeOf(resolved, flags.ignoreFile) };
}
