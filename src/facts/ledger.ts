import type { LedgerRecord, Snapshot } from '../snapshot/types.js';
import { fileFacts, fileUnknown, shownUnknown } from './file-facts.js';
import type { Joins } from './joins.js';
import { subjectFactory, type Subject } from '../policy/subject.js';
import type { LedgerEntryData } from '../policy/subject-data.js';
import { NONE, orNone } from './none.js';

const LEDGER = subjectFactory('ledger');

/** The `ledger` set: every entry, valid or not, with whether its target is there and who else claims it. */
export function buildLedger(ledger: Snapshot['ledger'], joins: Joins): Subject<LedgerEntryData>[] {
  return ledger.entries.map((r) => {
    const { data, targetFile } = entryData(r, ledger.adopted ?? false, joins);
    const { type, target } = data;
    const fileUnread = type === 'file' && target !== null ? fileUnknown(targetFile, target) : null;
    const objectUnread = type === 'network' || type === 'volume' ? joins.objectsUnread(type) : null;
    // Speed: nearly every entry has every fact known; its unknown facts are gathered only when one is not.
    const containerUnread = type === 'container' && data.target_container === null && joins.containersIncomplete;
    const unknown =
      !objectUnread && !containerUnread && !fileUnread
        ? []
        : [
            ...(objectUnread
              ? LEDGER.unknown(type === 'network' ? 'networks' : 'volumes', objectUnread, ['present'])
              : []),
            ...(containerUnread ? LEDGER.unknown('docker', containerUnread, ['present', 'target_container']) : []),
            ...(fileUnread
              ? LEDGER.unknown('files', fileUnread.reason, [
                  ...(fileUnread.fields.includes('exists') ? (['present'] as const) : []),
                  ...shownUnknown(fileUnread.fields).map((f) => `target_file.${f}` as const),
                ])
              : []),
          ];
    return LEDGER.subject({
      id: data.id,
      data,
      unknown,
      locate: () => ({
        physical: [
          { path: joins.ledgerPath, line: r.line },
          ...(targetFile && targetFile.kind !== 'missing' ? [{ path: targetFile.path }] : []),
        ],
        logical: [{ kind: 'ledger-entry', name: data.id, fullyQualifiedName: `${joins.host}/ledger/${data.id}` }],
      }),
      resource: r.entry.id ?? null,
      module: r.entry.module ?? null,
    });
  });
}

function entryData(r: LedgerRecord, adopted: boolean, joins: Joins) {
  const e = r.entry;
  const type = e.type ?? null;
  const target = e.target ?? null;
  const targetContainer = type === 'container' && target !== null ? joins.containerNamed(target) : undefined;
  const targetFile = type === 'file' && target !== null ? joins.filesByPath.get(target) : undefined;
  const data: LedgerEntryData = {
    kind: 'ledger-entry',
    id: e.id ?? `line ${r.line}`,
    host: joins.host,
    adopted,
    line: r.line,
    valid: r.valid,
    errors: r.errors,
    entry_id: e.id ?? null,
    type,
    target,
    origin: e.origin ?? null,
    module: e.module ?? null,
    holds: e.holds ?? NONE,
    digest: e.digest ?? null,
    sources: e.sources ?? NONE,
    applied_at: e.applied_at ?? null,
    extra: e.extra ?? {},
    present:
      type === 'container'
        ? targetContainer !== undefined
        : type === 'file'
          ? targetFile
            ? targetFile.kind !== 'missing'
            : null
          : (type === 'network' || type === 'volume') && target !== null
            ? joins.objectPresent(type, target)
            : null,
    target_container: targetContainer
      ? { name: targetContainer.name, status: targetContainer.status, running: targetContainer.running }
      : null,
    target_file: type === 'file' ? fileFacts(targetFile) : null,
    co_claimants: joins.coClaimants(r),
    former_targets: orNone(
      (e.id === undefined ? NONE : joins.formerTargetsOf(e.id)).map((f) => ({
        target: f.target,
        last_seen: f.last_seen,
        changed_at: f.changed_at,
      })),
    ),
  };
  return { data, targetFile };
}
