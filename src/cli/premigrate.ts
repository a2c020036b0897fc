import type { HistoryInput } from '../facts/history.js';
import type { CAC } from 'cac';
import { join } from 'node:path';
import { ExitCode, MeshAuditError } from '../errors.js';
import { buildSubjects } from '../facts/subjects.js';
import type { Report } from '../report/report.js';
import { auditSnapshots } from '../pipeline.js';
import { loadPolicies, type PolicyChoice } from '../policy/load.js';
import { buildInventory } from '../premigrate/inventory.js';
import { buildPlan } from '../premigrate/plan.js';
import { readAdoptionPlanSchema } from '../premigrate/plan-schema.js';
import { excludedText, type Premigration, type PremigrationReport } from '../report/premigration/model.js';
import { renderAdoptionPlan } from '../report/premigration/plan.js';
import { formatNames, PREMIGRATION_FORMATS, premigrationFormat, type PremigrationFormat } from '../report/formats.js';
import { withProblems } from '../snapshot/problems.js';
import type { Snapshot } from '../snapshot/types.js';
import { writeFileAtomic } from '../write/atomic.js';
import { withOutputFolder, type OutputFolder } from '../write/runs.js';
import { note, type CommandContext } from './context.js';
import { parseFormatList, parseLockTimeout } from './choices.js';
import {
  addPolicyOptions,
  addScopeOptions,
  addSettingOptions,
  policyChoiceOf,
  settingsAndScopeOf,
} from './settings.js';
import { delivered } from './deliveries.js';
import { acquireFor, addCollectOptions, type AcquireOptions } from './acquire.js';
import type { ResolvedSettings } from '../config.js';
import type { LoadedRule, PolicyPack } from '../policy/types.js';
import { applyScope, readingScopeOf, type Scope } from '../scope.js';
import { checkSkip } from '../policy/skip.js';

/** The formats of the pre-migration check: src/report/formats.ts. */
function parseFormats(value: unknown, out: string): string[] {
  const formats = parseFormatList(value, formatNames('premigrate'));
  if (out === '-' && formats.length > 1)
    throw new MeshAuditError('--out - writes one format to stdout; choose one with --format');
  return formats;
}

const fileFormatsOf = (formats: readonly string[]): PremigrationFormat[] =>
  formats.map(premigrationFormat).filter((f) => f.file !== null);

type PremigrateOptions = AcquireOptions & {
  policy?: string | string[];
  defaultPolicy?: boolean;
  policies?: PolicyChoice;
  format: string;
  plan?: string;
  lockTimeout?: string | number;
};

/** `--plan NAME`: a file of the output folder, like the reports; nothing is written anywhere else. */
function checkPlanName(plan: unknown, out: string): void {
  if (plan === undefined) return;
  const name = String(plan);
  if (typeof plan !== 'string' || name === '' || name.includes('/') || name.startsWith('.') || name === '-') {
    throw new MeshAuditError(`--plan takes a file name, written into the output folder (--out), not '${name}'`);
  }
  if (PREMIGRATION_FORMATS.some((f) => f.file === name))
    throw new MeshAuditError(`--plan ${name} would overwrite a report of the same name; choose another name`);
  if (out === '-')
    throw new MeshAuditError(
      '--plan writes into the output folder; with --out - there is none (name a folder with --out)',
    );
}

/**
 * Each node's standings, ports, verdict and plan. The standings and the verdict come from the findings
 * of the profile's rules (report.rules); the subjects give only facts: names, ports, claims.
 */
function premigrationNodes(
  snapshots: readonly Snapshot[],
  history: HistoryInput,
  report: Report,
  scoped: { scope: Scope; now: Date },
): Premigration[] {
  return snapshots.map((s, i) => {
    const evaluation = report.evaluations[i]!;
    // The plan names only what is in scope: another system's containers are never proposed for removal.
    const subjects = applyScope(buildSubjects(s, history), s, scoped.scope, scoped.now).subjects;
    const inventory = buildInventory(subjects, evaluation.findings, report.rules);
    const plan = buildPlan(inventory, subjects);
    // Unknown is never absent: what was not read may hide resources the plan would have named.
    if (!evaluation.complete)
      plan.notes.unshift(
        "the node was not read whole (see the report's not checked): this plan may miss resources, and the node has " +
          'no verdict',
      );
    const excluded =
      evaluation.excluded && Object.values(evaluation.excluded).some((n) => n > 0) ? evaluation.excluded : undefined;
    if (excluded)
      plan.notes.push(`out of scope, so not in this plan: ${excludedText(excluded)} (include, exclude, ignore)`);
    return {
      host: s.host.hostname,
      takenAt: s.takenAt,
      complete: evaluation.complete,
      notChecked: evaluation.notifications.filter((n) => n.level === 'error').map((n) => n.message),
      inventory,
      plan,
      ...(excluded ? { excluded } : {}),
    };
  });
}

/** What a pre-migration run was asked, checked before the host is read or the output folder touched. */
interface PremigrateRun {
  resolved: ResolvedSettings;
  scope: Scope;
  packs: PolicyPack[];
  rules: LoadedRule[];
  planSchema: object | undefined;
  startedAt: Date;
}

