import type { FileRecord } from '../snapshot/types.js';
import { envMap, fileUnknown } from './file-facts.js';
import type { Joins } from './joins.js';
import { subjectFactory, type Subject } from '../policy/subject.js';
import type { FileData } from '../policy/subject-data.js';
import { NONE } from './none.js';

const FILES = subjectFactory('files');

/** The `files` set: every file the snapshot holds, with what claims, names and mounts it. */
export function buildFiles(files: readonly FileRecord[], joins: Joins): Subject<FileData>[] {
  return files.map((f) => {
    const claims = joins.claimsOf('file', f.path);
    const data: FileData = {
      kind: 'file',
      id: f.path,
      host: joins.host,
      path: f.path,
      exists: f.kind !== 'missing',
      file_kind: f.kind,
      size: f.size ?? null,
      mode: f.mode ?? null,
      uid: f.uid ?? null,
      gid: f.gid ?? null,
      mtime: f.mtime ?? null,
      inode: f.inode ?? null,
      sha256: f.sha256 ?? null,
      link_target: f.linkTarget ?? null,
      error: f.error ?? null,
      is_env: f.env !== undefined,
      env: envMap(f),
      managed_root: joins.managedRootOf(f.path),
      claimed_by: claims.length === 0 ? NONE : claims.map((r) => r.entry.id!),
      claimed: claims.length > 0,
      referenced_by: joins.referencedBy(f.path),
      mounted_by: joins.mountedBy(f.path),
      formerly_claimed_by: joins.formerlyOf('file', f.path),
    };
    const unreadable = fileUnknown(f, f.path);
    // Speed: nearly every file has every fact known; its unknown facts are gathered only when one is not.
    const unknown =
      !joins.ledgerUnread && !joins.containersIncomplete && !unreadable
        ? []
        : [
            ...(joins.ledgerUnread
              ? FILES.unknown('ledger', joins.ledgerUnread, [
                  'claimed_by',
                  'claimed',
                  'referenced_by',
                  'formerly_claimed_by',
                ])
              : []),
            ...(joins.containersIncomplete ? FILES.unknown('docker', joins.containersIncomplete, ['mounted_by']) : []),
            ...(unreadable ? FILES.unknown('files', unreadable.reason, unreadable.fields) : []),
          ];
    const resource = claims[0]?.entry.id ?? data.formerly_claimed_by[0]?.id ?? null;
    return FILES.subject({
      id: f.path,
      data,
      unknown,
      locate: () => ({ physical: [{ path: f.path }], logical: [] }),
      resource,
      module: joins.moduleOfId(resource),
    });
  });
}
