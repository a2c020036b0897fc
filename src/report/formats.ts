import type { TextOptions } from './text.js';
import type { Report } from './report.js';
import type { PremigrationReport } from './premigration/model.js';

/*
 * The output formats, in one table: adding a format is one entry here and its writer. From it come `--format`'s help
 * and accepted values (with "did you mean"), the config schema's `format` values (src/config.ts), the report files a
 * run writes (src/cli/output.ts, src/cli/premigrate.ts) and the names of those files. Each writer is loaded when a
 * run writes its format: the settings read this table, and a command that writes no report (snapshot, config,
 * rules, completion) does not load the writers (start-up: BENCHMARKS.md).
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

/** The writer of a format of scan and evaluate: a Report rendered; `files`, where it is several (SARIF: per host). */
export interface AuditWriter {
  render: (report: Report, view?: TextOptions) => string;
  files?: (report: Report) => { name: string; content: string }[];
}

export interface AuditFormat extends FormatEntry {
  family: 'audit';
  writer: () => Promise<AuditWriter>;
}

/** The writer of a format of premigrate: the pre-migration report rendered. */
export type PremigrationWriter = (report: PremigrationReport, color?: boolean) => string;

export interface PremigrationFormat extends FormatEntry {
  family: 'premigrate';
  writer: () => Promise<PremigrationWriter>;
}

export type OutputFormat = AuditFormat | PremigrationFormat;

/** In the order `--format`'s help names them. */
export const OUTPUT_FORMATS: readonly OutputFormat[] = [
  {
    family: 'audit',
    name: 'text',
    file: null,
    help: 'stdout',
    writer: async () => {
      const { renderText } = await import('./text.js');
      return { render: (r, view = { color: false }) => renderText(r, view) };
    },
  },
  {
    family: 'audit',
    name: 'sarif',
    file: 'mesh-audit.sarif',
    writer: async () => {
      const { renderSarif, renderSarifFiles } = await import('./sarif.js');
      return { render: (r) => renderSarif(r), files: (r) => renderSarifFiles(r) };
    },
  },
  {
    family: 'audit',
    name: 'json',
    file: 'mesh-audit.json',
    writer: async () => ({ render: (await import('./json.js')).renderJson }),
  },
  {
    family: 'audit',
    name: 'jsonl',
    file: 'mesh-audit.jsonl',
    writer: async () => ({ render: (await import('./jsonl.js')).renderJsonl }),
  },
  {
    family: 'audit',
    name: 'junit',
    file: 'mesh-audit.junit.xml',
    writer: async () => ({ render: (await import('./junit.js')).renderJunit }),
  },
  {
    family: 'audit',
    name: 'prom',
    file: 'mesh-audit.prom',
    writer: async () => ({ render: (await import('./prom.js')).renderProm }),
  },
  {
    family: 'audit',
    name: 'md',
    file: 'mesh-audit.md',
    help: 'a summary for a job summary or a ticket',
    writer: async () => ({ render: (await import('./markdown.js')).renderMarkdown }),
  },
  {
    family: 'premigrate',
    name: 'text',
    file: null,
    help: 'stdout',
    writer: async () => {
      const { renderPremigrationText } = await import('./premigration/text.js');
      return (p, color = false) => renderPremigrationText(p, { color });
    },
  },
  {
    family: 'premigrate',
    name: 'json',
    file: 'premigration.json',
    writer: async () => (await import('./premigration/json.js')).renderPremigrationJson,
  },
  {
    family: 'premigrate',
    name: 'sarif',
    file: 'premigration.sarif',
    writer: async () => {
      const { renderSarif } = await import('./sarif.js');
      return (p) => renderSarif(p.report);
    },
  },
  {
    family: 'premigrate',
    name: 'md',
    file: 'premigration.md',
    help: 'a summary for a change ticket',
    writer: async () => (await import('./premigration/markdown.js')).renderPremigrationMarkdown,
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
export async function filesOf(format: AuditFormat, report: Report): Promise<{ name: string; content: string }[]> {
  const writer = await format.writer();
  if (writer.files) return writer.files(report);
  return format.file === null ? [] : [{ name: format.file, content: writer.render(report) }];
}
