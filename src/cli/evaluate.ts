import type { CAC, Command } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { exitCodeOf, FAIL_ON_VALUES, type FailOn } from '../outcome.js';
import { auditSnapshot, reportOf, rulesOf, triage } from '../pipeline.js';
import type { Evaluation } from '../evaluate/finding.js';
import { allNotifications, type Report } from '../report/report.js';
import { evaluateInWorkers, workersFor, WORKERS_FROM_FILES } from './evaluate-workers.js';
import { postAlerts } from '../alert/alertmanager.js';
import { alertsOf } from '../report/alerts.js';
import { renderProm } from '../report/prom.js';
import { writeTextfile } from '../write/textfile.js';
import { loadReportFile, previousReport, type ReportFile } from '../report/report-file.js';
import { loadWaivers } from '../report/waivers-file.js';
import { loadPolicies, type PolicyChoice } from '../policy/load.js';
import type { Profile } from '../policy/types.js';
import { loadHistory } from '../snapshot/history.js';
import { loadSnapshot } from '../snapshot/load.js';
import { withProblems } from '../snapshot/problems.js';
import type { Problem, Snapshot } from '../snapshot/types.js';
import { DEFAULT_LOCK_TIMEOUT_SECONDS, fileFormatsOf, latestJsonReport, parseFormats, withOutputFolder, writeReports, type OutputFolder } from './output.js';
import { detail, list, note, type CommandContext } from './context.js';
import { EMPTY_SCOPE, type Scope } from '../scope.js';
import { addPolicyOptions, CONFIG_HELP, prepareAudit } from './settings.js';
import { DEFAULT_REPORT_SETTINGS } from '../config.js';
import { parseCount, parseLockTimeout } from './choices.js';
import { parseChoice } from './choices.js';

export interface AuditOptions {
  policy?: string | string[];
  /** False with --no-default-policy. */
  defaultPolicy?: boolean;
  /** The packs to load, once worked out from flags and config (prepareAudit). */
  policies?: PolicyChoice;
  history?: string;
  format: string;
  out: string;
  failOn: string;
  profile?: string;
  baseline?: string;
  failOnNew?: boolean;
  /** --only-new: the text report prints only the findings new against the baseline. */
  onlyNew?: boolean;
  waivers?: string;
  keep?: string | number;
  alertmanager?: string;
  alertTtl?: string | number;
  promFile?: string;
  jobs?: string | number;
  lockTimeout?: string | number;
  include?: string | string[];
  exclude?: string | string[];
  ignoreFile?: string;
  config?: string;
  /** What is in scope, once worked out from flags, config and ignore files (prepareAudit). */
  scope?: Scope;
}

async function baselineOf(option: string | undefined, out: string, folder: OutputFolder | undefined): Promise<ReportFile | undefined> {
  if (option === undefined) return undefined;
  if (option !== 'auto') return loadReportFile(option);
  if (out === '-' || folder === undefined) throw new MeshAuditError('--baseline auto reads the previous report in --out; with --out - name the baseline file');
  return (await previousReport(await latestJsonReport(folder.dir))) ?? { source: '(none: first run)', generatedAt: '', findings: [] };
}

/**
 * --only-new prints what is new against a baseline: without one nothing could be told new, and
 * printing everything under that flag would mail every standing finding every night.
 */
export function checkOnlyNew(options: Pick<AuditOptions, 'onlyNew' | 'baseline'>): void {
  if (options.onlyNew === true && options.baseline === undefined) {
    throw new MeshAuditError('--only-new prints the findings new against a baseline: add --baseline auto (the previous report in --out) or --baseline FILE');
  }
}

/** Whether a run writes into (or reads back from) the --out folder, and so must hold it. */
export function usesOutputFolder(options: AuditOptions, ownHistory = false): boolean {
  if (options.out === '-') return false;
  return ownHistory || options.baseline === 'auto' || fileFormatsOf(parseFormats(options.format)).length > 0;
}

export const parseFailOn = (value: unknown): FailOn => parseChoice('--fail-on', value, FAIL_ON_VALUES);

export function parseProfile(value: unknown): Profile | undefined {
  if (value === undefined) return undefined;
  const p = parseChoice('--profile', value, ['nightly', 'premigration', 'all'] as const);
  return p === 'all' ? undefined : p;
}

/** Evaluate loaded snapshots and write the reports; shared by `evaluate` and `scan --snapshot`. */
/** What is evaluated: snapshots at hand (a live scan's), or saved snapshot files. */
export type SnapshotSource = { snapshots: Iterable<Snapshot> } | { files: readonly string[] };

