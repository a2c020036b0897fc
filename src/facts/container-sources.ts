import type { Container, FileRecord } from '../snapshot/types.js';
import { containerLogical, type BuiltContainer } from './containers.js';
import { envLine, fileFacts, fileUnknown, shownUnknown } from './file-facts.js';
import { candidateReadings, consumerOf, fileReadings, namedByAny, READINGS_OF, type Consumer } from './env-readings.js';
import type { Joins } from './joins.js';
import { inlineEnvOf, type InlineEnv } from './inline-env.js';
import { subjectFactory, type Subject } from '../policy/subject.js';
import type { ContainerSourceData } from '../policy/subject-data.js';
import { NONE } from './none.js';

/**
 * Keys the container holds that no env file it was composed from names any more, with the evidence
 * that they came from the file: the image does not set them (or sets another value), or an earlier
 * snapshot's file named them. A key given inline (Compose's `environment:`, the ledger's `env:`:
 * inline-env.ts) is never dropped. The image is evidence only where what the container was given
 * inline is known in full (a Compose file read, a ledger entry claiming it); a key with no evidence
 * (the image not read, an unclaimed container, no history) is not listed. A key the engine writes by
 * itself (Podman's PATH, TERM, container, HOME, HOSTNAME: src/engine/engine-env.ts) and the image does not set
 * is listed only with history: its absence from the image proves nothing. Each file is read as the
 * container's consumer reads it (every reading when nothing says which): a key any of those readings
 * names — a key written without `=` too — is not dropped. `undecided`: keys the image would give as
 * dropped, but whether they were given inline is unknown (a Compose file or the ledger not read).
 */
