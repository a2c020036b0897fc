import { renderJson } from '../report/json.js';
import { renderJsonl } from '../report/jsonl.js';
import { renderProm } from '../report/prom.js';
import { renderSarif } from '../report/sarif.js';
import { renderText } from '../report/text.js';
import type { Report } from '../report/report.js';
import { MeshAuditError } from '../errors.js';
import { lstat, mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareOutputDir, replaceWithSymlink, writeFileAtomic } from '../write/atomic.js';
import type { CommandContext } from './context.js';
import { parseFormatList } from './choices.js';

/** Output formats, registered in one sorted list: name, file name, renderer. */
export const FORMATS = {
  json: { file: 'mesh-audit.json', render: (r: Report) => renderJson(r) },
  jsonl: { file: 'mesh-audit.jsonl', render: (r: Report) => renderJsonl(r) },
  prom: { file: 'mesh-audit.prom', render: (r: Report) => renderProm(r) },
  sarif: { file: 'mesh-audit.sarif', render: (r: Report) => renderSarif(r) },
  text: { file: null, render: (r: Report, color = false) => renderText(r, { color }) },
} as const;
export type FormatName = keyof typeof FORMATS;

/** Colour only on a terminal, never with NO_COLOR (any value but empty, as no-color.org says) or TERM=dumb. */
export function useColor(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && (process.env['NO_COLOR'] ?? '') === '' && process.env['TERM'] !== 'dumb';
}

export function parseFormats(value: unknown): FormatName[] {
  return parseFormatList(value, Object.keys(FORMATS) as FormatName[]);
}

/**
 * Text goes to stdout; file formats into a new run folder `out/runs/<time>/`, with the `latest`
 * names `out/mesh-audit.<ext>` pointed at it, and the newest `keep` runs kept. With `--out -` the
 * single file format goes to stdout. Returns the paths written.
 */
export async function writeReports(report: Report, formats: FormatName[], out: string, ctx: CommandContext, keep = 30): Promise<string[]> {
  const files = formats.filter((f) => FORMATS[f].file !== null);
  if (out === '-' && files.length + (formats.includes('text') ? 1 : 0) > 1) {
    throw new MeshAuditError('--out - writes one format to stdout; choose one with --format');
  }
  if (formats.includes('text')) ctx.stdout(FORMATS.text.render(report, ctx.color));
  if (files.length === 0) return [];
  if (out === '-') {
    ctx.stdout(FORMATS[files[0]!].render(report));
    return [];
  }
  await prepareOutputDir(out);
  const runs = join(out, RUNS);
  await prepareOutputDir(runs);
  const run = await newRunFolder(runs, report.generatedAt);
  const written: string[] = [];
  for (const f of files) {
    const name = FORMATS[f].file!;
    await writeFileAtomic(join(runs, run), name, FORMATS[f].render(report));
    await replaceWithSymlink(out, name, `${RUNS}/${run}/${name}`);
    written.push(join(out, name));
  }
  await pruneRuns(runs, keep);
  return written;
}

const RUNS = 'runs';
const RUN_FOLDER = /^\d{8}T\d{9}Z(-\d+)?$/;
const OUR_TEMP = /^\.mesh-audit\.[a-z]+\.[\w.]+\.tmp$/;
const OUR_FILES = new Set<string>(Object.values(FORMATS).flatMap((f) => (f.file ? [f.file] : [])));

/** `runs/20261129T222441085Z` from the report time; `-2`, `-3`… when two runs share a millisecond. */
async function newRunFolder(runs: string, generatedAt: string): Promise<string> {
  const stamp = generatedAt.replace(/[-:]/g, '').replace('.', '');
  for (let n = 1; ; n++) {
    const name = n === 1 ? stamp : `${stamp}-${n}`;
    try {
      await mkdir(join(runs, name), { mode: 0o750 });
      return name;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n > 100) throw err;
    }
  }
}

/** Keeps the newest `keep` run folders; removes only our own report files and folders. */
async function pruneRuns(runs: string, keep: number): Promise<void> {
  const folders = (await readdir(runs)).filter((n) => RUN_FOLDER.test(n)).sort();
  for (const old of folders.slice(0, Math.max(0, folders.length - keep))) {
    const dir = join(runs, old);
    const info = await lstat(dir);
    if (!info.isDirectory()) continue;
    // Our reports, and temp files a killed run left behind.
    for (const name of await readdir(dir)) if (OUR_FILES.has(name) || OUR_TEMP.test(name)) await unlink(join(dir, name));
    await rmdir(dir).catch(() => undefined); // something else in there: leave it
  }
}
