import type { SafeValue } from '../secret/value.js';
import type { EnvEntry, FileRecord } from '../snapshot/types.js';
import { fileReadings } from './env-readings.js';
import type { FileData, FileFacts } from '../policy/subject-data.js';

/** Facts of a file that come from reading it. */
const FILE_READ_FIELDS = [
  'exists',
  'file_kind',
  'size',
  'mode',
  'uid',
  'gid',
  'mtime',
  'inode',
  'sha256',
  'link_target',
  'is_env',
  'env',
] as const satisfies readonly (keyof FileData)[];
export type FileReadField = (typeof FILE_READ_FIELDS)[number];

/** Facts of a file another subject shows (FileFacts) that come from reading it. */
const SHOWN_READ_FIELDS = [
  'exists',
  'file_kind',
  'sha256',
  'inode',
  'is_env',
  'env',
] as const satisfies readonly (keyof FileFacts & FileReadField)[];
export type ShownReadField = (typeof SHOWN_READ_FIELDS)[number];

/** Of a file's facts not read, those another subject shows of it (its size or owner it does not). */
export const shownUnknown = (fields: readonly FileReadField[]): ShownReadField[] =>
  SHOWN_READ_FIELDS.filter((f) => fields.includes(f));

/**
 * The facts of a file that were not read, and why (null: all were). A file read in part (too large
 * to parse, digested) keeps what was read: its kind, size, digest.
 */
export function fileUnknown(
  file: FileRecord | undefined,
  path: string,
): { fields: FileReadField[]; reason: string } | null {
  if (!file) return { fields: [...FILE_READ_FIELDS], reason: `${path} was not read` };
  if (file.kind === 'unknown')
    return {
      fields: [...FILE_READ_FIELDS],
      reason: `${path} not read${file.error !== undefined ? `: ${file.error}` : ''}`,
    };
  if (file.error === undefined || file.kind === 'missing') return null;
  const has: Record<(typeof FILE_READ_FIELDS)[number], boolean> = {
    exists: true,
    file_kind: true,
    size: file.size !== undefined,
    mode: file.mode !== undefined,
    uid: file.uid !== undefined,
    gid: file.gid !== undefined,
    mtime: file.mtime !== undefined,
    inode: file.inode !== undefined,
    sha256: file.kind !== 'file' || file.sha256 !== undefined,
    link_target: file.kind !== 'symlink' || file.linkTarget !== undefined,
    // An env file not parsed: neither its keys nor whether it is one are known.
    is_env: file.env !== undefined,
    env: file.env !== undefined,
  };
  const fields = FILE_READ_FIELDS.filter((f) => !has[f]);
  return fields.length === 0 ? null : { fields, reason: `${path} not read: ${file.error}` };
}

/**
 * A file's env as Compose's `env_file:` reads it (the file's own `env` fact): one map per file, shared
 * by every subject that shows it; rules never write to their data. Keys whose value the reading tool's
 * environment gives are not in it (env-readings.ts).
 */
export function envMap(file: FileRecord | undefined): Record<string, SafeValue> | null {
  return fileReadings(file).compose?.values ?? null;
}

/** The line of an env file where a key is set (the last one: later lines win), in either reading. */
export function envLine(file: FileRecord | undefined, key: unknown): number | undefined {
  if (typeof key !== 'string' || !file?.env) return undefined;
  const lineIn = (entries: readonly EnvEntry[] | undefined) => entries?.filter((e) => e.key === key).at(-1)?.line;
  return (
    lineIn(file.env) ??
    lineIn(file.envLiteral?.entries) ??
    lineIn(file.envLiteral?.entries.map((e) => (e.line === 1 ? { ...e, key: e.key.replace(/^\uFEFF/, '') } : e)))
  );
}

/** A file as another subject shows it; `withEnv` false: its env is not shown (undefined). */
export function fileFacts(file: FileRecord | undefined, withEnv = true): FileFacts {
  if (!file)
    return {
      known: false,
      exists: null,
      file_kind: null,
      sha256: null,
      inode: null,
      is_env: false,
      env: withEnv ? null : undefined,
    };
  return {
    known: true,
    exists: file.kind !== 'missing',
    file_kind: file.kind,
    sha256: file.sha256 ?? null,
    inode: file.inode ?? null,
    is_env: file.env !== undefined,
    env: withEnv ? envMap(file) : undefined,
    error: file.error ?? null,
  };
}
