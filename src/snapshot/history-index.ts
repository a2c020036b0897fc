import { readRegularInput } from '../input/read.js';
import { MAX_SNAPSHOT_DEPTH } from '../input/depth.js';
import { parseJsonInput } from '../input/json.js';
import { validatorFor } from '../input/validate.js';
import { writeFileAtomic } from '../write/atomic.js';
import type { PastEnvFile, PastLedgerEntry, PastSnapshot } from './past.js';
import type { RememberedTarget } from './types.js';
import { join } from 'node:path';

/*
 * The index of a host's kept snapshots (`history/<host>/.mesh-audit.index`, docs/outputs.md "Output folder"):
 * what each one tells later runs (past.ts), so that a scan reads one small file instead of parsing
 * every kept snapshot again. It is written by the run that keeps a snapshot, under the output folder's
 * lock, after the snapshot (a run stopped between the two leaves an index without the newest file,
 * which the next run parses). It is never trusted over the snapshots: an entry is used only for the
 * file of that name, size and modification time, the newest file also by its digest, and only when
 * this very version of mesh-audit wrote it; anything else is read from the snapshot file itself.
 * Not named `*.json`, so that readers of history folders (older versions too) never take it for a snapshot.
 * Records, and lists of them, that several snapshots share (a ledger unchanged from night to night) are
 * written once and read back as one shared object: the facts (src/facts/history.ts) follow a shared list
 * once, so that thirty kept nights cost about what one does (test/bench/history.bench.ts).
 */
export const HISTORY_INDEX_FILE = '.mesh-audit.index';
export const HISTORY_INDEX_SCHEMA = 'mesh-audit/history-index@2';

/** A kept snapshot file and what it tells later runs. */
export interface IndexedSnapshot {
  /** The file's name in its host folder. */
  file: string;
  size: number;
  mtimeMs: number;
  past: PastSnapshot;
}

/** The index as it is written: records, and lists of records, shared by snapshots are written once. */
interface IndexFile {
  schema: typeof HISTORY_INDEX_SCHEMA;
  /** The mesh-audit version that wrote it: another version's is not used (what it derives may differ). */
  tool: string;
  newest: { file: string; sha256: string };
  keyLists: string[][];
  ledgerEntries: PastLedgerEntry[];
  envFiles: {
    path: string;
    composeOnly: boolean;
    docker: number | null;
    podman: number | null;
    compose: number | null;
  }[];
  formerTargets: RememberedTarget[];
  /** Lists of records (by their number in `ledgerEntries`, `envFiles`, `formerTargets`). */
  ledgerLists: number[][];
  envFileLists: number[][];
  formerTargetLists: number[][];
  snapshots: {
    file: string;
    size: number;
    mtimeMs: number;
    takenAt: string;
    hostname: string;
    ledgerAvailable: boolean;
    /** Numbers in `ledgerLists`, `envFileLists` and `formerTargetLists`. */
    ledger: number;
    envFiles: number;
    formerTargets: number;
  }[];
}

const indexRef = { type: 'integer', minimum: 0 };
const nullableRef = { type: ['integer', 'null'], minimum: 0 };
const text = { type: 'string' };
const refList = { type: 'array', items: indexRef };
const rememberedTarget = {
  type: 'object',
  required: ['id', 'type', 'target', 'movedAt', 'lastClaimed', 'lastSeenPresent'],
  additionalProperties: false,
  properties: {
    id: text,
    type: text,
    target: text,
    movedAt: text,
    lastClaimed: text,
    lastSeenPresent: { type: ['string', 'null'] },
  },
};
export const historyIndexSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: [
    'schema',
    'tool',
    'newest',
    'keyLists',
    'ledgerEntries',
    'envFiles',
    'formerTargets',
    'ledgerLists',
    'envFileLists',
    'formerTargetLists',
    'snapshots',
  ],
  additionalProperties: false,
  properties: {
    schema: { const: HISTORY_INDEX_SCHEMA },
    tool: text,
    newest: {
      type: 'object',
      required: ['file', 'sha256'],
      additionalProperties: false,
      properties: { file: text, sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' } },
    },
    keyLists: { type: 'array', items: { type: 'array', items: text } },
    ledgerEntries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['valid', 'target'],
        additionalProperties: false,
        properties: { valid: { type: 'boolean' }, id: text, type: text, target: text, appliedAt: text },
      },
    },
    envFiles: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'composeOnly', 'docker', 'podman', 'compose'],
        additionalProperties: false,
        properties: {
          path: text,
          composeOnly: { type: 'boolean' },
          docker: nullableRef,
          podman: nullableRef,
          compose: nullableRef,
        },
      },
    },
    formerTargets: { type: 'array', items: rememberedTarget },
    ledgerLists: { type: 'array', items: refList },
    envFileLists: { type: 'array', items: refList },
    formerTargetLists: { type: 'array', items: refList },
    snapshots: {
      type: 'array',
      items: {
        type: 'object',
        required: [
          'file',
          'size',
          'mtimeMs',
          'takenAt',
          'hostname',
          'ledgerAvailable',
          'ledger',
          'envFiles',
          'formerTargets',
        ],
        additionalProperties: false,
        properties: {
          file: text,
          size: { type: 'integer', minimum: 0 },
          mtimeMs: { type: 'number' },
          takenAt: text,
          hostname: text,
          ledgerAvailable: { type: 'boolean' },
          ledger: indexRef,
          envFiles: indexRef,
          formerTargets: indexRef,
        },
      },
    },
  },
} as const;