export function registerPremigrate(cli: CAC, ctx: CommandContext): void {
  const command = addScopeOptions(
    addPolicyOptions(
      addCollectOptions(
        cli.command(
          'premigrate',
          "Pre-migration check of an adopted node: every resource's standing, its ports, a verdict and an " +
            'adoption plan',
        ),
      ),
    ),
  )
    .option('--snapshot <file>', 'Check a saved snapshot instead of reading the host')
    .option('--history <dir>', 'Folder of earlier snapshots (default: the history kept under --out)');
  addSettingOptions(command, ['format', 'out'])
    .option(
      '--plan <file>',
      'Also write the adoption plan (JSON, policies/adoption-plan.schema.json) as this file of the output folder',
    )
    .example('sudo mesh-audit premigrate --managed-root /etc/mesh --plan adoption-plan.json')
    .example(
      'mesh-audit premigrate --snapshot examples/adopted-node/snapshot.json --history examples/adopted-node/history',
    )
    .example('mesh-audit premigrate --snapshot examples/adopted-node/snapshot.json --format md --out -');
  addSettingOptions(command, ['lockTimeout']).action((flags: Omit<PremigrateOptions, 'out'> & { out?: string }) =>
    runPremigrate(flags, ctx),
  );
}

/**
 * Everything that can be wrong with the invocation (options, config, scope, policies) is checked before the host is
 * read or the output folder touched; then the check runs, holding the output folder when it writes there.
 */
async function runPremigrate(
  flags: Omit<PremigrateOptions, 'out'> & { out?: string },
  ctx: CommandContext,
): Promise<number> {
  const startedAt = ctx.now();
  const { resolved, scope } = await settingsAndScopeOf(flags, ctx);
  const options: PremigrateOptions = { ...flags, out: resolved.settings.out, policies: policyChoiceOf(resolved) };
  const out = String(options.out);
  const formats = parseFormats(options.format, out);
  const lockTimeout = parseLockTimeout(options.lockTimeout);
  checkPlanName(options.plan, out);
  const packs = await loadPolicies(options.policies);
  const rules = packs.flatMap((p) => p.rules);
  const skip = resolved.settings.skip;
  await checkSkip(
    skip,
    rules,
    resolved.origins.skip.startsWith('flag ') ? '--skip' : `skip (${resolved.origins.skip})`,
  );
  const planSchema = options.plan !== undefined ? await readAdoptionPlanSchema() : undefined;
  const run: PremigrateRun = { resolved, scope, packs, rules, planSchema, startedAt };
  const files = fileFormatsOf(formats);
  const live = options.snapshot === undefined && options.history === undefined;
  // One run at a time in an output folder: it holds this run's files and the scanner's own history.
  if (out !== '-' && (files.length > 0 || live || options.plan !== undefined)) {
    return withOutputFolder(out, lockTimeout, (folder) => premigrate(options, formats, run, ctx, folder));
  }
  return premigrate(options, formats, run, ctx);
}

async function premigrate(
  options: PremigrateOptions,
  formats: string[],
  run: PremigrateRun,
  ctx: CommandContext,
  folder?: OutputFolder,
): Promise<number> {
  const { startedAt, scope, planSchema } = run;
  const acquired = await acquireFor(options, run.resolved.settings, ctx, folder, readingScopeOf(scope, startedAt));
  const notKept = await acquired.keep();
  const snapshots = acquired.snapshots.map((s) => withProblems(s, notKept, acquired.history.problems));
  const scoped = { scope, now: startedAt };
  const report = auditSnapshots(snapshots, acquired.history.snapshots, run.rules, {
    profile: 'premigration',
    now: ctx.now(),
    startedAt,
    packs: run.packs,
    scoped,
    docsUrl: run.resolved.settings.docsUrl,
    skip: run.resolved.settings.skip,
  });
  const nodes = premigrationNodes(snapshots, acquired.history.snapshots, report, scoped);
  await writePremigration({ report, nodes }, options, formats, { ctx, folder, planSchema });
  if (nodes.some((n) => !n.complete)) return ExitCode.Incomplete;
  return nodes.every((n) => n.inventory.ready) ? ExitCode.Ok : ExitCode.Findings;
}

/**
 * Text on stdout, the chosen files (and the plan) into the output folder, or the one chosen format on stdout with
 * --out -.
 */
async function writePremigration(
  result: PremigrationReport,
  options: PremigrateOptions,
  formats: string[],
  where: { ctx: CommandContext; folder: OutputFolder | undefined; planSchema: object | undefined },
): Promise<void> {
  const { ctx, folder, planSchema } = where;
  const out = String(options.out);
  if (formats.includes('text'))
    ctx.stdout((await premigrationFormat('text').writer())(result, out === '-' ? false : ctx.color));
  const files = fileFormatsOf(formats);
  if (out === '-') {
    if (files[0] !== undefined) ctx.stdout((await files[0].writer())(result));
    return;
  }
  if (folder === undefined) return;
  for (const f of files) {
    await writeFileAtomic(folder.dir, f.file!, (await f.writer())(result));
    delivered(join(out, f.file!));
    note(ctx, `wrote ${join(out, f.file!)}`);
  }
  if (options.plan !== undefined && planSchema !== undefined) {
    await writeFileAtomic(folder.dir, options.plan, renderAdoptionPlan(result, planSchema));
    delivered(join(out, options.plan));
    note(ctx, `wrote ${join(out, options.plan)}`);
  }
}
