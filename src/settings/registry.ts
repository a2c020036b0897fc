import { DEFAULT_LABEL_KEYS } from '../snapshot/types.js';
import { DEFAULT_MAX_FILES } from './limits.js';
import { FAIL_ON_VALUES } from './outcome.js';
import { PROFILE_CHOICES } from '../policy/types.js';
import { DEFAULT_DOCS_URL } from '../version.js';
import { DEFAULT_LOCK_TIMEOUT_SECONDS } from '../write/runs.js';
import { formatListHelp, PREMIGRATION_FORMATS } from '../report/formats.js';

/*
 * The settings, in one table: adding a setting is one entry here (and the code that uses its value). From it come the
 * flags cac defines for each command (src/cli/settings.ts, `addSettingOptions`) and so `--help`, the man page and the
 * shell completions; how each flag's value is read into the settings (`settingsOf`); the environment variables and
 * the defaults src/config.ts merges; `config show`'s keys; the config keys `--config`'s help lists; the man page's
 * ENVIRONMENT section. Flags that belong to one command's own work (`--snapshot`, `--history`, `--jobs`, `--plan`,
 * `-o`) stay with that command.
 */

/** The commands that take settings. */
export type SettingCommand = 'scan' | 'snapshot' | 'evaluate' | 'premigrate' | 'config' | 'rules' | 'serve';

/**
 * How many values a flag takes: `single` (one value; given twice, the last one wins, as for every flag not repeatable:
 * `lastValueWins` in src/cli/cli-spec.ts, issue 47), `repeatable` (each adds to the list), `switch` (no value).
 */
export type Arity = 'single' | 'repeatable' | 'switch';

/**
 * How a flag's value becomes the setting's (src/cli/settings.ts reads each kind): as written, a path made absolute
 * against the working directory (its environment variable's too), a whole number of at least 1, a list (of such paths
 * for `absoluteList`; for `idList`, each value split at commas and white space), true when given, false when given.
 * `own`: read by the commands themselves, not merged into the settings.
 */
export type FlagReading =
  | 'string'
  | 'absolute'
  | 'count'
  | 'list'
  | 'absoluteList'
  | 'idList'
  | 'true'
  | 'false'
  | 'own';

/** What a command says of a setting when it says something else than the others (and cac's default it shows). */
export interface CommandWording {
  help: string;
  shownDefault?: string;
}

export interface SettingSpec {
  /** Its key in the settings and the config file (`config`), else the flag's option name as cac gives it. */
  key: string;
  /** The flag as cac declares it, its value's placeholder included: `--docker-host <url>`. */
  flag?: string;
  arity: Arity;
  reading?: FlagReading;
  /** The environment variable that sets it (src/config.ts reads it), and how its text becomes the value. */
  env?: { variable: string; read: (text: string) => unknown };
  /** Whether the config file holds it (`config show` lists it): for every command, or for scan and evaluate only. */
  config?: 'all' | 'audit';
  /** What `--config`'s help adds after the key (the keys of a section). */
  configKeys?: string;
  /** Its value when no layer gives one (a function: worked out when read). */
  default?: unknown;
  /** The flag's help (a function: worked out from the table itself). */
  help?: string | (() => string);
  /** A command's own wording of the help. */
  helpFor?: Partial<Record<SettingCommand, CommandWording>>;
  commands: readonly SettingCommand[];
  /** The values a shell completes (the values it accepts). */
  choices?: readonly string[];
}

export const DEFAULT_LEDGER = '/var/lib/mesh-host/ledger.json';
/** Read when present; `MESH_AUDIT_SYSTEM_CONFIG` names another (the tests, a packaged layout). */
export const SYSTEM_CONFIG = '/etc/mesh-audit/config.yaml';
/** Root's reports and history live here, not in whatever folder the job happened to start in. */
export const ROOT_OUT = '/var/lib/mesh-audit';
/** `reports/` beside a user's work; `/var/lib/mesh-audit` for root (run from `/`, `reports` was `/reports`). */
export const defaultOut = (uid = process.getuid?.() ?? -1): string => (uid === 0 ? ROOT_OUT : 'reports');