function droppedKeys(
  c: Container,
  path: string,
  allPaths: readonly string[],
  consumer: Consumer,
  inline: InlineEnv,
  joins: Joins,
): { keys: string[]; evidence: Record<string, string>; undecided: string[] } {
  // The readings a file's consumer may have made (candidateReadings' maps, as a list; null: not one).
  const readingsOf = (p: string) => {
    const readings = fileReadings(joins.filesByPath.get(p));
    return (readings.composeOnly ? (['compose'] as const) : READINGS_OF[consumer]).map((name) => readings[name]);
  };
  const own = readingsOf(path);
  if (own.every((r) => r === null)) return { keys: [], evidence: {}, undecided: [] };
  const elsewhere = allPaths.length === 1 ? [] : allPaths.filter((p) => p !== path).flatMap(readingsOf);
  const found: [string, string][] = [];
  const undecided: string[] = [];
  // Speed: the keys are sorted once found (few are), not all of them first.
  for (const key of Object.keys(c.env)) {
    if (namedByAny(own, key) || namedByAny(elsewhere, key) || inline.keys.has(key)) continue;
    const fromImage = c.imageEnv !== undefined && Object.hasOwn(c.imageEnv, key) ? c.imageEnv[key] : undefined;
    const byImage =
      c.imageEnv !== undefined && fromImage === undefined && !joins.engineAdded.has(key)
        ? 'the image does not set it'
        : fromImage !== undefined && fromImage.digest !== c.env[key]!.digest
          ? 'the image sets another value'
          : null;
    if (byImage !== null && inline.complete) found.push([key, byImage]);
    else if (fromImage === undefined && joins.composedBefore(path, READINGS_OF[consumer]).has(key))
      found.push([key, 'an earlier snapshot of the file named it']);
    else if (byImage !== null && inline.unknown !== null) undecided.push(key);
  }
  const evidence = Object.fromEntries(found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { keys: Object.keys(evidence), evidence, undecided: undecided.sort() };
}

const SOURCES = subjectFactory('container_sources');

/** The part of the subject standing for the files an unread ledger names as a container's sources. */
const LEDGER_SOURCES_PART = '(sources named by the ledger)';

/** A subject of the `container_sources` set: a container and one of its files (null: those an unread ledger names). */
export interface SourcePart {
  /** The subject's id: what the set is ordered by. */
  id: string;
  built: BuiltContainer;
  path: string | null;
}

/** The files a container was built from, each once: its labels' (mesh.sources), then its claiming entries'. */
function sourcePathsOf({ subject, claims }: BuiltContainer): {
  paths: readonly string[];
  fromLedger: readonly string[];
} {
  const fromLedger = claims.length === 0 ? NONE : claims.flatMap((r) => r.entry.sources ?? []);
  const labelled = subject.data.mesh.sources;
  // Speed: most containers name no file, or one, and only by label.
  if (fromLedger.length === 0 && labelled.length < 2) return { paths: labelled, fromLedger };
  return { paths: [...new Set([...labelled, ...fromLedger])], fromLedger };
}

/** Every part of the `container_sources` set, in container order. */
export const sourceParts = (containers: readonly BuiltContainer[], joins: Joins): SourcePart[] =>
  containers.flatMap((built) => {
    const { name } = built.container;
    return [
      ...sourcePathsOf(built).paths.map((path) => ({ id: `${name} <- ${path}`, built, path })),
      ...(joins.ledgerUnread ? [{ id: `${name} <- ${LEDGER_SOURCES_PART}`, built, path: null }] : []),
    ];
  });

/** The `container_sources` set: a container paired with each file it was built from (labels and ledger). */
export function buildContainerSources(
  containers: readonly BuiltContainer[],
  joins: Joins,
): Subject<ContainerSourceData>[] {
  return sourceSubjects(sourceParts(containers, joins), joins);
}

/** What every source of one container shares: its files, what it was given inline, which consumer made it. */
interface ContainerFacts {
  paths: readonly string[];
  fromLedger: readonly string[];
  inline: InlineEnv;
  consumer: Consumer;
  evidence: string;
}

/**
 * The subjects of some parts of the set. What a container's parts share is worked out once for each run of its
 * parts (they come together: sorted by id, `NAME <- PATH`).
 */
export function sourceSubjects(parts: readonly SourcePart[], joins: Joins): Subject<ContainerSourceData>[] {
  let last: { built: BuiltContainer; facts: ContainerFacts } | undefined;
  return parts.map(({ id, built, path }) => {
    if (path === null) return ledgerSourcesUnknown(id, built, joins, joins.ledgerUnread ?? '');
    if (last?.built !== built) {
      const { container: c, claims } = built;
      const { consumer, evidence } = consumerOf(c, joins.config);
      const { paths, fromLedger } = sourcePathsOf(built);
      const inline = inlineEnvOf(c, claims, joins.filesByPath, joins.ledgerUnread);
      last = { built, facts: { paths, fromLedger, inline, consumer, evidence } };
    }
    return sourceSubject(id, built, last.facts, path, joins);
  });
}

/** The container as each of its sources shows it. */
const shownContainer = (
  c: Container,
  subject: BuiltContainer['subject'],
  claimedBy: string[],
): ContainerSourceData['container'] => ({
  name: c.name,
  container_id: subject.data.container_id,
  running: c.state.running,
  status: c.state.status,
  env: c.env,
  mesh: subject.data.mesh,
  claimed_by: claimedBy,
});

/** The subject of one file of a container; `id`: its part's (the order of the set). */
function sourceSubject(
  id: string,
  { container: c, subject }: BuiltContainer,
  { paths, fromLedger, inline, consumer, evidence }: ContainerFacts,
  path: string,
  joins: Joins,
): Subject<ContainerSourceData> {
  const { mesh } = subject.data;
  const file = joins.filesByPath.get(path);
  const index = mesh.sources.indexOf(path);
  const readings = fileReadings(file);
  const candidates = candidateReadings(readings, consumer);
  const dropped = droppedKeys(c, path, paths, consumer, inline, joins);
  const unknown = [
    ...sourceUnknown(path, paths, file, joins),
    ...(inline.unknown !== null
      ? SOURCES.unknown(
          inline.unknown.source,
          dropped.undecided.length > 0
            ? `whether ${c.name} was given ${dropped.undecided.join(', ')} inline is not known: ` +
                inline.unknown.reason
            : inline.unknown.reason,
          // The dropped keys are unknown only where the inline ones would decide one.
          dropped.undecided.length > 0
            ? ['dropped_keys', 'dropped_evidence', 'inline_keys', 'inline_from']
            : ['inline_keys', 'inline_from'],
        )
      : []),
  ];
  return SOURCES.subject({
    id: c.name,
    part: path,
    unknown,
    data: {
      kind: 'container-source',
      id,
      host: joins.host,
      container: shownContainer(c, subject, subject.data.claimed_by),
      source: { path, ...fileFacts(file) },
      index: index >= 0 ? index : null,
      recorded_digest: index >= 0 ? (mesh.source_digests[index] ?? null) : null,
      named_by: [...(index >= 0 ? ['label' as const] : []), ...(fromLedger.includes(path) ? ['ledger' as const] : [])],
      // A snapshot with the Compose reading alone (made before the literal one was kept) is judged by it.
      reading: readings.composeOnly ? 'compose' : consumer,
      reading_evidence: readings.composeOnly ? `${evidence}; the snapshot holds the Compose reading only` : evidence,
      readings: {
        docker: candidates.docker?.values ?? null,
        podman: candidates.podman?.values ?? null,
        compose: candidates.compose?.values ?? null,
      },
      dropped_keys: dropped.keys,
      dropped_evidence: dropped.evidence,
      inline_keys: [...inline.keys].sort(),
      inline_from: inline.from,
    },
    locate: (item) => {
      const line = envLine(file, item);
      return {
        physical: file ? [{ path, ...(line !== undefined ? { line } : {}) }] : [],
        logical: [containerLogical(joins.host, c.name)],
      };
    },
    resource: subject.resource,
    module: subject.module,
  });
}

/**
 * With the ledger not read, the files it names as a container's sources are not known: one subject
 * stands for them, wholly unknown, so that every container_sources rule is listed as not checked on
 * the container rather than its findings on those files going silently.
 */
function ledgerSourcesUnknown(
  id: string,
  { container: c, subject }: BuiltContainer,
  joins: Joins,
  reason: string,
): Subject<ContainerSourceData> {
  const part = LEDGER_SOURCES_PART;
  return SOURCES.subject({
    id: c.name,
    part,
    unknown: SOURCES.wholly('ledger', reason),
    data: {
      kind: 'container-source',
      id,
      host: joins.host,
      container: shownContainer(c, subject, []),
      source: { path: '', ...fileFacts(undefined) },
      index: null,
      recorded_digest: null,
      named_by: ['ledger'],
      reading: 'either',
      reading_evidence: reason,
      readings: { docker: null, podman: null, compose: null },
      dropped_keys: [],
      dropped_evidence: {},
      inline_keys: [],
      inline_from: [],
    },
    locate: () => ({ physical: [], logical: [containerLogical(joins.host, c.name)] }),
    resource: subject.resource,
    module: subject.module,
  });
}

function sourceUnknown(path: string, paths: readonly string[], file: FileRecord | undefined, joins: Joins) {
  const unreadable = fileUnknown(file, path);
  // Keys named by any of the container's env files; one of them not read leaves them unknown.
  const otherUnread = paths
    .filter((p) => p !== path)
    .map((p) => fileUnknown(joins.filesByPath.get(p), p))
    .find((u) => u !== null && u.fields.includes('env'));
  // Why the dropped keys are unknown: the source's own reason when it was not read in full, else another env file's.
  const droppedUnread = unreadable?.fields.includes('env') || otherUnread ? (unreadable ?? otherUnread) : undefined;
  return [
    ...(joins.ledgerUnread ? SOURCES.unknown('ledger', joins.ledgerUnread, ['container.claimed_by', 'named_by']) : []),
    ...(unreadable
      ? SOURCES.unknown(
          'files',
          unreadable.reason,
          shownUnknown(unreadable.fields).map((f) => `source.${f}` as const),
        )
      : []),
    ...(droppedUnread ? SOURCES.unknown('files', droppedUnread.reason, ['dropped_keys', 'dropped_evidence']) : []),
    // The readings are the file's env, read each consumer's way: unknown with it.
    ...(unreadable?.fields.includes('env') ? SOURCES.unknown('files', unreadable.reason, ['readings']) : []),
  ];
}