export async function auditAndReport(
  source: SnapshotSource,
  options: AuditOptions,
  ctx: CommandContext,
  preloadedHistory?: { snapshots: Snapshot[]; problems: Problem[] },
  startedAt: Date = ctx.now(),
  folder?: OutputFolder,
): Promise<number> {
  // Everything that can be wrong with the invocation is checked before anything is evaluated.
  const formats = parseFormats(options.format);
  checkOnlyNew(options);
  const failOn = parseFailOn(options.failOn);
  const profile = parseProfile(options.profile);
  const keep = parseCount('--keep', options.keep, 30);
  const ttlHours = parseCount('--alert-ttl', options.alertTtl, 25);
  const jobs = options.jobs === undefined ? undefined : parseCount('--jobs', options.jobs, 1);
  const lockTimeout = parseLockTimeout(options.lockTimeout);
  const workers = 'files' in source && preloadedHistory === undefined ? workersFor(source.files.length, jobs) : 0;
  const scope = options.scope ?? EMPTY_SCOPE;
  const policies = policyChoiceOfOptions(options);
  const packs = await loadPolicies(policies);
  const rules = packs.flatMap((p) => p.rules);
  const waivers = options.waivers !== undefined ? { source: options.waivers, waivers: await loadWaivers(options.waivers, rules) } : undefined;
  const named = options.baseline !== undefined && options.baseline !== 'auto' ? await baselineOf(options.baseline, options.out, folder) : undefined;
  const selected = rulesOf(rules, profile);
  // JUnit lists every rule x subject checked, passes too: kept only when it is asked for.
  const recordChecks = formats.includes('junit');
  let evaluations: Evaluation[];
  if ('files' in source && workers > 0) {
    // Each worker loads the history itself (a folder it cannot read is still exit 2, from the first file).
    evaluations = await evaluateInWorkers(source.files, { policies, profile, historyDir: options.history, recordChecks, scope, now: startedAt.toISOString() }, workers);
  } else {
    const history = preloadedHistory ?? (options.history !== undefined ? await loadHistory(options.history) : { snapshots: [], problems: [] });
    // One snapshot at a time: each is dropped once evaluated, so a fleet's worth is never held at once
    // (1,000 snapshots of 100 containers took 1.4 GB when all were loaded first; test/bench/fleet.bench.ts).
    evaluations = [];
    for await (const snapshot of snapshotsOf(source)) {
      const withHistoryProblems = withProblems(snapshot, history.problems);
      evaluations.push(auditSnapshot(withHistoryProblems, history.snapshots, selected, { recordChecks, scoped: { scope, now: startedAt } }));
    }
  }
  const now = ctx.now();
  detail(ctx, `evaluated ${evaluations.length} snapshot${evaluations.length === 1 ? '' : 's'} with ${selected.length} rules in ${now.getTime() - startedAt.getTime()} ms`);
  const evaluated = reportOf(evaluations, selected, { now, startedAt, packs });
  const publish = async (held: OutputFolder | undefined): Promise<Report> => {
    const baseline = named ?? (await baselineOf(options.baseline, options.out, held));
    const report = triage(evaluated, { ...(waivers ? { waivers } : {}), ...(baseline ? { baseline } : {}), now });
    const written = await writeReports(report, formats, options.out, ctx, keep, held, { onlyNew: options.onlyNew === true });
    if (options.promFile !== undefined) written.push(await writeTextfile(String(options.promFile), renderProm(report)));
    for (const path of written) note(ctx, `wrote ${path}`);
    return report;
  };
  // One run at a time in an output folder: held (here, or by the scan from reading its history) from
  // reading the previous report to publishing this run's; nothing is touched there before evaluation.
  const report = folder === undefined && usesOutputFolder(options) ? await withOutputFolder(options.out, lockTimeout, publish) : await publish(folder);
  const code = exitCodeOf(report, failOn, { onlyNew: options.failOnNew === true });
  // An incomplete run says so on every invocation (under --quiet too): in the text report when one is
  // printed; a scan told each problem on stderr as it read (src/acquire.ts); saved snapshots say it here.
  if ('files' in source && !formats.includes('text')) {
    const notChecked = allNotifications(report).filter((n) => n.level === 'error');
    const shown = notChecked.slice(0, 3).map((n) => n.message);
    if (notChecked.length > 3) shown.push(`and ${notChecked.length - 3} more (see the reports)`);
    if (notChecked.length > 0) ctx.stderr(`mesh-audit: INCOMPLETE: ${notChecked.length} thing${notChecked.length === 1 ? '' : 's'} not checked: ${shown.join('; ')}\n`);
  }
  if (options.alertmanager !== undefined) {
    try {
      await postAlerts(options.alertmanager, alertsOf(report, { ttlHours }));
    } catch (err) {
      // The reports are written; alerting did not get them, so the run is not complete.
      ctx.stderr(`mesh-audit: ${(err as Error).message}\n`);
      return ExitCode.Incomplete;
    }
  }
  return code;
}

