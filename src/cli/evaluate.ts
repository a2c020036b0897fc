import type { CAC, Command } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { shownMessage } from '../shown.js';
import { exitCodeOf, FAIL_ON_VALUES, type FailOn } from '../settings/outcome.js';
import { auditSnapshot, reportOf, rulesOf, skippedRulesOf, triage } from '../pipeline.js';
import { checkSkip } from '../policy/skip.js';
import type { Evaluation } from '../evaluate/finding.js';
import { allNotifications, type Report } from '../report/report.js';
import { cappedJobs, evaluateInWorkers, workersFor, WORKERS_FROM_FILES } from './evaluate-workers.js';
import type { AlertmanagerTarget } from '../alert/alertmanager.js';
import { alertsOf } from '../report/alerts.js';
import { loadReportFile, previousReport, type ReportFile } from '../report/report-file.js';
import { loadWaivers } from '../report/waivers-file.js';
import { loadPolicies, type PolicyChoice } from '../policy/load.js';
import { PROFILE_CHOICES, type Profile } from '../policy/types.js';
import { loadHistory } from '../snapshot/history.js';
import { historyReading } from '../acquire.js';
import { loadSnapshot } from '../snapshot/load.js';
import { withProblems } from '../snapshot/problems.js';
import type { Problem, Snapshot } from '../snapshot/types.js';
import { checkStdoutFormats, deliverRun, fileFormatsOf, parseFormats, type DeliveryPlan } from './output.js';
import { DEFAULT_LOCK_TIMEOUT_SECONDS, latestJsonReport, withOutputFolder, type OutputFolder } from '../write/runs.js';
import type { HistoryInput } from '../facts/history.js';
import { detail, list, note, type CommandContext } from './context.js';
import { alertmanagerTargetOf } from '../alert/target.js';
import { prepareOutputDir } from '../write/atomic.js';
import { lockForReading, type OutputLock } from '../write/lock.js';
import type { Scope } from '../scope.js';
import {
  addPolicyOptions,
  addScopeOptions,
  addSettingOptions,
  policyChoiceOf,
  settingsAndScopeOf,
  type SettingFlags,
} from './settings.js';
import type { PolicyPack } from '../policy/types.js';
import type { ResolvedSettings } from '../config.js';
import type { LoadedRule } from '../policy/types.js';
import type { Waiver } from '../report/waivers.js';
import type { FormatName } from './output.js';
import { didYouMean, parseChoice, parseCount, parseLockTimeout } from './choices.js';
import { existsSync } from 'node:fs';

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
  replaceLists?: boolean;
}

/**
 * Everything a run of `scan` or `evaluate` was asked, read and checked before the host or any snapshot
 * is read and before the output folder is touched (issue 28): a mistake in any option, config value,
 * policy, waiver or baseline is exit 2 with nothing read, nothing written, no run number taken.
 */
export interface AuditRun {
  options: AuditOptions;
  resolved: ResolvedSettings;
  /** The output folder (flag, environment, config or default). */
  out: string;
  formats: FormatName[];
  failOn: FailOn;
  profile: Profile | undefined;
  keep: number;
  ttlHours: number;
  jobs: number | undefined;
  lockTimeout: number | undefined;
  scope: Scope;
  /** The packs the run loads (shipped and added, config and flags: policyChoiceOf), loaded. */
  policies: PolicyChoice;
  packs: PolicyPack[];
  rules: LoadedRule[];
  /** The rules evaluated: the profile's, less those `skip` names. */
  selected: LoadedRule[];
  /** The `skip` setting, checked (every id names a rule). */
  skip: string[];
  /** The rules of the profile `skip` left out: every report names them. */
  skipped: string[];
  waivers: { source: string; waivers: Waiver[] } | undefined;
  /** A baseline named as a file, read now; `auto` is read from the output folder once it is held. */
  baseline: ReportFile | undefined;
  /** Where alerts go, with its credentials (from the config file or the environment, never the command line). */
  alertTarget: AlertmanagerTarget | undefined;
}

/**
 * `--prom-file`: node_exporter's textfile collector reads only `*.prom` (the folder is checked when written:
 * src/write/textfile.ts).
 */
export function checkPromFileName(value: unknown, what = '--prom-file'): void {
  if (value === undefined) return;
  const name = String(value).split('/').pop() ?? '';
  if (!name.endsWith('.prom') || name === '.prom')
    throw new MeshAuditError(
      `${what} ${String(value)}: the name must end in '.prom' (node_exporter's textfile collector reads only those)`,
    );
}

