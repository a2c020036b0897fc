import type { Command } from 'cac';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { PolicyChoice } from '../policy/load.js';
import { resolveSettings, type ConfigFile, type ResolvedSettings } from '../config.js';
import { MeshAuditError } from '../errors.js';
import { readInput } from '../input/read.js';
import { parseIgnoreFile, parseSelector, type IgnoreEntry, type Scope, type Selector } from '../scope.js';
import { parseCount } from './choices.js';
import { list, type CommandContext } from './context.js';

export const CONFIG_HELP =
  'YAML config (default: $MESH_AUDIT_CONFIG, else /etc/mesh-audit/config.yaml when present): ledger, managedRoots, ' +
  'labels, dockerHost, root, hostname, keep, dockerTimeoutSeconds, maxFiles, envFileSyntax, out, failOn, include, ' +
  'exclude, ignore, policy, defaultPolicy; for scan and evaluate also format, profile, baseline, failOnNew, ' +
  'onlyNew, promFile, waivers, alertmanager (url, username, password[File], bearerToken[File], timeoutSeconds), ' +
  'docsUrl';

/** `--policy` on every command that loads packs: packs add to the shipped one. */
export const POLICY_HELP = 'Policy pack file or folder to add to the shipped pack (config: policy); repeatable';
const NO_DEFAULT_POLICY_HELP =
  "Do not load the shipped pack: only the --policy packs run, the shipped rules' findings are not checked (config: " +
  'defaultPolicy: false)';

/**
 * `--policy` and `--no-default-policy`, as every command that loads packs takes them. cac gives a
 * `--no-` flag a default of true; cleared here, so that an absent flag leaves the config's
 * `defaultPolicy` in force (and the help shows no "(default: true)").
 */
export function addPolicyOptions(command: Command, policyHelp = POLICY_HELP): Command {
  command.option('--policy <path>', policyHelp).option('--no-default-policy', NO_DEFAULT_POLICY_HELP);
  const negated = command.options.find((o) => o.rawName === '--no-default-policy');
  if (negated) negated.config.default = undefined;
  return command;
}

export const REPLACE_LISTS_HELP =
  "--include, --exclude and --managed-root replace the config's (and environment's) lists instead of adding to them";

/** The ignore file read when none is named: in the folder the command runs from, when present. */
export const IGNORE_FILE = '.mesh-auditignore';

/** The scope options of every command that reads or evaluates a host: scan, snapshot, evaluate, premigrate. */
export function addScopeOptions(command: Command): Command {
  return command
    .option(
      '--include <selector>',
      'Only these containers, files or host listeners: label:KEY=VALUE, name:GLOB, path:GLOB, listener:ADDRESS:PORT; ' +
        "repeatable; adds to the config's include and $MESH_AUDIT_INCLUDE",
    )
    .option(
      '--exclude <selector>',
      'Leave out containers, files or host listeners (not read, not checked, counted in the summary): ' +
        'label:KEY=VALUE, name:GLOB, path:GLOB, listener:ADDRESS:PORT; repeatable; ' +
        "adds to the config's exclude and $MESH_AUDIT_EXCLUDE",
    )
    .option('--replace-lists', REPLACE_LISTS_HELP)
    .option(
      '--ignore-file <file>',
      'Selectors to leave out, one a line, optionally `until YYYY-MM-DD` (default: ./.mesh-auditignore when present)',
    );
}

/** Flags as cac hands them over (strings, or lists when repeated). */
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
  /** --replace-lists: list flags replace the config's lists instead of adding to them. */
  replaceLists?: boolean;
}

const absoluteOrUndefined = (flag: string, value: unknown): string | undefined => {
  if (value === undefined) return undefined;
  const s = String(value);
  if (!s.startsWith('/')) throw new MeshAuditError(`${flag} needs an absolute path, not '${s}'`);
  return s;
};

/** Flags, config file (discovered), environment and defaults, merged once, with each setting's origin. */
export async function settingsOf(flags: SettingFlags, ctx: CommandContext): Promise<ResolvedSettings> {
  const fromFlags: ConfigFile = {};
  const ledger = absoluteOrUndefined('--ledger', flags.ledger);
  const root = absoluteOrUndefined('--root', flags.root);
  if (ledger !== undefined) fromFlags.ledger = ledger;
  if (root !== undefined) fromFlags.root = root;
  if (flags.dockerHost !== undefined) fromFlags.dockerHost = String(flags.dockerHost);
  if (flags.hostname !== undefined) fromFlags.hostname = String(flags.hostname);
  if (flags.keep !== undefined) fromFlags.keep = parseCount('--keep', flags.keep, 0);
  if (flags.maxFiles !== undefined) fromFlags.maxFiles = parseCount('--max-files', flags.maxFiles, 1);
  if (flags.out !== undefined) fromFlags.out = String(flags.out);
  if (flags.failOn !== undefined) fromFlags.failOn = String(flags.failOn);
  const roots = list(flags.managedRoot).map((r) => absoluteOrUndefined('--managed-root', r)!);
  if (roots.length > 0) fromFlags.managedRoots = roots;
  if (flags.include !== undefined) fromFlags.include = list(flags.include);
  if (flags.exclude !== undefined) fromFlags.exclude = list(flags.exclude);
  for (const key of ['format', 'profile', 'baseline', 'promFile', 'waivers'] as const)
    if (flags[key] !== undefined) fromFlags[key] = String(flags[key]);
  if (flags.failOnNew === true) fromFlags.failOnNew = true;
  if (flags.onlyNew === true) fromFlags.onlyNew = true;
  if (flags.defaultPolicy === false) fromFlags.defaultPolicy = false;
  return withAddedPolicies(
    await resolveSettings(fromFlags, flags.config, ctx.env ?? process.env, {
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