const validateIndex = validatorFor<IndexFile>('historyIndex', historyIndexSchema);

/**
 * Numbers each distinct record (by its JSON) in the order first met. An object met again (a record or a list
 * the history shares among snapshots) is looked up by identity: neither made nor serialized again.
 */
class Interned<T extends object> {
  readonly items: T[] = [];
  private readonly at = new Map<string, number>();
  private readonly seen = new WeakMap<object, number>();
  ref(identity: object, make: () => T): number {
    const known = this.seen.get(identity);
    if (known !== undefined) return known;
    const item = make();
    const key = JSON.stringify(item);
    let n = this.at.get(key);
    if (n === undefined) {
      n = this.items.length;
      this.items.push(item);
      this.at.set(key, n);
    }
    this.seen.set(identity, n);
    return n;
  }
}

/** The index's text for `snapshots` (oldest first), the newest named by its digest. */
export function encodeHistoryIndex(
  snapshots: readonly IndexedSnapshot[],
  newest: { file: string; sha256: string },
  tool: string,
): string {
  const keyLists = new Interned<string[]>();
  const ledgerEntries = new Interned<PastLedgerEntry>();
  const envFiles = new Interned<IndexFile['envFiles'][number]>();
  const formerTargets = new Interned<RememberedTarget>();
  const ledgerLists = new Interned<number[]>();
  const envFileLists = new Interned<number[]>();
  const formerTargetLists = new Interned<number[]>();
  const keysRef = (keys: readonly string[] | null) => (keys === null ? null : keyLists.ref(keys, () => [...keys]));
  const envFileRef = (f: PastEnvFile) =>
    envFiles.ref(f, () => ({
      path: f.path,
      composeOnly: f.composeOnly,
      docker: keysRef(f.docker),
      podman: keysRef(f.podman),
      compose: keysRef(f.compose),
    }));
  const index: IndexFile = {
    schema: HISTORY_INDEX_SCHEMA,
    tool,
    newest,
    keyLists: keyLists.items,
    ledgerEntries: ledgerEntries.items,
    envFiles: envFiles.items,
    formerTargets: formerTargets.items,
    ledgerLists: ledgerLists.items,
    envFileLists: envFileLists.items,
    formerTargetLists: formerTargetLists.items,
    snapshots: snapshots.map(({ file, size, mtimeMs, past }) => ({
      file,
      size,
      mtimeMs,
      takenAt: past.takenAt,
      hostname: past.hostname,
      ledgerAvailable: past.ledger.available,
      ledger: ledgerLists.ref(past.ledger.entries, () => past.ledger.entries.map((e) => ledgerEntries.ref(e, () => e))),
      envFiles: envFileLists.ref(past.envFiles, () => past.envFiles.map(envFileRef)),
      formerTargets: formerTargetLists.ref(past.formerTargets, () =>
        past.formerTargets.map((t) => formerTargets.ref(t, () => t)),
      ),
    })),
  };
  return JSON.stringify(index) + '\n';
}

/** What an index holds, or why it cannot be used. */
export type HistoryIndex =
  | { usable: true; newest: { file: string; sha256: string }; snapshots: Map<string, IndexedSnapshot> }
  | { usable: false; reason: string };

