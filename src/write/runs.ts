import { mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { lstat, readdir, readlink, rmdir, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ExitCode, MeshAuditError } from '../errors.js';
import { NotRegularFile, readRegularInput } from '../input/read.js';
import { prepareOutputDir, replaceWithSymlink, syncFolder, WriteFailure, writeFileAtomic } from './atomic.js';
import { AUDIT_FORMATS, auditFormat } from '../report/formats.js';
import { lockOutputFolder } from './lock.js';
import { osErrorText } from './os-error.js';
import { trackPending, untrackPending } from './pending.js';

/**
 * The report files a run publishes, by format: the file names of the output-format table (src/report/formats.ts),
 * rendered by src/cli/output.ts; a fleet's SARIF adds one per host.
 */
export const REPORT_FILES: Readonly<Record<string, string>> = Object.fromEntries(
  AUDIT_FORMATS.flatMap((f) => (f.file === null ? [] : [[f.name, f.file]])),
);
const JSON_REPORT_FILE = auditFormat('json').file!;

/** One file of a run: its name in the run folder and its whole content. */
export interface RunFile {
  name: string;
  content: string;
}

/*
 * The output folder (docs/outputs.md, "Output folder"):
 *
 *   out/.mesh-audit.lock       flock held by the one run writing the folder (write/lock.ts)
 *   out/.mesh-audit.sequence   the last run number given out: runs and history are ordered by it
 *   out/runs/<seq>-<time>/     one folder per complete run, all its formats
 *   out/latest -> runs/<seq>-<time>       switched in one rename once the whole set is written
 *   out/mesh-audit.<ext> -> latest/mesh-audit.<ext>
 *   out/history/<host>/snapshot-<seq>-<time>.json   a scan's kept snapshots (history-store.ts)
 *
 * A run writes its set into `runs/.incomplete-<name>/`, renames it to `runs/<name>/` and then switches
 * `latest`: a reader of the latest names sees one whole set, the old one or the new one. A run that
 * fails or is stopped leaves at most an `.incomplete-` folder, which the next run removes and which
 * is never counted by --keep. The time in the names is shown, never relied on: a clock moved back
 * does not reorder runs (the sequence does).
 */
const RUNS = 'runs';
const LATEST = 'latest';
const SEQUENCE_FILE = '.mesh-audit.sequence';
const INCOMPLETE = '.incomplete-';
const RUN_FOLDER = /^(\d{6,})-\d{8}T\d{9}Z(-\d+)?$/;
/** Run folders of mesh-audit before the sequence: older than any numbered run. */
const UNNUMBERED_RUN_FOLDER = /^\d{8}T\d{9}Z(-\d+)?$/;
/** Temp names of write/atomic.ts: `.<name>.<pid>.<random>.tmp`. */
const OUR_TEMP = /^\.[\w.-]+\.\d+\.[0-9a-f]{12}\.tmp$/;
const OUR_FILES = new Set<string>(Object.values(REPORT_FILES));
/** A fleet's SARIF: one file per host (`mesh-audit.HOST.sarif`). */
const PER_HOST_SARIF = /^mesh-audit\.[\w.-]+\.sarif$/;
const isOurReport = (name: string): boolean => OUR_FILES.has(name) || PER_HOST_SARIF.test(name);

/** An output folder held by this run: checked, locked, cleaned of killed runs' leftovers, with this run's number. */
export interface OutputFolder {
  /** As the user named it (shown in messages). */
  named: string;
  /** The checked, resolved path (used for every write). */
  dir: string;
  /** This run's number in the folder: greater than any run's before it, whatever the clock says. */
  sequence: number;
  release(): Promise<void>;
}

export const DEFAULT_LOCK_TIMEOUT_SECONDS = 120;

export async function openOutputFolder(
  named: string,
  lockTimeoutSeconds = DEFAULT_LOCK_TIMEOUT_SECONDS,
): Promise<OutputFolder> {
  const dir = await prepareOutputDir(named);
  const lock = await lockOutputFolder(dir, lockTimeoutSeconds);
  try {
    await cleanLeftovers(dir);
    const sequence = await takeSequence(dir);
    return { named, dir, sequence, release: () => lock.release() };
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/** Runs `work` holding output folder `named`; the lock is released however it ends. */
export async function withOutputFolder<T>(
  named: string,
  lockTimeoutSeconds: number | undefined,
  work: (folder: OutputFolder) => Promise<T>,
): Promise<T> {
  const folder = await openOutputFolder(named, lockTimeoutSeconds);
  try {
    return await work(folder);
  } finally {
    await folder.release();
  }
}

const sequenceOfRun = (name: string): number | null => {
  const m = RUN_FOLDER.exec(name);
  return m ? Number(m[1]) : UNNUMBERED_RUN_FOLDER.test(name) ? 0 : null;
};

/** The next run number: one past the stored one, and past any number already used in runs/ or history/. */
async function takeSequence(dir: string): Promise<number> {
  let last = 0;
  try {
    const text = (await readRegularInput(join(dir, SEQUENCE_FILE))).toString('utf8').trim();
    if (/^\d+$/.test(text)) last = Number(text);
  } catch (err) {
    if (err instanceof NotRegularFile)
      throw new MeshAuditError(
        `${join(dir, SEQUENCE_FILE)}: ${err.message}; refusing to use the folder`,
        ExitCode.Incomplete,
      );
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new MeshAuditError(`${join(dir, SEQUENCE_FILE)}: cannot read: ${osErrorText(err)}`, ExitCode.Incomplete);
  }
  for (const name of await namesIn(join(dir, RUNS))) last = Math.max(last, sequenceOfRun(name) ?? 0);
  for (const host of await namesIn(join(dir, 'history'))) {
    for (const name of await namesIn(join(dir, 'history', host)))
      last = Math.max(last, Number(/^snapshot-(\d+)-/.exec(name)?.[1] ?? 0));
  }
  const next = last + 1;
  await writeFileAtomic(dir, SEQUENCE_FILE, `${next}\n`);
  return next;
}

const namesIn = (dir: string): Promise<string[]> => readdir(dir).catch(() => []);

/**
 * Removes our own files at `dir/name` only when they are what we write (a regular file or a link): nothing else is
 * touched.
 */
async function removeIfOurs(path: string): Promise<void> {
  const info = await lstat(path).catch(() => null);
  if (info && (info.isFile() || info.isSymbolicLink())) await unlink(path).catch(() => undefined);
}

/** Empties and removes a run folder of ours: only our report files and temp files; anything else stays. */
async function removeRunFolder(path: string): Promise<void> {
  const info = await lstat(path).catch(() => null);
  if (!info?.isDirectory()) return;
  for (const name of await namesIn(path))
    if (isOurReport(name) || OUR_TEMP.test(name)) await removeIfOurs(join(path, name));
  await rmdir(path).catch(() => undefined); // something else in there: leave it
}

/**
 * What runs that were killed left behind (called holding the lock, so no live run owns any of it):
 * temp files in the folder, its run folders and its history folders, and unfinished run folders.
 */
async function cleanLeftovers(dir: string): Promise<void> {
  for (const name of await namesIn(dir)) if (OUR_TEMP.test(name)) await removeIfOurs(join(dir, name));
  const runs = join(dir, RUNS);
  // Each entry on its own (they share nothing), all at once: --keep 30 is thirty run folders to look into.
  await Promise.all(
    (await namesIn(runs)).map(async (name) => {
      if (name.startsWith(INCOMPLETE)) await removeRunFolder(join(runs, name));
      else if (OUR_TEMP.test(name)) await removeIfOurs(join(runs, name));
      else if (sequenceOfRun(name) !== null && (await lstat(join(runs, name)).catch(() => null))?.isDirectory()) {
        for (const inner of await namesIn(join(runs, name)))
          if (OUR_TEMP.test(inner)) await removeIfOurs(join(runs, name, inner));
      }
    }),
  );
  for (const host of await namesIn(join(dir, 'history'))) {
    const folder = join(dir, 'history', host);
    if (!(await lstat(folder).catch(() => null))?.isDirectory()) continue;
    for (const name of await namesIn(folder)) if (OUR_TEMP.test(name)) await removeIfOurs(join(folder, name));
  }
}

/** Complete run folders of `runs/`, oldest first by their number (unnumbered ones, from before the sequence, first). */
export async function completeRuns(runs: string): Promise<string[]> {
  const named = (await namesIn(runs)).filter((n) => sequenceOfRun(n) !== null);
  // All at once: --keep 30 is thirty folders, each awaited in turn a trip through the thread pool.
  const infos = await Promise.all(named.map((name) => lstat(join(runs, name)).catch(() => null)));
  const folders = named.filter((_, at) => infos[at]?.isDirectory() === true);
  return folders.sort((a, b) => sequenceOfRun(a)! - sequenceOfRun(b)! || (a < b ? -1 : a > b ? 1 : 0));
}

/** `000042-20261129T222441085Z`: the run's number, then the report time (shown, not relied on). */
const runNameOf = (sequence: number, generatedAt: string): string =>
  `${String(sequence).padStart(6, '0')}-${generatedAt.replace(/[-:]/g, '').replace('.', '')}`;

/**
 * Writes a run's files into a fresh `runs/` folder, publishes it as `latest`, points each report's name
 * through `latest`, and prunes old runs to `keep`. Returns the names written, as the user named the folder.
 */
export async function publishRun(
  folder: OutputFolder,
  files: readonly RunFile[],
  generatedAt: string,
  keep: number,
  onPublished: () => void,
): Promise<string[]> {
  const runs = await prepareOutputDir(join(folder.dir, RUNS));
  const base = runNameOf(folder.sequence, generatedAt);
  const partial = makeFreshFolder(runs, `${INCOMPLETE}${base}`);
  let final: string | null = null;
  const names: string[] = [];
  try {
    for (const { name, content } of files) {
      await writeFileAtomic(partial, name, content);
      names.push(name);
    }
    final = await freeName(runs, base);
    renameIntoPlace(folder, partial, runs, final, onPublished);
    await syncFolder(runs);
    await syncFolder(folder.dir);
  } catch (err) {
    untrackPending(partial);
    await removeRunFolder(partial);
    if (final !== null) {
      untrackPending(join(runs, final));
      if ((await readlink(join(folder.dir, LATEST)).catch(() => '')) !== `${RUNS}/${final}`)
        await removeRunFolder(join(runs, final));
    }
    throw err;
  }
  const written = await linkThroughLatest(folder, names);
  await unlinkReportsNotWritten(folder, names);
  await pruneRuns(runs, keep, final);
  return written;
}

/**
 * The written folder renamed to its final name, then `latest` swapped to it. The renames are synchronous, each
 * with the bookkeeping of what is pending around it, so that a signal is handled before or after a step, never
 * inside one: a stopped run removes its unpublished folder, and never a published one.
 */
function renameIntoPlace(
  folder: OutputFolder,
  partial: string,
  runs: string,
  final: string,
  onPublished: () => void,
): void {
  const finalPath = join(runs, final);
  const latestTemp = join(folder.dir, `.${LATEST}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    trackPending(finalPath);
    renameSync(partial, finalPath);
    untrackPending(partial);
    trackPending(latestTemp);
    symlinkSync(`${RUNS}/${final}`, latestTemp);
    // The one rename that publishes the whole set.
    renameSync(latestTemp, join(folder.dir, LATEST));
    untrackPending(latestTemp);
    untrackPending(finalPath);
    // Published: a signal from here on says so (cli/signals.ts).
    onPublished();
  } catch (err) {
    rmSync(latestTemp, { force: true });
    untrackPending(latestTemp);
    throw new WriteFailure(join(folder.dir, LATEST), err);
  }
}

/** Each report's name in the output folder made a link through `latest` (once, then left alone). */
async function linkThroughLatest(folder: OutputFolder, names: readonly string[]): Promise<string[]> {
  const written: string[] = [];
  for (const name of names) {
    const path = join(folder.dir, name);
    if ((await readlink(path).catch(() => null)) !== `${LATEST}/${name}`) {
      try {
        await replaceWithSymlink(folder.dir, name, `${LATEST}/${name}`);
      } catch (err) {
        // The set is published (latest/ names it); only this name could not be made to point there.
        if (err instanceof WriteFailure)
          throw new MeshAuditError(
            `${err.message}; this run's reports are published under ${join(folder.named, LATEST)}/`,
            ExitCode.Incomplete,
          );
        throw err;
      }
    }
    written.push(join(folder.named, name));
  }
  return written;
}

