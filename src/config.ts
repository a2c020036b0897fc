import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { readInput } from './input/read.js';
import { MeshAuditError } from './errors.js';
import { keyLineAt, parseYaml, schemaErrors } from './input/yaml.js';
import { FAIL_ON_VALUES } from './settings/outcome.js';
import { didYouMean } from './text/suggest.js';
import { DEFAULT_LABEL_KEYS, type EnvFileSyntax, type LabelKeys } from './snapshot/types.js';
import { validatorFor } from './input/validate.js';
import type { AlertmanagerSettings } from './alert/target.js';
import {
  CONFIG_SETTINGS,
  defaultOf,
  DEFAULT_LEDGER,
  defaultOut,
  ENV_SETTINGS,
  longFlagOf,
  ROOT_OUT,
  settingOf,
  SYSTEM_CONFIG,
} from './settings/registry.js';
import { PROFILE_CHOICES } from './policy/types.js';
import { AUDIT_FORMATS } from './report/formats.js';

/** Everything a live scan needs to know about the host, merged from flags, config file and defaults. */
export interface ScanSettings {
  ledger: string;
  managedRoots: string[];
  labels: LabelKeys;
  dockerHost: string | undefined;
  /** Where the host is mounted (`/` unless the scanner runs in a container). */
  root: string;
  hostname: string | undefined;
  /** How many snapshots of each host the history keeps. */
  keep: number;
  dockerTimeoutSeconds: number;
  /** At most this many file records per scan (managed roots included); past it the scan is incomplete. */
  maxFiles: number;
  /**
   * How the mesh's own containers read their env files when no label says: `docker`, `compose` or `auto`
   * (docs/ledger.md, "Env files").
   */
  envFileSyntax: EnvFileSyntax;
}

/** What every auditing command reads beside the scan settings: where reports go, when to fail, what is in scope. */
export interface AuditSettings {
  out: string;
  failOn: string;
  include: string[];
  exclude: string[];
  /** Ignore entries written in the config: a selector, or `{select, until}`. */
  ignore: (string | { select: string; until?: string })[];
  /** What `scan` and `evaluate` report and how (the nightly job's flags, config/--format, --profile, …). */
  format: string;
  profile: string;
  /** An earlier JSON report, or `auto`: the previous report in `out`. */
  baseline: string | undefined;
  failOnNew: boolean;
  /** The text report prints only the findings new against the baseline (--only-new). */
  onlyNew: boolean;
  /** node_exporter's textfile for the metrics, beside the reports. */
  promFile: string | undefined;
  waivers: string | undefined;
  /** Policy packs (files or folders) added to the shipped pack; in the config, relative to the config file's folder. */
  policy: string[];
  /** Whether the shipped pack is loaded; false replaces it with `policy` (`--no-default-policy`). */
  defaultPolicy: boolean;
  /** Rule ids not evaluated, on purpose: every report names them (src/policy/skip.ts). */
  skip: string[];
  /** Where alerts go and how to authenticate (alert/target.ts); `--alertmanager URL` overrides its url. */
  alertmanager: AlertmanagerSettings | undefined;
  /** The docs folder the shipped rules' links point into (`<docsUrl>/rules/<ID>.md`): SARIF helpUri, runbook_url, … */
  docsUrl: string;
}

/** A setting's default, from the table of settings (src/settings/registry.ts). */
const tableDefault = (key: string): unknown => defaultOf(settingOf(key));

/** The defaults of the reporting settings (scan and evaluate; premigrate has its own formats). */
export const DEFAULT_REPORT_SETTINGS = {
  format: tableDefault('format') as string,
  profile: tableDefault('profile') as string,
  baseline: undefined,
  failOnNew: false,
  onlyNew: false,
  promFile: undefined,
  waivers: undefined,
} as const;

export type Settings = ScanSettings & AuditSettings;

export { DEFAULT_LEDGER, SYSTEM_CONFIG, ROOT_OUT, defaultOut };

const SCAN_KEYS = [
  'ledger',
  'managedRoots',
  'labels',
  'dockerHost',
  'root',
  'hostname',
  'keep',
  'dockerTimeoutSeconds',
  'maxFiles',
  'envFileSyntax',
] as const satisfies readonly (keyof ScanSettings)[];
export const DEFAULT_SETTINGS = Object.fromEntries(
  SCAN_KEYS.map((k) => [k, tableDefault(k)]),
) as unknown as ScanSettings;

