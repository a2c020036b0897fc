import { shownLines } from '../shown.js';
import { renderProm } from '../report/prom.js';
import { AUDIT_FORMATS, auditFormat, filesOf, formatNames } from '../report/formats.js';
import type { Report } from '../report/report.js';
import { ExitCode, MeshAuditError } from '../errors.js';
import { WriteFailure } from '../write/atomic.js';
import { publishRun, withOutputFolder, type OutputFolder } from '../write/runs.js';
import { note, type CommandContext } from './context.js';
import { AlertDeliveryError, postAlerts, type AlertmanagerTarget } from '../alert/alertmanager.js';
import type { PostableAlert } from '../report/alerts.js';
import { writeTextfile } from '../write/textfile.js';
import { TOOL_NAME } from '../version.js';
import { delivered, notDelivered, underWay } from './deliveries.js';
import { parseFormatList } from './choices.js';

/*
 * The publish stage of a run: the formats rendered, and every output delivered (stdout, the run folder through
 * src/write/runs.ts, --prom-file, Alertmanager), each tried whatever became of the others. The formats are the
 * table of src/report/formats.ts.
 */

/** A format of scan and evaluate, by name (src/report/formats.ts). */
export type FormatName = string;

export function parseFormats(value: unknown): FormatName[] {
  return parseFormatList(value, formatNames('audit'));
}

export const fileFormatsOf = (formats: readonly FormatName[]): FormatName[] =>
  formats.filter((f) => AUDIT_FORMATS.some((known) => known.name === f && known.file !== null));

/** What a run delivers besides its reports: the textfile for node_exporter, and alerts. */
export interface DeliveryPlan {
  formats: FormatName[];
  out: string;
  keep: number;
  /** `--prom-file PATH`. */
  promFile?: string;
  /** Alertmanager, and the alerts of the report (built only when they are sent). */
  alerts?: { target: AlertmanagerTarget; of: (report: Report) => PostableAlert[] };
  /** --only-new: shapes only what is printed (with --quiet); the files always hold every finding. */
  onlyNew?: boolean;
}

/** `--out -` takes one format; checked before anything is evaluated. */
export function checkStdoutFormats(formats: readonly FormatName[], out: string): void {
  if (out === '-' && fileFormatsOf(formats).length + (formats.includes('text') ? 1 : 0) > 1) {
    throw new MeshAuditError('--out - writes one format to stdout; choose one with --format');
  }
}

const reportsIn = (named: string): string => `the reports in ${named.endsWith('/') ? named : `${named}/`}`;
const alertsTo = (target: AlertmanagerTarget): string => `the alerts to Alertmanager at ${target.url.origin}`;

/**
 * Delivers every output of a run, each tried whatever became of the others: text (or the one format
 * of `--out -`) on stdout, checked to the last byte; the file formats as a new run under the output
 * folder, published whole (see above), the newest `keep` complete runs kept; `--prom-file`; the alerts.
 * Called holding the output folder when the run has one (`folder`), so that alerts are posted in the
 * order of the runs: a slow post of an older run never lands after a newer run's (issue 31).
 * Prints `wrote …` for what was written and one line for each output that failed, then one naming
 * what was and was not delivered; returns whether all were.
 */
export async function deliverRun(
  report: Report,
  plan: DeliveryPlan,
  ctx: CommandContext,
  folder?: OutputFolder,
): Promise<boolean> {
  const { formats, out } = plan;
  checkStdoutFormats(formats, out);
  const files = fileFormatsOf(formats);
  if (out !== '-' && files.length > 0 && folder === undefined)
    return withOutputFolder(out, undefined, (held) => deliverRun(report, plan, ctx, held));
  return deliverEach(outputsOf(report, plan, ctx, folder), ctx);
}

/** One output of a run: its name in messages, and how it is delivered (returning its `wrote …` lines). */
interface Output {
  name: string;
  deliver: () => Promise<string[]>;
}

