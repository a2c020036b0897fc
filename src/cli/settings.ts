import { existsSync } from 'node:fs';
import { resolveSettings, type ConfigFile, type ResolvedSettings } from '../config.js';
import { MeshAuditError } from '../errors.js';
import { readInput } from '../input/read.js';
import { parseIgnoreFile, parseSelector, type IgnoreEntry, type Scope, type Selector } from '../scope.js';
import { parseCount } from './choices.js';
import { list, type CommandContext } from './context.js';
import type { AuditOptions } from './evaluate.js';

export const CONFIG_HELP =
  'YAML config (default: $MESH_AUDIT_CONFIG, else /etc/mesh-audit/config.yaml when present): ledger, managedRoots, labels, dockerHost, root, hostname, keep, dockerTimeoutSeconds, maxFiles, out, failOn, include, exclude, ignore; for scan and evaluate also format, profile, baseline, failOnNew, promFile, waivers';

/** The ignore file read when none is named: in the folder the command runs from, when present. */
export const IGNORE_FILE = '.mesh-auditignore';

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
  promFile?: string;
  waivers?: string;
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
  for (const key of ['format', 'profile', 'baseline', 'promFile', 'waivers'] as const) if (flags[key] !== undefined) fromFlags[key] = String(flags[key]);
  if (flags.failOnNew === true) fromFlags.failOnNew = true;
  return resolveSettings(fromFlags, flags.config, ctx.env ?? process.env);
}

/** The scope of a run: include/exclude selectors and ignore entries (config, then the ignore file); every bad one reported at once. */
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

/** The audit options of a run with the layered settings applied: output folder, threshold, scope. */
export async function prepareAudit<T extends AuditOptions & SettingFlags>(options: T, ctx: CommandContext): Promise<{ audit: T & { out: string; failOn: string; scope: Scope }; resolved: ResolvedSettings }> {
  const resolved = await settingsOf(options, ctx);
  const scope = await scopeOf(resolved, options.ignoreFile);
  const { out, failOn, format, profile, baseline, failOnNew, promFile, waivers } = resolved.settings;
  return { audit: { ...options, out, failOn, format, profile, baseline, failOnNew, promFile, waivers, scope }, resolved };
}
