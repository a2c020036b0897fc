import type { Container, FileRecord, LedgerRecord } from '../snapshot/types.js';
import { COMPOSE_LABELS, composeFilesOf, extendedFile } from '../engine/compose-labels.js';
import type { FactSource } from '../policy/subject.js';

/**
 * The env keys a container was given inline — beside its env files, not from them — with the evidence
 * (docs/ledger.md, "Env files"): for a container Compose made, its service's `environment:` in the Compose files
 * its labels name; for one the mesh made with `docker run -e`, the `env:` of the ledger entries claiming
 * it. A key given inline is never one dropped from an env file (MA1004).
 *
 * `complete`: whether the keys are all the container was given inline, so that a key it holds beyond
 * them, its image and its files came from a file (the image's absence is then evidence). Not so for a
 * container no ledger entry claims, made by `docker run`: nothing records what it was given.
 * `unknown`: the evidence could not be read (a Compose file, the ledger): a key it would decide is unknown.
 */
export interface InlineEnv {
  keys: ReadonlySet<string>;
  complete: boolean;
  unknown: { source: FactSource; reason: string } | null;
  /** Where the keys come from, for the reader: `Compose file …, service …` or `ledger entry …`. */
  from: string[];
}

const EXTENDS_DEPTH = 16;

export function inlineEnvOf(
  c: Container,
  claims: readonly LedgerRecord[],
  filesByPath: ReadonlyMap<string, FileRecord>,
  ledgerUnread: string | null,
): InlineEnv {
  if (Object.keys(c.labels).some((k) => k.startsWith('com.docker.compose.'))) return composeInline(c, filesByPath);
  const keys = new Set(claims.flatMap((r) => r.entry.env ?? []));
  return {
    keys,
    complete: ledgerUnread === null && claims.length > 0,
    unknown: ledgerUnread !== null ? { source: 'ledger', reason: ledgerUnread } : null,
    from: claims.filter((r) => r.entry.env !== undefined).map((r) => `ledger entry ${r.entry.id ?? '?'}`),
  };
}

function composeInline(c: Container, filesByPath: ReadonlyMap<string, FileRecord>): InlineEnv {
  const unknown = (reason: string): InlineEnv => ({
    keys: new Set(),
    complete: false,
    unknown: { source: 'files', reason: `${c.name} was made by Compose, but ${reason}` },
    from: [],
  });
  const service = c.labels[COMPOSE_LABELS.service];
  if (service === undefined) return unknown(`its labels name no service (label ${COMPOSE_LABELS.service})`);
  const files = composeFilesOf(c.labels);
  if ('unknown' in files) return unknown(files.unknown);
  const keys = new Set<string>();
  let defined = false;
  // Each file's service adds its keys (Compose merges `environment:` over the files, later ones winning).
  for (const path of files.paths) {
    const found = serviceKeys(path, service, filesByPath, 0);
    if ('unknown' in found) return unknown(found.unknown);
    if (found.keys === null) continue;
    defined = true;
    for (const k of found.keys) keys.add(k);
  }
  if (!defined) return unknown(`none of its Compose files (${files.paths.join(', ')}) defines service ${service}`);
  return { keys, complete: true, unknown: null, from: [`Compose file ${files.paths.join(', ')}, service ${service}`] };
}

/** The keys a service of one file gives inline, following `extends:`; null when that file does not define it. */
function serviceKeys(
  path: string,
  service: string,
  filesByPath: ReadonlyMap<string, FileRecord>,
  depth: number,
): { keys: string[] | null } | { unknown: string } {
  const file = filesByPath.get(path);
  if (file === undefined) return { unknown: `its Compose file ${path} was not read` };
  if (file.kind === 'missing') return { unknown: `its Compose file ${path} is gone` };
  if (file.error !== undefined) return { unknown: `its Compose file ${path} could not be read (${file.error})` };
  if (file.compose === undefined) return { unknown: `its Compose file ${path} was not read as one` };
  if ('error' in file.compose)
    return { unknown: `its Compose file ${path} could not be read as one (${file.compose.error})` };
  const s = Object.hasOwn(file.compose.services, service) ? file.compose.services[service] : undefined;
  if (s === undefined) return { keys: null };
  if (s.extends === undefined) return { keys: s.environment };
  if (depth >= EXTENDS_DEPTH) return { unknown: `its service ${service} extends more than ${EXTENDS_DEPTH} deep` };
  const base = serviceKeys(
    s.extends.file !== undefined ? extendedFile(path, s.extends.file) : path,
    s.extends.service,
    filesByPath,
    depth + 1,
  );
  if ('unknown' in base) return base;
  if (base.keys === null)
    return { unknown: `service ${service} in ${path} extends ${s.extends.service}, which is not defined` };
  return { keys: [...base.keys, ...s.environment] };
}