const COLLECT = ['scan', 'snapshot', 'premigrate', 'config', 'serve'] as const;
const SCOPE = ['scan', 'snapshot', 'evaluate', 'premigrate', 'config', 'serve'] as const;
const POLICY = ['scan', 'evaluate', 'premigrate', 'rules', 'serve'] as const;
const AUDIT = ['scan', 'evaluate'] as const;
/** What `serve` reads besides the scan's settings: how findings are judged and where alerts go. */
const AUDIT_AND_SERVE = ['scan', 'evaluate', 'serve'] as const;
/** Selectors split on white space (a path with a space in it belongs in the config file's list). */
const words = (v: string): string[] => v.split(/\s+/).filter((p) => p.length > 0);
const asIs = (v: string): string => v;
/** Ids split on commas and white space (`HD2001,MA2001` or `HD2001 MA2001`). */
export const ids = (v: string): string[] => v.split(/[\s,]+/).filter((p) => p.length > 0);

export const POLICY_HELP = 'Policy pack file or folder to add to the shipped pack (config: policy); repeatable';
const OUT_AUDIT_HELP =
  "Output folder for reports (and a scan's history), or - for stdout (default: reports; /var/lib/mesh-audit for " +
  'root; $MESH_AUDIT_OUT)';
/** What scan and evaluate write when nothing says. */
const DEFAULT_FORMATS = 'text,sarif,json';
const PROFILE_HELP = 'nightly, premigration, all, or hardening (the shipped CIS Docker pack, loaded for it alone)';

