import { renderJson } from '../report/json.js';
import { renderSarif } from '../report/sarif.js';
import { renderText } from '../report/text.js';
import type { Report } from '../report/report.js';
import { MeshAuditError } from '../errors.js';
import { prepareOutputDir, writeFileAtomic } from '../write/atomic.js';
import type { CommandContext } from './context.js';

/** Output formats, registered in one sorted list: name, file name, renderer. */
export const FORMATS = {
  json: { file: 'mesh-audit.json', render: (r: Report) => renderJson(r) },
  sarif: { file: 'mesh-audit.sarif', render: (r: Report) => renderSarif(r) },
  text: { file: null, render: (r: Report, color = false) => renderText(r, { color }) },
} as const;
export type FormatName = keyof typeof FORMATS;

export function useColor(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && process.env['NO_COLOR'] === undefined && process.env['TERM'] !== 'dumb';
}

export function parseFormats(value: unknown): FormatName[] {
  const names = String(value ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const name of names) {
    if (!Object.hasOwn(FORMATS, name)) throw new MeshAuditError(`unknown format '${name}' (known: ${Object.keys(FORMATS).join(', ')})`);
  }
  if (names.length === 0) throw new MeshAuditError('--format needs at least one format');
  return [...new Set(names)] as FormatName[];
}

/**
 * Text goes to stdout; file formats into the output folder, or to stdout with `--out -`.
 * Returns the paths written.
 */
export async function writeReports(report: Report, formats: FormatName[], out: string, ctx: CommandContext): Promise<string[]> {
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
  const written: string[] = [];
  for (const f of files) written.push(await writeFileAtomic(out, FORMATS[f].file!, FORMATS[f].render(report)));
  return written;
}