/** The packs a run loads: as prepareAudit worked them out, else from the flags alone. */
export const policyChoiceOfOptions = (options: AuditOptions): PolicyChoice => options.policies ?? { added: list(options.policy), shipped: options.defaultPolicy !== false };

/** Each snapshot when its turn comes: nothing is written until all are evaluated, and a bad one is still exit 2. */
async function* snapshotsOf(source: SnapshotSource): AsyncGenerator<Snapshot> {
  if ('snapshots' in source) yield* source.snapshots;
  else for (const path of source.files) yield await loadSnapshot(path);
}

/** The options of every command that evaluates and reports: policy, format, output, exit threshold. */
export function addAuditOptions(command: Command): Command {
  if (!command.options.some((o) => o.name === 'config')) command.option('--config <file>', CONFIG_HELP);
  return addPolicyOptions(command)
    .option('--format <list>', `Comma-separated: text (stdout), sarif, json, jsonl, junit, prom (default: ${DEFAULT_REPORT_SETTINGS.format})`)
    .option('--out <dir>', 'Output folder for reports (and a scan\'s history), or - for stdout (default: reports; /var/lib/mesh-audit for root; $MESH_AUDIT_OUT)')
    .option('--fail-on <severity>', 'Exit 1 on findings at or above: error, warning, note, none (default: error; $MESH_AUDIT_FAIL_ON)')
    .option('--include <selector>', 'Only these containers or files: label:KEY=VALUE, name:GLOB, path:GLOB; repeatable')
    .option('--exclude <selector>', 'Leave out containers or files (counted in the summary): label:KEY=VALUE, name:GLOB, path:GLOB; repeatable')
    .option('--ignore-file <file>', 'Selectors to leave out, one a line, optionally `until YYYY-MM-DD` (default: ./.mesh-auditignore when present)')
    .option('--fail-on-new', 'Exit 1 only for new findings (against --baseline) at or above --fail-on')
    .option('--only-new', 'Text report: print only the findings new against --baseline, and what was not checked (the files keep every finding)')
    .option('--baseline <file|auto>', 'An earlier JSON report: mark findings new, unchanged or updated, list the absent; auto: the previous report in --out')
    .option('--waivers <file>', 'YAML waivers: rule, subject pattern, justification, expiry')
    .option('--keep <n>', 'Report runs kept under --out (and a scan\'s snapshots of this host) (default 30)')
    .option('--lock-timeout <seconds>', `How long to wait while another run holds --out before giving up with exit 3 (default ${DEFAULT_LOCK_TIMEOUT_SECONDS})`)
    .option('--prom-file <path>', "Also write the Prometheus metrics to this file (node_exporter's textfile folder; mode 0644, replaced atomically)")
    .option('--alertmanager <url>', 'Post findings as alerts to this Alertmanager (v2 API); absent ones are resolved')
    .option('--alert-ttl <hours>', 'How long a posted alert lasts unless the next run renews it (default 25)')
    .option('--profile <name>', `Only rules of this profile: nightly, premigration, all (default: ${DEFAULT_REPORT_SETTINGS.profile})`);
}

export function registerEvaluate(cli: CAC, ctx: CommandContext): void {
  addAuditOptions(
    cli
      .command('evaluate <...snapshots>', 'Evaluate saved snapshots (no live host is read)')
      .option('--history <dir>', 'Folder of earlier snapshots of the same hosts: former targets of ledger ids')
      .option('--jobs <n>', `Snapshots evaluated at once, in worker threads (default: one per CPU from ${WORKERS_FROM_FILES} files on; 1: all on the main thread)`),
  )
    .example('mesh-audit evaluate examples/045/snapshot.json')
    .example('mesh-audit evaluate examples/097/snapshot.json --history examples/097/history --format json --out -')
    .action(async (paths: string[], options: AuditOptions) => {
      const { audit } = await prepareAudit(options, ctx);
      return auditAndReport({ files: paths }, audit, ctx);
    });
}