/**
 * How an error names a setting: its flag when the flag gave it, else the key and where it is written (`baseline (config
 * FILE:LINE)`).
 */
const settingName = (resolved: ResolvedSettings, key: keyof ResolvedSettings['settings']): string =>
  resolved.origins[key].startsWith('flag ')
    ? resolved.origins[key].slice('flag '.length)
    : `${key} (${resolved.origins[key]})`;

/** `--baseline`: `auto`, or a JSON report read now (a typo of `auto` is not read as a file name). */
async function namedBaselineOf(
  option: string | undefined,
  out: string,
  what = '--baseline',
): Promise<ReportFile | undefined> {
  if (option === undefined) return undefined;
  if (option === 'auto') {
    if (out === '-')
      throw new MeshAuditError(`${what} auto reads the previous report in --out; with --out - name the baseline file`);
    return undefined;
  }
  if (!existsSync(option))
    throw new MeshAuditError(
      `${what} ${option}: no such file; give an earlier JSON report, or auto${didYouMean(option, ['auto'])}`,
    );
  return loadReportFile(option);
}

/**
 * Reads and checks every option, setting, policy, waiver and baseline of an auditing run, reading nothing of the host.
 */
export async function prepareAuditRun(flags: AuditOptions & SettingFlags, ctx: CommandContext): Promise<AuditRun> {
  const { resolved, scope } = await settingsAndScopeOf(flags, ctx);
  // The reporting settings a config can hold too (the nightly job's), each from its flag, else the config, else its
  // default.
  const {
    out,
    format,
    profile: profileName,
    baseline: baselineName,
    failOnNew,
    onlyNew,
    promFile,
    waivers: waiversFile,
  } = resolved.settings;
  const options: AuditOptions = {
    ...flags,
    out,
    format,
    profile: profileName,
    baseline: baselineName,
    failOnNew,
    onlyNew,
    promFile,
    waivers: waiversFile,
    policies: policyChoiceOf(resolved),
  };
  const formats = parseFormats(options.format);
  checkOnlyNew(options);
  checkStdoutFormats(formats, out);
  // The config's failOn was checked against the same values where it is written (its file:line).
  const failOn = parseFailOn(resolved.settings.failOn);
  const profile = parseProfile(options.profile);
  const keep = parseCount('--keep', options.keep, 30);
  const ttlHours = parseCount('--alert-ttl', options.alertTtl, 25);
  const jobs = options.jobs === undefined ? undefined : parseCount('--jobs', options.jobs, 1);
  const lockTimeout = parseLockTimeout(options.lockTimeout);
  const alertTarget = await alertmanagerTargetOf(
    options.alertmanager !== undefined ? String(options.alertmanager) : undefined,
    resolved.settings.alertmanager,
    ctx.env ?? process.env,
    resolved.configFile,
  );
  checkPromFileName(options.promFile, settingName(resolved, 'promFile'));
  const policies = policyChoiceOf(resolved);
  const packs = await loadPolicies(policies);
  const rules = packs.flatMap((p) => p.rules);
  const skip = resolved.settings.skip;
  await checkSkip(skip, rules, settingName(resolved, 'skip'));
  const waivers =
    options.waivers !== undefined
      ? { source: options.waivers, waivers: await loadWaivers(options.waivers, rules) }
      : undefined;
  const baseline = await namedBaselineOf(options.baseline, out, settingName(resolved, 'baseline'));
  return {
    options: { ...options, out, failOn },
    resolved,
    out,
    formats,
    failOn,
    profile,
    keep,
    ttlHours,
    jobs,
    lockTimeout,
    scope,
    policies,
    packs,
    rules,
    selected: rulesOf(rules, profile, skip),
    skip,
    skipped: skippedRulesOf(rules, profile, skip),
    waivers,
    baseline,
    alertTarget,
  };
}

async function baselineOf(
  option: string | undefined,
  out: string,
  folder: OutputFolder | undefined,
): Promise<ReportFile | undefined> {
  if (option === undefined) return undefined;
  if (option !== 'auto') return loadReportFile(option);
  if (out === '-' || folder === undefined)
    throw new MeshAuditError('--baseline auto reads the previous report in --out; with --out - name the baseline file');
  return (
    (await previousReport(await latestJsonReport(folder.dir))) ?? {
      source: '(none: first run)',
      generatedAt: '',
      findings: [],
    }
  );
}