/** In the order `--config`'s help lists the config keys (and the man page the environment variables). */
export const SETTINGS: readonly SettingSpec[] = [
  {
    key: 'config',
    flag: '--config <file>',
    arity: 'single',
    reading: 'own',
    // The keys it lists are this table's (CONFIG_HELP, below).
    help: () => CONFIG_HELP,
    commands: ['scan', 'snapshot', 'evaluate', 'premigrate', 'config', 'rules', 'serve'],
  },
  {
    key: 'ledger',
    flag: '--ledger <path>',
    arity: 'single',
    reading: 'absolute',
    env: { variable: 'MESH_AUDIT_LEDGER', read: asIs },
    config: 'all',
    default: DEFAULT_LEDGER,
    help: `The host agent's ledger (default: ${DEFAULT_LEDGER})`,
    commands: COLLECT,
  },
  {
    key: 'managedRoots',
    flag: '--managed-root <dir>',
    arity: 'repeatable',
    reading: 'absoluteList',
    env: { variable: 'MESH_AUDIT_MANAGED_ROOTS', read: (v) => v.split(':').filter((p) => p.length > 0) },
    config: 'all',
    default: [],
    help:
      'A folder the mesh writes into; every file under it is checked; repeatable; ' +
      "adds to the config's managedRoots",
    commands: COLLECT,
  },
  { key: 'labels', arity: 'single', config: 'all', default: DEFAULT_LABEL_KEYS, commands: COLLECT },
  {
    key: 'dockerHost',
    flag: '--docker-host <url>',
    arity: 'single',
    reading: 'string',
    env: { variable: 'DOCKER_HOST', read: asIs },
    config: 'all',
    default: undefined,
    help:
      'Docker engine: unix:///path, tcp://host:port, ssh://user@host ' +
      '(default: $DOCKER_HOST, else the local socket)',
    commands: COLLECT,
  },
  {
    key: 'root',
    flag: '--root <dir>',
    arity: 'single',
    reading: 'absolute',
    config: 'all',
    default: '/',
    help: 'Where the host is mounted read-only when the scanner runs in a container (paths are reported as host paths)',
    commands: COLLECT,
  },
  {
    key: 'hostname',
    flag: '--hostname <name>',
    arity: 'single',
    reading: 'string',
    env: { variable: 'MESH_AUDIT_HOSTNAME', read: asIs },
    config: 'all',
    default: undefined,
    help: "Name of the host in reports (default: the host's own)",
    commands: COLLECT,
  },
  {
    key: 'keep',
    flag: '--keep <n>',
    arity: 'single',
    reading: 'count',
    config: 'all',
    default: 30,
    help: "Report runs kept under --out (and a scan's snapshots of this host) (default 30)",
    helpFor: {
      config: { help: 'Runs kept, as scan takes it' },
      serve: { help: "Snapshots of this host kept in --out's history, as scan keeps them (default 30)" },
    },
    commands: ['scan', 'evaluate', 'config', 'serve'],
  },
  { key: 'dockerTimeoutSeconds', arity: 'single', config: 'all', default: 60, commands: COLLECT },
  {
    key: 'maxFiles',
    flag: '--max-files <n>',
    arity: 'single',
    reading: 'count',
    config: 'all',
    default: DEFAULT_MAX_FILES,
    help:
      `At most this many files recorded (managed roots included); past it the scan is incomplete (default ` +
      `${DEFAULT_MAX_FILES})`,
    commands: COLLECT,
  },
  { key: 'envFileSyntax', arity: 'single', config: 'all', default: 'auto', commands: COLLECT },
  {
    key: 'out',
    flag: '--out <dir>',
    arity: 'single',
    reading: 'string',
    env: { variable: 'MESH_AUDIT_OUT', read: asIs },
    config: 'all',
    default: () => defaultOut(),
    help: OUT_AUDIT_HELP,
    helpFor: {
      premigrate: {
        help:
          'Output folder for the json, sarif and md files, or - for the one chosen format on stdout (default: ' +
          'reports; /var/lib/mesh-audit for root; $MESH_AUDIT_OUT)',
      },
      config: { help: 'Output folder, as scan takes it' },
    },
    commands: ['scan', 'evaluate', 'premigrate', 'config'],
  },
  {
    key: 'failOn',
    flag: '--fail-on <severity>',
    arity: 'single',
    reading: 'string',
    env: { variable: 'MESH_AUDIT_FAIL_ON', read: asIs },
    config: 'all',
    default: 'error',
    help: 'Exit 1 on findings at or above: error, warning, note, none (default: error; $MESH_AUDIT_FAIL_ON)',
    helpFor: {
      config: { help: 'error, warning, note, none, as scan takes it' },
      serve: {
        help:
          'The state is findings (status exits 1) for findings at or above: error, warning, note, none (default: ' +
          'error; $MESH_AUDIT_FAIL_ON)',
      },
    },
    commands: ['scan', 'evaluate', 'config', 'serve'],
    choices: FAIL_ON_VALUES,
  },
  {
    key: 'include',
    flag: '--include <selector>',
    arity: 'repeatable',
    reading: 'list',
    env: { variable: 'MESH_AUDIT_INCLUDE', read: words },
    config: 'all',
    default: [],
    help:
      'Only these containers, files or host listeners: label:KEY=VALUE, name:GLOB, path:GLOB, listener:ADDRESS:PORT; ' +
      "repeatable; adds to the config's include and $MESH_AUDIT_INCLUDE",
    commands: SCOPE,
  },
  {
    key: 'exclude',
    flag: '--exclude <selector>',
    arity: 'repeatable',
    reading: 'list',
    env: { variable: 'MESH_AUDIT_EXCLUDE', read: words },
    config: 'all',
    default: [],
    help:
      'Leave out containers, files or host listeners (not read, not checked, counted in the summary): ' +
      'label:KEY=VALUE, name:GLOB, path:GLOB, listener:ADDRESS:PORT; repeatable; ' +
      "adds to the config's exclude and $MESH_AUDIT_EXCLUDE",
    commands: SCOPE,
  },
  {
    key: 'replaceLists',
    flag: '--replace-lists',
    arity: 'switch',
    reading: 'own',
    help:
      "--include, --exclude, --managed-root and --skip replace the config's (and environment's) lists instead of " +
      'adding to them',
    commands: SCOPE,
  },
  {
    key: 'ignoreFile',
    flag: '--ignore-file <file>',
    arity: 'single',
    reading: 'own',
    help:
      'Selectors to leave out, one a line, optionally `until YYYY-MM-DD` ' +
      '(default: ./.mesh-auditignore when present)',
    commands: SCOPE,
  },
  { key: 'ignore', arity: 'repeatable', config: 'all', default: [], commands: SCOPE },
  {
    key: 'policy',
    flag: '--policy <path>',
    arity: 'repeatable',
    // Packs add up in their own way: the config's relative to its folder, then each flag (src/cli/settings.ts).
    reading: 'own',
    config: 'all',
    default: [],
    help: POLICY_HELP,
    helpFor: {
      rules: {
        help:
          `${POLICY_HELP}. list, show, docs: every rule a scan runs; test, lint: only the packs added (the shipped ` +
          `one when none is)`,
      },
    },
    commands: POLICY,
  },
  {
    key: 'defaultPolicy',
    flag: '--no-default-policy',
    arity: 'switch',
    reading: 'false',
    config: 'all',
    default: true,
    help:
      "Do not load the shipped pack: only the --policy packs run, the shipped rules' findings are not checked " +
      '(config: defaultPolicy: false)',
    commands: POLICY,
  },
  {
    key: 'skip',
    flag: '--skip <ids>',
    arity: 'repeatable',
    reading: 'idList',
    env: { variable: 'MESH_AUDIT_SKIP', read: ids },
    config: 'all',
    default: [],
    help:
      "Rule ids not to evaluate, on purpose (comma-separated; repeatable; adds to the config's skip and " +
      '$MESH_AUDIT_SKIP): every report names them; an unknown id is refused',
    commands: ['scan', 'evaluate', 'premigrate', 'serve', 'config'],
  },
  {
    key: 'format',
    flag: '--format <list>',
    arity: 'single',
    reading: 'string',
    config: 'audit',
    default: DEFAULT_FORMATS,
    // The formats come from their table (src/report/formats.ts); premigrate has its own.
    help: `Comma-separated: ${formatListHelp('audit')} (default: ${DEFAULT_FORMATS})`,
    helpFor: {
      premigrate: {
        help: `Comma-separated: ${formatListHelp('premigrate')}`,
        shownDefault: PREMIGRATION_FORMATS.map((f) => f.name).join(','),
      },
    },
    commands: ['scan', 'evaluate', 'premigrate'],
  },
  {
    key: 'profile',
    flag: '--profile <name>',
    arity: 'single',
    reading: 'string',
    config: 'audit',
    default: 'all',
    help: `Only rules of this profile: ${PROFILE_HELP} (default: all)`,
    helpFor: { rules: { help: `Only rules of this profile (list, show, docs, test): ${PROFILE_HELP}` } },
    commands: ['scan', 'evaluate', 'rules', 'serve'],
    choices: PROFILE_CHOICES,
  },
  {
    key: 'baseline',
    flag: '--baseline <file|auto>',
    arity: 'single',
    reading: 'string',
    config: 'audit',
    default: undefined,
    help:
      'An earlier JSON report: mark findings new, unchanged or updated, list the absent; auto: the previous ' +
      'report in --out',
    helpFor: { serve: { help: 'An earlier JSON report: mark findings new, unchanged or updated, list the absent' } },
    commands: AUDIT_AND_SERVE,
  },
  {
    key: 'failOnNew',
    flag: '--fail-on-new',
    arity: 'switch',
    reading: 'true',
    config: 'audit',
    default: false,
    help: 'Exit 1 only for new findings (against --baseline) at or above --fail-on',
    commands: AUDIT,
  },
  {
    key: 'onlyNew',
    flag: '--only-new',
    arity: 'switch',
    reading: 'true',
    config: 'audit',
    default: false,
    help:
      'Text report: print only the findings new against --baseline, and what was not checked (the files keep ' +
      'every finding)',
    commands: AUDIT,
  },
  {
    key: 'promFile',
    flag: '--prom-file <path>',
    arity: 'single',
    reading: 'string',
    config: 'audit',
    default: undefined,
    help:
      "Also write the Prometheus metrics to this file (node_exporter's textfile folder; mode 0644, replaced " +
      'atomically)',
    commands: AUDIT,
  },
  {
    key: 'waivers',
    flag: '--waivers <file>',
    arity: 'single',
    reading: 'string',
    config: 'audit',
    default: undefined,
    help: 'YAML waivers: rule, subject pattern, justification, expiry',
    commands: AUDIT_AND_SERVE,
  },
  {
    key: 'alertmanager',
    // The flag names the URL alone; the config's section holds the credentials (src/alert/target.ts merges them).
    flag: '--alertmanager <url>',
    arity: 'single',
    reading: 'own',
    config: 'audit',
    configKeys: '(url, username, password[File], bearerToken[File], timeoutSeconds)',
    default: undefined,
    help:
      "Post findings as alerts to this Alertmanager (v2 API); absent ones are resolved. Credentials: the config's " +
      'alertmanager section or $MESH_AUDIT_ALERTMANAGER_PASSWORD / _BEARER_TOKEN, never in the URL',
    commands: AUDIT_AND_SERVE,
  },
  {
    key: 'alertTtl',
    flag: '--alert-ttl <hours>',
    arity: 'single',
    reading: 'own',
    default: 25,
    help: 'How long a posted alert lasts unless the next run renews it (default 25)',
    commands: AUDIT_AND_SERVE,
  },
  {
    key: 'lockTimeout',
    flag: '--lock-timeout <seconds>',
    arity: 'single',
    reading: 'own',
    default: DEFAULT_LOCK_TIMEOUT_SECONDS,
    help:
      `How long to wait while another run holds --out before giving up with exit 3 (default ` +
      `${DEFAULT_LOCK_TIMEOUT_SECONDS})`,
    helpFor: {
      premigrate: { help: 'How long to wait while another run holds --out before giving up with exit 3' },
    },
    commands: ['scan', 'evaluate', 'premigrate'],
  },
  { key: 'docsUrl', arity: 'single', config: 'audit', default: DEFAULT_DOCS_URL, commands: AUDIT_AND_SERVE },
];