const absolute = { type: 'string', pattern: '^/' };
/** The formats of scan and evaluate, from their table (src/report/formats.ts), as the `format` key's pattern. */
const reportFormat = `(${AUDIT_FORMATS.map((f) => f.name).join('|')})`;
const selectors = { type: 'array', items: { type: 'string', minLength: 1 } };
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ledger: absolute,
    managedRoots: { type: 'array', items: absolute },
    labels: {
      type: 'object',
      additionalProperties: false,
      properties: {
        module: { type: 'string' },
        resource: { type: 'string' },
        sources: { type: 'string' },
        sourceDigests: { type: 'string' },
        envFileSyntax: { type: 'string', minLength: 1 },
      },
    },
    envFileSyntax: { enum: ['docker', 'compose', 'auto'] },
    dockerHost: { type: 'string' },
    root: absolute,
    hostname: { type: 'string', minLength: 1 },
    keep: { type: 'integer', minimum: 1 },
    dockerTimeoutSeconds: { type: 'number', exclusiveMinimum: 0 },
    maxFiles: { type: 'integer', minimum: 1 },
    out: { type: 'string', minLength: 1 },
    failOn: { enum: [...FAIL_ON_VALUES] },
    include: selectors,
    exclude: selectors,
    policy: { type: 'array', items: { type: 'string', minLength: 1 } },
    defaultPolicy: { type: 'boolean' },
    skip: { type: 'array', items: { type: 'string', minLength: 1 } },
    alertmanager: {
      type: 'object',
      additionalProperties: false,
      properties: {
        url: { type: 'string', minLength: 1 },
        username: { type: 'string', minLength: 1 },
        password: { type: 'string', minLength: 1 },
        passwordFile: absolute,
        bearerToken: { type: 'string', minLength: 1 },
        bearerTokenFile: absolute,
        timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 600 },
      },
    },
    ignore: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'string', minLength: 1 },
          {
            type: 'object',
            required: ['select'],
            additionalProperties: false,
            properties: { select: { type: 'string', minLength: 1 }, until: { type: 'string', format: 'date' } },
          },
        ],
      },
    },
    format: { type: 'string', pattern: `^ *${reportFormat} *(, *${reportFormat} *)*$` },
    profile: { enum: [...PROFILE_CHOICES] },
    baseline: { type: 'string', minLength: 1 },
    failOnNew: { type: 'boolean' },
    onlyNew: { type: 'boolean' },
    promFile: { type: 'string', minLength: 1 },
    waivers: { type: 'string', minLength: 1 },
    docsUrl: { type: 'string', format: 'uri' },
  },
} as const;
const validateConfig = validatorFor('config', configSchema);

export type ConfigFile = Partial<Omit<Settings, 'labels'>> & { labels?: Partial<LabelKeys> };

/**
 * A config file, checked whole: every mistake is reported at once, each with its key's own file:line and the nearest
 * known key or value.
 */
export async function loadConfigFile(path: string): Promise<ConfigFile> {
  return (await readConfigFile(path)).values;
}