/**
 * --only-new prints what is new against a baseline: without one nothing could be told new, and
 * printing everything under that flag would mail every standing finding every night.
 */
export function checkOnlyNew(options: Pick<AuditOptions, 'onlyNew' | 'baseline'>): void {
  if (options.onlyNew === true && options.baseline === undefined) {
    throw new MeshAuditError(
      '--only-new prints the findings new against a baseline: add --baseline auto (the previous report in --out) or ' +
        '--baseline FILE',
    );
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
  const p = parseChoice('--profile', value, PROFILE_CHOICES);
  return p === 'all' ? undefined : p;
}

/** Evaluate loaded snapshots and write the reports; shared by `evaluate` and `scan --snapshot`. */
/** What is evaluated: snapshots at hand (a live scan's), or saved snapshot files. */
export type SnapshotSource = { snapshots: Iterable<Snapshot> } | { files: readonly string[] };

export async function auditAndReport(
  source: SnapshotSource,
  run: AuditRun,
  ctx: CommandContext,
  preloadedHistory?: { snapshots: HistoryInput; problems: Problem[] },
  startedAt: Date = ctx.now(),
  folder?: OutputFolder,
): Promise<number> {
  // Everything that can be wrong with the invocation was checked before anything was read (prepareAuditRun).
  const { options, formats, failOn, keep, ttlHours, lockTimeout, selected, waivers } = run;
  const evaluations = await evaluationsOf(source, run, ctx, { preloadedHistory, startedAt, folder });
  const now = ctx.now();
  detail(
    ctx,
    `evaluated ${evaluations.length} snapshot${evaluations.length === 1 ? '' : 's'} with ${selected.length} rules in ` +
      `${now.getTime() - startedAt.getTime()} ms`,
  );
  const { packs } = run;
  const evaluated = reportOf(evaluations, selected, {
    now,
    startedAt,
    packs,
    docsUrl: run.resolved.settings.docsUrl,
    skipped: run.skipped,
  });
  const plan: DeliveryPlan = {
    formats,
    out: options.out,
    keep,
    ...(options.promFile !== undefined ? { promFile: String(options.promFile) } : {}),
    ...(run.alertTarget ? { alerts: { target: run.alertTarget, of: (r: Report) => alertsOf(r, { ttlHours }) } } : {}),
    onlyNew: options.onlyNew === true,
  };
  const publish = async (held: OutputFolder | undefined): Promise<{ report: Report; whole: boolean }> => {
    const baseline = run.baseline ?? (await baselineOf(options.baseline, options.out, held));
    const report = triage(evaluated, { ...(waivers ? { waivers } : {}), ...(baseline ? { baseline } : {}), now });
    return { report, whole: await deliverRun(report, plan, ctx, held) };
  };
  // One run at a time in an output folder: held (here, or by the scan from reading its history) from
  // reading the previous report to posting this run's alerts; nothing is touched there before evaluation.
  const { report, whole } =
    folder === undefined && usesOutputFolder(options)
      ? await withOutputFolder(options.out, lockTimeout, publish)
      : await publish(folder);
  // An incomplete run says so on every invocation (under --quiet too): in the text report when one is
  // printed; a scan told each problem on stderr as it read (src/acquire.ts); saved snapshots say it here.
  if ('files' in source && !formats.includes('text')) tellNotChecked(report, ctx);
  // An output not delivered (stdout, the reports, --prom-file, the alerts): the run is not complete.
  if (!whole) return ExitCode.Incomplete;
  return exitCodeOf(report, failOn, { onlyNew: options.failOnNew === true });
}

/**
 * Every snapshot evaluated: in worker threads when there are enough files, else one at a time here. A history
 * folder a scan writes is read under a shared lock (never while the scan prunes it), and released before this run
 * takes its own output folder's lock (which may be the same folder).
 */
async function evaluationsOf(
  source: SnapshotSource,
  run: AuditRun,
  ctx: CommandContext,
  given: {
    preloadedHistory: { snapshots: HistoryInput; problems: Problem[] } | undefined;
    startedAt: Date;
    folder: OutputFolder | undefined;
  },
): Promise<Evaluation[]> {
  const { options, formats, profile, jobs, lockTimeout, scope, selected, policies, skip } = run;
  const { preloadedHistory, startedAt, folder } = given;
  if (jobs !== undefined && cappedJobs(jobs) < jobs)
    note(ctx, `--jobs ${jobs} is more than this machine's ${cappedJobs(jobs)} CPUs: ${cappedJobs(jobs)} used`);
  const workers = 'files' in source && preloadedHistory === undefined ? workersFor(source.files.length, jobs) : 0;
  // JUnit lists every rule x subject checked, passes too: kept only when it is asked for.
  const recordChecks = formats.includes('junit');
  let historyLock: OutputLock | undefined;
  if (preloadedHistory === undefined && options.history !== undefined) {
    const ownFolder = folder?.dir ?? (usesOutputFolder(options) ? await prepareOutputDir(options.out) : undefined);
    historyLock = await lockForReading(options.history, lockTimeout ?? DEFAULT_LOCK_TIMEOUT_SECONDS, ownFolder);
  }
  try {
    if ('files' in source && workers > 0) {
      // Each worker loads the history itself (a folder it cannot read is still exit 2, from the first file).
      return await evaluateInWorkers(
        source.files,
        { policies, profile, skip, historyDir: options.history, recordChecks, scope, now: startedAt.toISOString() },
        workers,
      );
    }
    const history =
      preloadedHistory ??
      (options.history !== undefined
        ? await loadHistory(
            options.history,
            historyReading((line) => detail(ctx, line)),
          )
        : { snapshots: [], problems: [] });
    // One snapshot at a time: each is dropped once evaluated, so a fleet's worth is never held at once
    // (1,000 snapshots of 100 containers took 1.4 GB when all were loaded first; test/bench/fleet.bench.ts).
    const evaluations: Evaluation[] = [];
    for await (const snapshot of snapshotsOf(source)) {
      const withHistoryProblems = withProblems(snapshot, history.problems);
      evaluations.push(
        auditSnapshot(withHistoryProblems, history.snapshots, selected, {
          recordChecks,
          scoped: { scope, now: startedAt },
        }),
      );
    }
    return evaluations;
  } finally {
    await historyLock?.release();
  }
}

/** What saved snapshots could not have checked, on stderr (at most three named), when no text report says it. */
function tellNotChecked(report: Report, ctx: CommandContext): void {
  const notChecked = allNotifications(report).filter((n) => n.level === 'error');
  const told = notChecked.slice(0, 3).map((n) => shownMessage(n.message));
  if (notChecked.length > 3) told.push(`and ${notChecked.length - 3} more (see the reports)`);
  if (notChecked.length > 0)
    ctx.stderr(
      `mesh-audit: INCOMPLETE: ${notChecked.length} thing${notChecked.length === 1 ? '' : 's'} not checked: ` +
        `${told.join('; ')}\n`,
    );
}

/** The packs a run loads: as prepareAudit worked them out, else from the flags alone. */
export const policyChoiceOfOptions = (options: AuditOptions): PolicyChoice =>
  options.policies ?? { added: list(options.policy), shipped: options.defaultPolicy !== false };

/** Each snapshot when its turn comes: nothing is written until all are evaluated, and a bad one is still exit 2. */
async function* snapshotsOf(source: SnapshotSource): AsyncGenerator<Snapshot> {
  if ('snapshots' in source) yield* source.snapshots;
  else for (const path of source.files) yield await loadSnapshot(path);
}

/** The options of every command that evaluates and reports: policy, format, output, exit threshold. */
export function addAuditOptions(command: Command): Command {
  if (!command.options.some((o) => o.name === 'config')) addSettingOptions(command, ['config']);
  return addSettingOptions(addScopeOptions(addPolicyOptions(command)), [
    'format',
    'out',
    'failOn',
    'failOnNew',
    'onlyNew',
    'baseline',
    'waivers',
    'keep',
    'lockTimeout',
    'promFile',
    'alertmanager',
    'alertTtl',
    'profile',
  ]);
}

export function registerEvaluate(cli: CAC, ctx: CommandContext): void {
  addAuditOptions(
    cli
      .command('evaluate <...snapshots>', 'Evaluate saved snapshots (no live host is read)')
      .option('--history <dir>', 'Folder of earlier snapshots of the same hosts: former targets of ledger ids')
      .option(
        '--jobs <n>',
        `Snapshots evaluated at once, in worker threads, at most one per CPU (default: one per CPU from ` +
          `${WORKERS_FROM_FILES} files on; 1: all on the main thread)`,
      ),
  )
    .example('mesh-audit evaluate examples/045/snapshot.json')
    .example('mesh-audit evaluate examples/097/snapshot.json --history examples/097/history --format json --out -')
    .action(async (paths: string[], options: AuditOptions) =>
      auditAndReport({ files: paths }, await prepareAuditRun(options, ctx), ctx),
    );
}