/** A setting by its key (a key of the table: a typo is a programming error, thrown at start). */
export function settingOf(key: string): SettingSpec {
  const found = SETTINGS.find((s) => s.key === key);
  if (found === undefined) throw new Error(`no setting '${key}' in src/settings/registry.ts`);
  return found;
}

/** A setting's help on a command: the command's own wording, else the setting's. */
export function helpOf(spec: SettingSpec, command: SettingCommand): { help: string; shownDefault?: string } {
  const own = spec.helpFor?.[command];
  if (own !== undefined) return own;
  return { help: typeof spec.help === 'function' ? spec.help() : (spec.help ?? '') };
}

/** A setting's default value, worked out now. */
export function defaultOf(spec: SettingSpec): unknown {
  const value = typeof spec.default === 'function' ? (spec.default as () => unknown)() : spec.default;
  // A list of its own for each run: a run's settings never share one with the table.
  return Array.isArray(value) ? [...(value as unknown[])] : value;
}

/** The settings the config file holds, in the table's order. */
export const CONFIG_SETTINGS = SETTINGS.filter((s) => s.config !== undefined);

/** The environment's settings: mesh-audit's own variables first, then the ones it shares with other tools. */
export const ENV_SETTINGS = [
  ...SETTINGS.filter((s) => s.env?.variable.startsWith('MESH_AUDIT_') === true),
  ...SETTINGS.filter((s) => s.env !== undefined && !s.env.variable.startsWith('MESH_AUDIT_')),
] as readonly (SettingSpec & { env: NonNullable<SettingSpec['env']> })[];

/** The long flag that sets a setting, as a user types it (`managedRoots`: `--managed-root`). */
export function longFlagOf(spec: SettingSpec): string | undefined {
  return spec.flag?.match(/--[\w-]+/)?.[0];
}

/** `--config`'s help: where the file is found, then the keys it holds. */
export const CONFIG_HELP =
  `YAML config (default: $MESH_AUDIT_CONFIG, else ${SYSTEM_CONFIG} when present): ` +
  `${CONFIG_SETTINGS.filter((s) => s.config === 'all')
    .map((s) => s.key)
    .join(', ')}; for scan and evaluate also ` +
  CONFIG_SETTINGS.filter((s) => s.config === 'audit')
    .map((s) => (s.configKeys !== undefined ? `${s.key} ${s.configKeys}` : s.key))
    .join(', ');