/** Each list of numbers as the records it names (one array per list, shared by its snapshots); null: one dangles. */
function listsOf<T>(lists: readonly number[][], records: readonly T[]): T[][] | null {
  const out: T[][] = [];
  for (const list of lists) {
    if (list.some((n) => n >= records.length)) return null;
    out.push(list.map((n) => records[n]!));
  }
  return out;
}

/** Reads the index text (records and lists shared among snapshots are shared objects again). */
export function decodeHistoryIndex(textOf: string, source: string, tool: string): HistoryIndex {
  let json: unknown;
  try {
    json = parseJsonInput(textOf, source, 'history index', MAX_SNAPSHOT_DEPTH);
  } catch (error) {
    const deep = (error as Error).message.endsWith('levels deep');
    return { usable: false, reason: deep ? `it nests more than ${MAX_SNAPSHOT_DEPTH} levels deep` : 'it is not JSON' };
  }
  const schema = (json as { schema?: unknown } | null)?.schema;
  // Another layout of the index (an older mesh-audit's): said as such, not as whichever of its fields differs first.
  if (typeof schema === 'string' && schema !== HISTORY_INDEX_SCHEMA)
    return { usable: false, reason: `it is a ${schema}, this mesh-audit reads ${HISTORY_INDEX_SCHEMA}` };
  if (!validateIndex(json)) {
    const first = validateIndex.errors?.[0];
    return {
      usable: false,
      reason: `not a ${HISTORY_INDEX_SCHEMA} (at ${first?.instancePath || '(root)'}: ${first?.message ?? 'invalid'})`,
    };
  }
  if (json.tool !== tool) return { usable: false, reason: `written by mesh-audit ${json.tool}, this is ${tool}` };
  const dangling = (n: number | null, list: readonly unknown[]) => n !== null && n >= list.length;
  const keyList = (n: number | null) => (n === null ? null : json.keyLists[n]!);
  if (json.envFiles.some((f) => [f.docker, f.podman, f.compose].some((n) => dangling(n, json.keyLists))))
    return { usable: false, reason: 'it names a key list it does not hold' };
  const envFiles: PastEnvFile[] = json.envFiles.map((f) => ({
    path: f.path,
    composeOnly: f.composeOnly,
    docker: keyList(f.docker),
    podman: keyList(f.podman),
    compose: keyList(f.compose),
  }));
  const ledgerLists = listsOf(json.ledgerLists, json.ledgerEntries);
  const envFileLists = listsOf(json.envFileLists, envFiles);
  const formerTargetLists = listsOf(json.formerTargetLists, json.formerTargets);
  if (!ledgerLists || !envFileLists || !formerTargetLists)
    return { usable: false, reason: 'it names a record it does not hold' };
  const snapshots = new Map<string, IndexedSnapshot>();
  for (const s of json.snapshots) {
    if (
      dangling(s.ledger, ledgerLists) ||
      dangling(s.envFiles, envFileLists) ||
      dangling(s.formerTargets, formerTargetLists)
    )
      return { usable: false, reason: `its entry for ${s.file} names a list it does not hold` };
    snapshots.set(s.file, {
      file: s.file,
      size: s.size,
      mtimeMs: s.mtimeMs,
      past: {
        takenAt: s.takenAt,
        hostname: s.hostname,
        ledger: { available: s.ledgerAvailable, entries: ledgerLists[s.ledger]! },
        formerTargets: formerTargetLists[s.formerTargets]!,
        envFiles: envFileLists[s.envFiles]!,
      },
    });
  }
  return { usable: true, newest: json.newest, snapshots };
}

/** The index of host folder `dir`, or why there is none to use. */
export async function readHistoryIndex(dir: string, tool: string): Promise<HistoryIndex> {
  const path = join(dir, HISTORY_INDEX_FILE);
  let textOf: string;
  try {
    textOf = (await readRegularInput(path)).toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      usable: false,
      reason: code === 'ENOENT' ? 'there is none' : `it cannot be read (${code ?? (err as Error).message})`,
    };
  }
  return decodeHistoryIndex(textOf, path, tool);
}

/** Writes the index of host folder `dir` (atomically: a reader sees the old one or the new one). */
export async function writeHistoryIndex(
  dir: string,
  snapshots: readonly IndexedSnapshot[],
  newest: { file: string; sha256: string },
  tool: string,
): Promise<string> {
  return writeFileAtomic(dir, HISTORY_INDEX_FILE, encodeHistoryIndex(snapshots, newest, tool));
}
