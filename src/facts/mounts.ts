import { containerLogical, type BuiltContainer } from './containers.js';
import { fileFacts, fileUnknown, shownUnknown } from './file-facts.js';
import type { Joins } from './joins.js';
import { subjectFactory, type Subject } from '../policy/subject.js';
import type { MountData } from '../policy/subject-data.js';
import type { Mount } from '../snapshot/types.js';

const MOUNTS = subjectFactory('mounts');

/** One mount of one container, by the id its subject has (the order of the set). */
export interface MountPart {
  id: string;
  built: BuiltContainer;
  mount: Mount;
}

/** Every mount of every container, in container order: what the `mounts` set is made of. */
export const mountParts = (containers: readonly BuiltContainer[]): MountPart[] =>
  containers.flatMap((built) =>
    built.container.mounts.map((mount) => ({ id: `${built.container.name}:${mount.destination}`, built, mount })),
  );

/** The `mounts` set: every mount of every container, with what the container really sees of a single-file bind. */
export function buildMounts(containers: readonly BuiltContainer[], joins: Joins): Subject<MountData>[] {
  return mountParts(containers).map((part) => mountSubject(part, joins));
}

/** The subject of one mount. */
export function mountSubject({ id, built, mount: m }: MountPart, joins: Joins): Subject<MountData> {
  const { container: c, subject } = built;
  const hostFile = joins.filesByPath.get(m.source);
  const bound = c.proc.available ? c.proc.boundFiles.find((b) => b.destination === m.destination) : undefined;
  const unreadable = m.type === 'bind' ? fileUnknown(hostFile, m.source) : null;
  // What the container sees is read from /proc for single-file binds only; a container that is
  // not running sees nothing (it binds the host file as it is when it starts).
  const procUnread =
    !c.proc.available && c.state.running && m.type === 'bind' && hostFile?.kind === 'file' ? c.proc.reason : null;
  // Speed: nearly every mount has every fact known; its unknown facts are gathered only when one is not.
  const unknown =
    procUnread === null && !unreadable
      ? []
      : [
          ...(procUnread === null
            ? []
            : MOUNTS.unknown('proc', `/proc of ${c.name} not read: ${procUnread}`, ['seen'])),
          ...(unreadable
            ? MOUNTS.unknown('files', unreadable.reason, [
                ...(unreadable.fields.includes('file_kind') ? (['single_file'] as const) : []),
                ...shownUnknown(unreadable.fields)
                  .filter((f) => f !== 'env')
                  .map((f) => `host_file.${f}` as const),
              ])
            : []),
        ];
  return MOUNTS.subject({
    id: c.name,
    part: m.destination,
    unknown,
    data: {
      kind: 'mount',
      id,
      host: joins.host,
      container: {
        name: c.name,
        running: c.state.running,
        status: c.state.status,
        proc_available: c.proc.available,
      },
      type: m.type,
      source: m.source,
      destination: m.destination,
      rw: m.rw,
      single_file: m.type === 'bind' && (hostFile?.kind === 'file' || bound !== undefined),
      host_file: fileFacts(hostFile, false),
      seen: bound ? { inode: bound.inode, sha256: bound.sha256, error: bound.error ?? null } : null,
    },
    locate: () => ({
      physical: m.type === 'bind' && hostFile ? [{ path: m.source }] : [],
      logical: [containerLogical(joins.host, c.name)],
    }),
    resource: subject.resource,
    module: subject.module,
    ...(subject.allowances ? { allowances: subject.allowances } : {}),
  });
}