/**
 * The links of reports this run did not write (another format, a host gone from the fleet) removed: each would
 * point at nothing, or at an older run's report.
 */
async function unlinkReportsNotWritten(folder: OutputFolder, names: readonly string[]): Promise<void> {
  for (const name of await namesIn(folder.dir)) {
    if (!isOurReport(name) || names.includes(name)) continue;
    if ((await lstat(join(folder.dir, name)).catch(() => null))?.isSymbolicLink())
      await unlink(join(folder.dir, name)).catch(() => undefined);
  }
}

/**
 * A new folder `runs/name` (or `name-2`…), never one that something else already occupies; pending until published.
 */
function makeFreshFolder(runs: string, name: string): string {
  for (let n = 1; ; n++) {
    const path = join(runs, n === 1 ? name : `${name}-${n}`);
    try {
      // Synchronous, and tracked at once: a signal cannot come between making it and knowing it.
      mkdirSync(path, { mode: 0o750 });
      trackPending(path);
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n > 100) throw new WriteFailure(path, err);
    }
  }
}

/** `name`, or `name-2`… when something (a planted link, a folder) is already there: a rename never replaces it. */
async function freeName(runs: string, name: string): Promise<string> {
  for (let n = 1; n <= 100; n++) {
    const candidate = n === 1 ? name : `${name}-${n}`;
    if ((await lstat(join(runs, candidate)).catch(() => null)) === null) return candidate;
  }
  throw new MeshAuditError(`${join(runs, name)}: no free run folder name`, ExitCode.Incomplete);
}

/** Keeps the newest `keep` complete runs, by number; the run just published is never removed. */
async function pruneRuns(runs: string, keep: number, current: string): Promise<void> {
  const folders = (await completeRuns(runs)).filter((n) => n !== current);
  for (const old of folders.slice(0, Math.max(0, folders.length - (keep - 1)))) await removeRunFolder(join(runs, old));
}

/** The newest complete run that has a JSON report (`--baseline auto`), as a path; null when there is none. */
export async function latestJsonReport(dir: string): Promise<string | null> {
  const runs = join(dir, RUNS);
  const complete = await completeRuns(runs);
  for (const name of complete.reverse()) {
    const path = join(runs, name, JSON_REPORT_FILE);
    if ((await lstat(path).catch(() => null))?.isFile()) return path;
  }
  return null;
}