/** The outputs a run delivers, in order: stdout, the reports, --prom-file, the alerts. */
function outputsOf(report: Report, plan: DeliveryPlan, ctx: CommandContext, folder?: OutputFolder): Output[] {
  const { formats, out } = plan;
  const files = fileFormatsOf(formats);
  const outputs: Output[] = [];
  if (formats.includes('text') || (out === '-' && files.length > 0))
    outputs.push({ name: 'stdout', deliver: () => printed(report, plan, ctx) });
  if (out !== '-' && files.length > 0 && folder !== undefined) {
    outputs.push({
      name: reportsIn(folder.named),
      deliver: async () => (await publishReports(report, files, folder, plan.keep)).map((path) => `wrote ${path}`),
    });
  }
  const promFile = plan.promFile;
  if (promFile !== undefined)
    outputs.push({
      name: `--prom-file ${promFile}`,
      deliver: async () => [`wrote ${await writeTextfile(promFile, renderProm(report))}`],
    });
  const alerts = plan.alerts;
  if (alerts !== undefined) {
    outputs.push({
      name: alertsTo(alerts.target),
      deliver: async () => {
        const sent = alerts.of(report);
        underWay(alertsTo(alerts.target));
        await postAlerts(alerts.target, sent);
        return [
          `sent ${sent.length} alert${sent.length === 1 ? '' : 's'} to Alertmanager at ${alerts.target.url.origin}`,
        ];
      },
    });
  }
  return outputs;
}

/** What a run prints: the text report, or the one format of `--out -`, checked to the last byte. */
async function printed(report: Report, plan: DeliveryPlan, ctx: CommandContext): Promise<string[]> {
  const { formats, out } = plan;
  const files = fileFormatsOf(formats);
  // --quiet and --only-new shape only what is printed: the files always hold every finding.
  if (formats.includes('text')) {
    const text = (await auditFormat('text').writer()).render(report, {
      color: ctx.color,
      quiet: ctx.quiet === true,
      onlyNew: plan.onlyNew === true,
    });
    if (text !== '') ctx.stdout(text);
  }
  if (out === '-' && files[0] !== undefined) ctx.stdout((await auditFormat(files[0]).writer()).render(report));
  const failure = ctx.stdoutFailure?.();
  if (failure !== undefined) throw new MeshAuditError(failure, ExitCode.Incomplete);
  return [];
}

/**
 * Each output delivered, whatever became of the others; one line for each that failed, then one naming what was and
 * was not delivered. Whether all were.
 */
async function deliverEach(outputs: readonly Output[], ctx: CommandContext): Promise<boolean> {
  for (const o of outputs) notDelivered(o.name);
  const done: string[] = [];
  const failed: string[] = [];
  for (const o of outputs) {
    try {
      for (const line of await o.deliver()) note(ctx, line);
      delivered(o.name);
      done.push(o.name);
    } catch (err) {
      // A usage error is found before anything is delivered; anything else is this output's failure.
      if (err instanceof MeshAuditError && err.exitCode === ExitCode.Usage) throw err;
      notDelivered(o.name);
      failed.push(o.name);
      ctx.stderr(
        `${TOOL_NAME}: ` +
          shownLines(
            err instanceof MeshAuditError || err instanceof AlertDeliveryError
              ? err.message
              : `${o.name}: internal error: ${(err as Error).message}`,
          ) +
          '\n',
      );
    }
  }
  if (failed.length > 0 && outputs.length > 1) {
    ctx.stderr(
      `${TOOL_NAME}: not delivered: ${failed.join(', ')}${done.length > 0 ? `; delivered: ${done.join(', ')}` : ''}\n`,
    );
  }
  return failed.length === 0;
}

/** The file formats as a new published run; the paths written, as the user named them. */
async function publishReports(
  report: Report,
  files: FormatName[],
  folder: OutputFolder,
  keep: number,
): Promise<string[]> {
  try {
    const runFiles = (await Promise.all(files.map((f) => filesOf(auditFormat(f), report)))).flat();
    return await publishRun(folder, runFiles, report.generatedAt, keep, () => delivered(reportsIn(folder.named)));
  } catch (err) {
    if (err instanceof WriteFailure) {
      throw new MeshAuditError(
        `${err.message}; this run's reports were not published (the previous ones stand)`,
        ExitCode.Incomplete,
      );
    }
    throw err;
  }
}
