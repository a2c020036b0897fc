import type { Snapshot } from '../snapshot/types.js';
import type { Joins } from './joins.js';
import { subjectFactory, type Subject } from '../policy/subject.js';
import type { HostData } from '../policy/subject-data.js';

const HOST = subjectFactory('host');

/** The `host` set: the one host the snapshot is of, with what was and was not read. */
export function buildHost(snapshot: Snapshot, joins: Joins): Subject<HostData> {
  const host = joins.host;
  const unknown = [
    ...(joins.engineUnread ? HOST.unknown('docker', joins.engineUnread, ['container_count']) : []),
    ...(joins.ledgerUnread ? HOST.unknown('ledger', joins.ledgerUnread, ['ledger_count', 'node', 'adopted']) : []),
  ];
  return HOST.subject({
    id: host,
    data: {
      kind: 'host',
      id: host,
      host,
      hostname: host,
      node: snapshot.ledger.node ?? null,
      adopted: snapshot.ledger.adopted ?? false,
      complete: snapshot.problems.length === 0,
      problems: snapshot.problems.length,
      docker_available: snapshot.docker !== null,
      ledger_available: snapshot.ledger.available,
      container_count: snapshot.containers.length,
      file_count: snapshot.files.length,
      ledger_count: snapshot.ledger.entries.length,
    },
    unknown,
    locate: () => ({ physical: [], logical: [{ kind: 'host', name: host, fullyQualifiedName: host }] }),
    resource: null,
    module: null,
  });
}