/** A config file's values, and the line each top-level key is on (shown as its origin). */
export async function readConfigFile(
  path: string,
): Promise<{ values: ConfigFile; lines: Partial<Record<string, number>> }> {
  const { doc, lines, value } = parseYaml(await readInput(path, 'config'), path);
  if (value === null || value === undefined) return { values: {}, lines: {} };
  if (!validateConfig(value))
    throw new MeshAuditError(schemaErrors(path, doc, lines, validateConfig.errors ?? [], configSchema).join('\n'));
  const keyLines = Object.fromEntries(
    Object.keys(value).map((key) => [key, keyLineAt(doc, lines, `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)]),
  );
  return { values: value, lines: keyLines };
}

/** Which config file applies: `--config`, else `$MESH_AUDIT_CONFIG`, else the system one when present. */
export function configPathOf(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): { path: string; from: string } | undefined {
  if (flag !== undefined) return { path: flag, from: '--config' };
  const named = env['MESH_AUDIT_CONFIG'];
  if (named !== undefined && named !== '') return { path: named, from: 'MESH_AUDIT_CONFIG' };
  const system = env['MESH_AUDIT_SYSTEM_CONFIG'] || SYSTEM_CONFIG;
  return existsSync(system) ? { path: system, from: 'system config' } : undefined;
}

/**
 * A path given on the command line or in the environment, made absolute against the working directory (issue 47); an
 * absolute one is kept as written. A config file's paths are not: a job reads it from any folder (`schemaErrors` names
 * the absolute path beside the file instead).
 */
export const absolutePath = (path: string): string => (isAbsolute(path) ? path : resolve(path));

/**
 * The settings the environment gives, each checked as the config file's would be; a relative path is made absolute
 * against the working directory, as its flag's is.
 */
export function envSettings(env: NodeJS.ProcessEnv): { values: ConfigFile; from: Record<string, string> } {
  const values: Record<string, unknown> = {};
  const from: Record<string, string> = {};
  const errors: string[] = [];
  for (const { env: variable_, key, reading } of ENV_SETTINGS) {
    const { variable, read } = variable_;
    const raw = env[variable];
    if (raw === undefined || raw === '') continue;
    const given = read(raw);
    const value =
      reading === 'absolute'
        ? absolutePath(given as string)
        : reading === 'absoluteList'
          ? (given as string[]).map(absolutePath)
          : given;
    if (!validateConfig({ [key]: value })) {
      const error = validateConfig.errors?.[0];
      const allowed = error?.keyword === 'enum' ? (error.params['allowedValues'] as unknown[]).map(String) : undefined;
      const why = allowed ? `must be one of ${allowed.join(', ')}` : (error?.message ?? 'is invalid');
      errors.push(`$${variable}: ${why} (it is '${raw}')${allowed ? didYouMean(raw, allowed) : ''}`);
      continue;
    }
    values[key] = value;
    from[key] = `env ${variable}`;
  }
  if (errors.length > 0) throw new MeshAuditError(errors.join('\n'));
  return { values: values, from };
}

export interface ResolvedSettings {
  settings: Settings;
  /**
   * Where each setting came from: `flag --x`, `env VAR`, `config FILE:LINE`, or `default`; a list from several: `config
   * FILE:LINE + flag --x`.
   */
  origins: Record<keyof Settings, string>;
  configFile: string | undefined;
}

/**
 * The list settings the environment and flags add to (a flag unless told to replace, --replace-lists): the config's
 * and the environment's items stay.
 */
export const LIST_SETTINGS = CONFIG_SETTINGS.filter(
  (s) => s.reading === 'list' || s.reading === 'absoluteList' || s.reading === 'idList',
).map((s) => s.key);

/** The flag that sets a setting, as a user types it (`managedRoots`: `--managed-root`). */
export const flagOf = (key: string): string => longFlagOf(settingOf(key)) ?? `--${key}`;

/**
 * One place where the layers meet: flags over the environment over the config file over defaults,
 * each kept whole, and each setting's origin kept for `mesh-audit config show`. List settings given in
 * the environment or as flags add to what the layers below give (`--exclude X` with `exclude: [Y]` in
 * the config: both); flags replace them when `replaceLists`.
 */
export async function resolveSettings(
  flags: ConfigFile,
  configFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  options: { replaceLists?: boolean } = {},
): Promise<ResolvedSettings> {
  const where = configPathOf(configFlag, env);
  const file = where ? await readConfigFile(where.path) : { values: {}, lines: {} };
  const fromEnv = envSettings(env);
  const defaults = Object.fromEntries(CONFIG_SETTINGS.map((s) => [s.key, defaultOf(s)])) as unknown as Settings;
  const settings: Settings = { ...defaults };
  const origins = Object.fromEntries(Object.keys(defaults).map((k) => [k, 'default'])) as Record<
    keyof Settings,
    string
  >;
  const layers: [ConfigFile, (key: string) => string][] = [
    [file.values, (key) => `config ${where?.path ?? ''}${file.lines[key] !== undefined ? `:${file.lines[key]}` : ''}`],
    [fromEnv.values, (key) => fromEnv.from[key]!],
    [flags, (key) => `flag ${flagOf(key)}`],
  ];
  for (const [layer, origin] of layers) {
    for (const [key, value] of Object.entries(layer)) {
      // A layer's key can be present and undefined.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      if (value === undefined) continue;
      if (Array.isArray(value) && value.length === 0 && layer === flags) continue;
      const k = key as keyof Settings;
      const adds =
        (layer === flags ? options.replaceLists !== true : layer === fromEnv.values) &&
        (LIST_SETTINGS as readonly string[]).includes(key) &&
        origins[k] !== 'default';
      // Each layer was checked when it was read (config schema, flags, environment): its values have their setting's
      // type.
      const merged =
        key === 'labels'
          ? { ...settings.labels, ...(value as Partial<LabelKeys>) }
          : adds
            ? [...new Set([...(settings[k] as string[]), ...(value as string[])])]
            : value;
      Object.assign(settings, { [key]: merged });
      origins[k] = adds ? `${origins[k]} + ${origin(key)}` : origin(key);
    }
  }
  return { settings, origins, configFile: where?.path };
}

/** Flags over the config file over defaults (no environment): kept for callers that merge layers they already hold. */
export function mergeSettings(file: ConfigFile, flags: ConfigFile): ScanSettings {
  const pick = <K extends keyof ScanSettings>(key: K): ScanSettings[K] =>
    (flags[key as keyof ConfigFile] ?? file[key as keyof ConfigFile] ?? DEFAULT_SETTINGS[key]) as ScanSettings[K];
  return {
    ledger: pick('ledger'),
    managedRoots:
      flags.managedRoots && flags.managedRoots.length > 0
        ? flags.managedRoots
        : (file.managedRoots ?? DEFAULT_SETTINGS.managedRoots),
    labels: { ...DEFAULT_LABEL_KEYS, ...file.labels, ...flags.labels },
    dockerHost: pick('dockerHost'),
    root: pick('root'),
    hostname: pick('hostname'),
    keep: pick('keep'),
    dockerTimeoutSeconds: pick('dockerTimeoutSeconds'),
    maxFiles: pick('maxFiles'),
    envFileSyntax: pick('envFileSyntax'),
  };
}
