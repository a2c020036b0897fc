import { COMPOSE_LABELS, composeFilesOf } from '../engine/compose-labels.js';
import { pastOfAll, type HistoryInput } from '../facts/history.js';
import type { Container, FileRecord, Ledger, LedgerEntry, Problem } from '../snapshot/types.js';
import { compareText } from '../text/compare.js';
import type { ComposePool } from './compose-pool.js';
import type { CollectContext, Collector } from './contract.js';
import { collectFiles } from './files.js';

export interface FilesContext extends CollectContext {
  /** The ledger as its collector read it: its targets and sources. */
  ledger: Ledger;
  /** The engine's containers: their label sources, bind mounts and Compose files. */
  containers: readonly Container[];
  /** The host's previous snapshots: their former targets are read too (097). */
  earlier: HistoryInput;
  /** The Compose files' reader when the container list started one (src/collect/compose-start.ts). */
  compose: ComposePool | undefined;
}

/**
 * The files' collector (src/collect/contract.ts), run after the ledger and the engine name them: every file they and
 * the host's memory name, and the managed roots, read by src/collect/files.ts. What could not be read was not
 * checked: each says so, and the scan is incomplete.
 */
export const filesCollector: Collector<FilesContext, FileRecord[]> = {
  async collect({ settings, scope, safe, progress, ledger, containers, earlier, compose, cache }) {
    const { paths, envPaths, composePaths } = filesToRead(
      ledger.entries.map((r) => r.entry),
      containers,
      earlier,
      settings.labels.sources,
      scope,
    );
    progress(`reading ${new Set(paths).size} files and ${settings.managedRoots.length} managed roots`);
    const { files, problems } = await collectFiles({
      root: settings.root,
      paths: [...new Set(paths)].filter((p) => p.startsWith('/')),
      envPaths,
      composePaths,
      ...(compose !== undefined ? { compose } : {}),
      managedRoots: settings.managedRoots,
      maxFiles: settings.maxFiles,
      safe,
      ...(scope ? { skip: (path: string) => !scope.path(path) } : {}),
      ...(cache !== undefined ? { cache } : {}),
    });
    return { part: files, problems: [...problems, ...filesNotChecked(files)], notes: [] };
  },
  unread({ settings, ledger }, reason) {
    // The ledger's files and the managed roots are there, unknown: none reads as missing, or as unclaimed by its
    // absence. (Those only containers name are unknown by having no record: src/facts/file-facts.ts, fileUnknown.)
    const targets = ledger.entries.flatMap((r) =>
      r.entry.type === 'file' && typeof r.entry.target === 'string' && r.entry.target.startsWith('/')
        ? [r.entry.target]
        : [],
    );
    const unread = [...new Set([...targets, ...settings.managedRoots])].sort(compareText);
    return {
      part: unread.map((path): FileRecord => ({ path, kind: 'unknown', error: `not read: ${reason}` })),
      // Its one problem says it: not one more per file.
      problems: [{ source: 'files', message: `the files and managed roots not read: ${reason}` }],
      notes: [],
    };
  },
};

/**
 * Every file the ledger, the containers (labels, bind mounts) and the host's memory name; env files
 * apart. With a scope, only what it covers: the files of containers in scope (whatever their paths:
 * a container in scope is checked against its sources), and ledger targets and former targets whose
 * paths are in scope.
 */
function filesToRead(
  entries: readonly Partial<LedgerEntry>[],
  allContainers: readonly Container[],
  earlier: HistoryInput,
  sourcesLabel: string,
  scope: CollectContext['scope'],
): { paths: string[]; envPaths: string[]; composePaths: string[] } {
  const containers = scope ? allContainers.filter((c) => scope.container(c.name, c.labels)) : allContainers;
  const byTarget = new Map(
    allContainers.flatMap(
      (c) =>
        [
          [c.name, c],
          [c.id, c],
        ] as const,
    ),
  );
  const entryInScope = (e: Partial<LedgerEntry>): boolean => {
    if (!scope || e.type !== 'container' || typeof e.target !== 'string') return true;
    const c = byTarget.get(e.target);
    return c ? scope.container(c.name, c.labels) : scope.containerByName(e.target);
  };
  const pathInScope = (p: string): boolean => !scope || scope.path(p);
  const labelSources = containers.flatMap((c) =>
    (c.labels[sourcesLabel] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.startsWith('/')),
  );
  const ledgerSources = entries.filter(entryInScope).flatMap((e) => e.sources ?? []);
  const paths = [
    ...entries
      .filter((e) => e.type === 'file' && e.target?.startsWith('/'))
      .map((e) => e.target!)
      .filter(pathInScope),
    ...ledgerSources,
    ...labelSources,
    ...containers.flatMap((c) =>
      c.mounts.filter((m) => m.type === 'bind' && m.source.startsWith('/')).map((m) => m.source),
    ),
    ...formerFiles(earlier).filter(pathInScope),
  ];
  return {
    paths,
    envPaths: [...new Set([...ledgerSources, ...labelSources])],
    composePaths: composeFilesIn(containers),
  };
}

/**
 * Every file target the host's ledgers ever named, and every one the scanner's memory still holds (097).
 * (A list the history's index shares among nights is looked at once: its paths are already in.)
 */
function formerFiles(earlier: HistoryInput): string[] {
  const files: string[] = [];
  const listsMet = new Set<readonly { type?: string; target: string }[]>();
  for (const s of pastOfAll(earlier)) {
    for (const list of [s.ledger.entries, s.formerTargets]) {
      if (listsMet.has(list)) continue;
      listsMet.add(list);
      for (const r of list) if (r.type === 'file') files.push(r.target);
    }
  }
  return files;
}

/** The Compose files of the Compose-made containers in scope: which env keys they give inline (MA1004). */
function composeFilesIn(containers: readonly Container[]): string[] {
  const composePaths = containers.flatMap((c) => {
    if (c.labels[COMPOSE_LABELS.service] === undefined) return [];
    const files = composeFilesOf(c.labels);
    return 'paths' in files ? files.paths : [];
  });
  return [...new Set(composePaths)];
}

/** What could not be read was not checked: the scan says so, and is incomplete. */
function filesNotChecked(files: readonly FileRecord[]): Problem[] {
  const problems: Problem[] = [];
  for (const f of files) {
    if (f.error !== undefined)
      problems.push({ source: 'files', subject: f.path, message: `${f.path} not checked: ${f.error}` });
    if (f.compose !== undefined && 'error' in f.compose)
      problems.push({
        source: 'files',
        subject: f.path,
        message:
          `${f.path} not read as a Compose file (${f.compose.error}): ` +
          'the env keys its services give inline are not known',
      });
  }
  return problems;
}

/**
 * The files bind-mounted into containers as each sees them (read through its /proc: src/collect/proc.ts) that could
 * not be read: problems of the containers' /proc, said after the files' (src/scan.ts), whichever slice was read anew.
 */
export function boundFilesNotChecked(containers: readonly Container[]): Problem[] {
  const problems: Problem[] = [];
  for (const c of containers) {
    if (!c.proc.available) continue;
    for (const b of c.proc.boundFiles) {
      if (b.error !== undefined)
        problems.push({
          source: 'proc',
          subject: c.name,
          message: `${c.name}: ${b.destination} as the container sees it not checked: ${b.error}`,
        });
    }
  }
  return problems;
}
