import { renderJson } from './json.js';
import { renderJsonl } from './jsonl.js';
import { renderJunit } from './junit.js';
import { renderProm } from './prom.js';
import { renderSarif, renderSarifFiles } from './sarif.js';
import { renderText, type TextOptions } from './text.js';
import type { Report } from './report.js';
import { renderPremigrationJson } from './premigration/json.js';
import { renderPremigrationMarkdown } from './premigration/markdown.js';
import { renderPremigrationText } from './premigration/text.js';
import type { PremigrationReport } from './premigration/model.js';

/*
 * The output formats, in one table: adding a format is one entry here and its writer. From it come `--format`'s help
 * and accepted values (with "did you mean"), the config schema's `format` values (src/config.ts), the report files a
 * run writes (src/cli/output.ts, src/cli/premigrate.ts) and the names of those files.
 */

/** Which commands offer a format: `audit` is scan and evaluate (a Report), `premigrate` the pre-migration check. */
export type FormatFamily = 'audit' | 'premigrate';

interface FormatEntry {
  name: string;
  /**
   * The file of the output folder it is written to; null for the one format that streams to stdout as the run
   * speaks (text), never a file.
   */
  file: string | null;
  /** What `--format`'s help says of it, in brackets after its name (most need nothing). */
  help?: string;
}

/** A format of scan and evaluate: its writer renders a Report; `files`, where it is several files (SARIF: per host). */
export interface AuditFormat extends FormatEntry {
  family: 'audit';
  render: (report: Report, view?: TextOptions) => string;
  files?: (report: Report) => { name: string; content: string }[];
}

/** A format of premigrate: its writer renders the pre-migration report. */
export interface PremigrationFormat extends FormatEntry {
  family: 'premigrate';
  render: (report: PremigrationReport, color?: boolean) => string;
}

export type OutputFormat = AuditFormat | PremigrationFormat;

/** In the order `--format`'s help names them. */
export const OUTPUT_FORMATS: readonly OutputFormat[] = [
  {
    family: 'audit',
    name: 'text',
    file: null,
    help: 'stdout',
    render: (r, view = { color: false }) => renderText(r, view),
  },
  {
    family: 'audit',
    name: 'sarif',
    file: 'mesh-audit.sarif',
    render: (r) => renderSarif(r),
    files: (r) => renderSarifFiles(r),
  },
  { family: 'audit', name: 'json', file: 'mesh-audit.json', render: (r) => renderJson(r) },
  { family: 'audit', name: 'jsonl', file: 'mesh-audit.jsonl', render: (r) => renderJsonl(r) },
  { family: 'audit', name: 'junit', file: 'mesh-audit.junit.xml', render: (r) => renderJunit(r) },
  { family: 'audit', name: 'prom', file: 'mesh-audit.prom', render: (r) => renderProm(r) },
  {
    family: 'premigrate',
    name: 'text',
    file: null,
    help: 'stdout',
    render: (p, color = false) => renderPremigrationText(p, { color }),
  },
  { family: 'premigrate', name: 'json', file: 'premigration.json', render: (p) => renderPremigrationJson(p) },
  { family: 'premigrate', name: 'sarif', file: 'premigration.sarif', render: (p) => renderSarif(p.report) },
  {
    family: 'premigrate',
    name: 'md',
    file: 'premigration.md',
    help: 'a summary for a change ticket',
    render: (p) => renderPremigrationMarkdown(p),
  },
];

export const AUDIT_FORMATS = OUTPUT_FORMATS.filter((f): f is AuditFormat => f.family === 'audit');
export const PREMIGRATION_FORMATS = OUTPUT_FORMATS.filter((f): f is PremigrationFormat => f.family === 'premigrate');

/** The names a command accepts, sorted (as errors list them). */
export const formatNames = (family: FormatFamily): string[] =>
  OUTPUT_FORMATS.filter((f) => f.family === family)
    .map((f) => f.name)
    .sort();

/** A format of a family by name (a name the family accepts: parsed before). */
export function auditFormat(name: string): AuditFormat {
  return AUDIT_FORMATS.find((f) => f.name === name)!;
}
export function premigrationFormat(name: string): PremigrationFormat {
  return PREMIGRATION_FORMATS.find((f) => f.name === name)!;
}

/** `--format`'s list as its help gives it: `text (stdout), sarif, json, …`. */
export const formatListHelp = (family: FormatFamily): string =>
  OUTPUT_FORMATS.filter((f) => f.family === family)
    .map((f) => (f.help !== undefined ? `${f.name} (${f.help})` : f.name))
    .join(', ');

/** The files of one audit format: its `files` when it has them, else its one file. */
export function filesOf(format: AuditFormat, report: Report): { name: string; content: string }[] {
  if (format.files) return format.files(report);
  return format.file === null ? [] : [{ name: format.file, content: format.render(report) }];
}
