import { readInput } from './read-input.js';
import { MeshAuditError } from './errors.js';
import { parseYaml } from './policy/load.js';
import { DEFAULT_LABEL_KEYS, type LabelKeys } from './snapshot/types.js';
import { validatorFor } from './validate.js';
import { DEFAULT_MAX_FILES } from './collect/files.js';

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
}

export const DEFAULT_LEDGER = '/var/lib/mesh-host/ledger.json';

export const DEFAULT_SETTINGS: ScanSettings = {
  ledger: DEFAULT_LEDGER,
  managedRoots: [],
  labels: DEFAULT_LABEL_KEYS,
  dockerHost: undefined,
  root: '/',
  hostname: undefined,
  keep: 30,
  dockerTimeoutSeconds: 60,
  maxFiles: DEFAULT_MAX_FILES,
};

const absolute = { type: 'string', pattern: '^/' };
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ledger: absolute,
    managedRoots: { type: 'array', items: absolute },
    labels: {
      type: 'object',
      additionalProperties: false,
      properties: { module: { type: 'string' }, resource: { type: 'string' }, sources: { type: 'string' }, sourceDigests: { type: 'string' } },
    },
    dockerHost: { type: 'string' },
    root: absolute,
    hostname: { type: 'string', minLength: 1 },
    keep: { type: 'integer', minimum: 1 },
    dockerTimeoutSeconds: { type: 'number', exclusiveMinimum: 0 },
    maxFiles: { type: 'integer', minimum: 1 },
  },
} as const;
const validateConfig = validatorFor('config', configSchema);

export type ConfigFile = Partial<Omit<ScanSettings, 'labels'>> & { labels?: Partial<LabelKeys> };

export async function loadConfigFile(path: string): Promise<ConfigFile> {
  const { value } = parseYaml(await readInput(path, 'config'), path);
  if (value === null || value === undefined) return {};
  if (!validateConfig(value)) {
    const e = validateConfig.errors![0]!;
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params['additionalProperty'])}'` : '';
    throw new MeshAuditError(`${path}: ${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${extra}`);
  }
  return value as ConfigFile;
}

/** One place where the layers meet: flags over the config file over defaults, each kept whole. */
export function mergeSettings(file: ConfigFile, flags: ConfigFile): ScanSettings {
  const pick = <K extends keyof ScanSettings>(key: K): ScanSettings[K] =>
    (flags[key as keyof ConfigFile] ?? file[key as keyof ConfigFile] ?? DEFAULT_SETTINGS[key]) as ScanSettings[K];
  return {
    ledger: pick('ledger'),
    managedRoots: flags.managedRoots && flags.managedRoots.length > 0 ? flags.managedRoots : (file.managedRoots ?? DEFAULT_SETTINGS.managedRoots),
    labels: { ...DEFAULT_LABEL_KEYS, ...file.labels, ...flags.labels },
    dockerHost: pick('dockerHost'),
    root: pick('root'),
    hostname: pick('hostname'),
    keep: pick('keep'),
    dockerTimeoutSeconds: pick('dockerTimeoutSeconds'),
    maxFiles: pick('maxFiles'),
  };
}
