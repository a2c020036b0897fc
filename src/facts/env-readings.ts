import type { SafeValue } from '../secret/value.js';
import {
  DEFAULT_LABEL_KEYS,
  type Container,
  type EnvEntry,
  type FileRecord,
  type ScanConfig,
} from '../snapshot/types.js';

/**
 * An env file means what its consumer made of it (docs/ledger.md, "Env files: what each consumer reads"):
 * `docker run --env-file` and `podman run --env-file` keep values literally, Compose's `env_file:`
 * reads them like dotenv. This module turns a file's recorded readings into maps a rule compares a
 * container's env with, and decides from a container's labels and the config which consumer made it.
 */

/** One reading of a file: values by key (later lines win) and the keys the reading tool's own environment gives. */
export interface EnvReading {
  values: Record<string, SafeValue>;
  /**
   * Keys written without `=`, or whose value interpolates the tool's environment: any value (or none) is what the file
   * says.
   */
  caller: ReadonlySet<string>;
}

/** The readings of one file; null where the file gives none (not an env file, refused, or not recorded). */
export interface FileReadings {
  /** `docker run --env-file` (null: Docker's CLI refuses the file, or the snapshot predates the literal reading). */
  docker: EnvReading | null;
  /** `podman run --env-file`: Docker's reading but for a BOM kept in the first key and keys with blanks taken. */
  podman: EnvReading | null;
  /** Compose's `env_file:` (docker-compose 1.29). */
  compose: EnvReading | null;
  /** The snapshot holds only the Compose reading (made before the literal one was recorded). */
  composeOnly: boolean;
}

export type ReadingName = 'docker' | 'podman' | 'compose';
/** Which consumer made a container's env: one known, or `either` when nothing says. */
export type Consumer = 'docker' | 'compose' | 'either';

const readingCache = new WeakMap<readonly EnvEntry[], EnvReading>();
function readingOf(entries: readonly EnvEntry[], dropBom = false): EnvReading {
  const cached = dropBom ? undefined : readingCache.get(entries);
  if (cached) return cached;
  // Later lines win, in every reading.
  const last = new Map<string, SafeValue | null>();
  for (const e of entries) {
    const key = dropBom && e.line === 1 ? e.key.replace(/^\uFEFF/, '') : e.key;
    if (key !== '') last.set(key, e.value === undefined || e.caller === true ? null : e.value);
  }
  const values: Record<string, SafeValue> = {};
  const caller = new Set<string>();
  for (const [key, value] of last) {
    if (value === null) caller.add(key);
    else values[key] = value;
  }
  const reading = { values, caller };
  if (!dropBom) readingCache.set(entries, reading);
  return reading;
}

const fileCache = new WeakMap<FileRecord, FileReadings>();
/** The readings of an env file as recorded, each computed once per file. */
export function fileReadings(file: FileRecord | undefined): FileReadings {
  if (!file?.env) return { docker: null, podman: null, compose: null, composeOnly: false };
  let readings = fileCache.get(file);
  if (readings) return readings;
  const compose = readingOf(file.env);
  const literal = file.envLiteral;
  if (!literal) readings = { docker: null, podman: null, compose, composeOnly: true };
  else {
    const podman = readingOf(literal.entries);
    const docker = literal.dockerRefuses !== undefined ? null : literal.bom ? readingOf(literal.entries, true) : podman;
    readings = { docker, podman, compose, composeOnly: false };
  }
  fileCache.set(file, readings);
  return readings;
}

/** The readings each consumer may have made. */
export const READINGS_OF: Record<Consumer, readonly ReadingName[]> = {
  docker: ['docker', 'podman'],
  compose: ['compose'],
  either: ['docker', 'podman', 'compose'],
};

/**
 * Which consumer made a container's env, with the evidence: Compose's own labels (`com.docker.compose.*`)
 * say Compose; else the label `labels.envFileSyntax` (default `mesh.env-file-syntax`: `docker` or
 * `compose`); else the config's `envFileSyntax`; else nothing says, and either reading is no drift.
 */
export function consumerOf(c: Container, config: ScanConfig): { consumer: Consumer; evidence: string } {
  const project = c.labels['com.docker.compose.project'];
  const composeLabel =
    project !== undefined
      ? 'com.docker.compose.project'
      : Object.keys(c.labels).find((k) => k.startsWith('com.docker.compose.'));
  if (composeLabel !== undefined) return { consumer: 'compose', evidence: `made by Compose (label ${composeLabel})` };
  const labelKey = config.labels.envFileSyntax ?? DEFAULT_LABEL_KEYS.envFileSyntax!;
  const labelled = c.labels[labelKey];
  if (labelled === 'docker' || labelled === 'compose')
    return { consumer: labelled, evidence: `label ${labelKey}=${labelled}` };
  const configured = config.envFileSyntax ?? 'auto';
  if (configured !== 'auto') return { consumer: configured, evidence: `config envFileSyntax: ${configured}` };
  return { consumer: 'either', evidence: 'nothing says whether `docker run --env-file` or Compose made the container' };
}

/** The maps a rule compares a container's env with: the readings its consumer may have made (null: not one). */
export function candidateReadings(readings: FileReadings, consumer: Consumer): Record<ReadingName, EnvReading | null> {
  // A snapshot with only the Compose reading is judged by it, whatever the consumer, as the scanner that made it did.
  const names = readings.composeOnly ? (['compose'] as const) : READINGS_OF[consumer];
  return {
    docker: names.includes('docker') ? readings.docker : null,
    podman: names.includes('podman') ? readings.podman : null,
    compose: names.includes('compose') ? readings.compose : null,
  };
}

/** Whether any of the readings names a key (with a value, or as the tool's own variable). */
export function namedByAny(readings: readonly (EnvReading | null)[], key: string): boolean {
  // Speed: a loop, not `some`: this runs for every key of every container source, and a closure per call was
  // most of what building container_sources allocated (~30 MB at 10,000 containers).
  for (let i = 0; i < readings.length; i++) {
    const r = readings[i];
    if (r !== null && r !== undefined && (Object.hasOwn(r.values, key) || r.caller.has(key))) return true;
  }
  return false;
}
