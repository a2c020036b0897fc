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
import { renderPremigrationJson } from '../report/premigration/json.js';
import { renderPremigrationMarkdown } from '../report/premigration/markdown.js';
import { excludedText, type Premigration, type PremigrationReport } from '../report/premigration/model.js';
import { renderAdoptionPlan } from '../report/premigration/plan.js';
import { renderPremigrationText } from '../report/premigration/text.js';
import { renderSarif } from '../report/sarif.js';
import { withProblems } from '../snapshot/problems.js';
import type { Snapshot } from '../snapshot/types.js';
import { writeFileAtomic } from '../write/atomic.js';
import { withOutputFolder, type OutputFolder } from '../write/runs.js';
import { note, type CommandContext } from './context.js';
import { parseFormatList, parseLockTimeout } from './choices.js';
import { addPolicyOptions, addScopeOptions, policyChoiceOf, settingsAndScopeOf } from './settings.js';
import { delivered } from './deliveries.js';
import { acquireFor, addCollectOptions, type AcquireOptions } from './acquire.js';
import type { ResolvedSettings } from '../config.js';
import type { LoadedRule, PolicyPack } from '../policy/types.js';
import { applyScope, readingScopeOf, type Scope } from '../scope.js';

/** Output formats of the pre-migration check, in one list: name, file, renderer. */
const FORMATS = {
  json: { file: 'premigration.json', render: (p: PremigrationReport) => renderPremigrationJson(p) },
  md: { file: 'premigration.md', render: (p: PremigrationReport) => renderPremigrationMarkdown(p) },
  sarif: { file: 'premigration.sarif', render: (p: PremigrationReport) => renderSarif(p.report) },
  text: { file: null, render: (p: PremigrationReport, color = false) => renderPremigrationText(p, { color }) },
} as const;
type Format = keyof typeof FORMATS;

function parseFormats(value: unknown, out: string): Format[] {
  const formats = parseFormatList(value, Object.keys(FORMATS) as Format[]);
  if (out === '-' && formats.length > 1)
    throw new MeshAuditError('--out - writes one format to stdout; choose one with --format');
  return formats;
}

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
  if (Object.values(FORMATS).some((f) => f.file === name))
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
  addScopeOptions(
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
    .option('--history <dir>', 'Folder of earlier snapshots (default: the history kept under --out)')
    .option('--format <list>', 'Comma-separated: text (stdout), json, sarif, md (a summary for a change ticket)', {
      default: 'text,json,sarif,md',
    })
    .option(
      '--out <dir>',
      'Output folder for the json, sarif and md files, or - for the one chosen format on stdout (default: reports; ' +
        '/var/lib/mesh-audit for root; $MESH_AUDIT_OUT)',
    )
    .option(
      '--plan <file>',
      'Also write the adoption plan (JSON, policies/adoption-plan.schema.json) as this file of the output folder',
    )
    .example('sudo mesh-audit premigrate --managed-root /etc/mesh --plan adoption-plan.json')
    .example(
      'mesh-audit premigrate --snapshot examples/adopted-node/snapshot.json --history examples/adopted-node/history',
    )
    .example('mesh-audit premigrate --snapshot examples/adopted-node/snapshot.json --format md --out -')
    .option('--lock-timeout <seconds>', 'How long to wait while another run holds --out before giving up with exit 3')
    .action(async (flags: Omit<PremigrateOptions, 'out'> & { out?: string }) => {
      // Everything that can be wrong with the invocation (options, config, scope, policies) is checked
      // before the host is read or the output folder touched.
      const startedAt = ctx.now();
      const { resolved, scope } = await settingsAndScopeOf(flags, ctx);
      const options: PremigrateOptions = { ...flags, out: resolved.settings.out, policies: policyChoiceOf(resolved) };
      const out = String(options.out);
      const formats = parseFormats(options.format, out);
      const lockTimeout = parseLockTimeout(options.lockTimeout);
      checkPlanName(options.plan, out);
      const packs = await loadPolicies(options.policies);
      const rules = packs.flatMap((p) => p.rules);
      const planSchema = options.plan !== undefined ? await readAdoptionPlanSchema() : undefined;
      const run: PremigrateRun = { resolved, scope, packs, rules, planSchema, startedAt };
      const files = formats.filter((f) => FORMATS[f].file !== null);
      const live = options.snapshot === undefined && options.history === undefined;
      // One run at a time in an output folder: it holds this run's files and the scanner's own history.
      if (out !== '-' && (files.length > 0 || live || options.plan !== undefined)) {
        return withOutputFolder(out, lockTimeout, (folder) => premigrate(options, formats, run, folder));
      }
      return premigrate(options, formats, run);
    });

  async function premigrate(
    options: PremigrateOptions,
    formats: Format[],
    run: PremigrateRun,
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
    });
    const nodes = premigrationNodes(snapshots, acquired.history.snapshots, report, scoped);
    await writePremigration({ report, nodes }, options, formats, folder, planSchema);
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
    formats: Format[],
    folder: OutputFolder | undefined,
    planSchema: object | undefined,
  ): Promise<void> {
    const out = String(options.out);
    if (formats.includes('text')) ctx.stdout(FORMATS.text.render(result, out === '-' ? false : ctx.color));
    const files = formats.filter((f) => FORMATS[f].file !== null);
    if (out === '-') {
      if (files[0] !== undefined) ctx.stdout(FORMATS[files[0]].render(result));
      return;
    }
    if (folder === undefined) return;
    for (const f of files) {
      await writeFileAtomic(folder.dir, FORMATS[f].file!, FORMATS[f].render(result));
      delivered(join(out, FORMATS[f].file!));
      note(ctx, `wrote ${join(out, FORMATS[f].file!)}`);
    }
    if (options.plan !== undefined && planSchema !== undefined) {
      await writeFileAtomic(folder.dir, options.plan, renderAdoptionPlan(result, planSchema));
      delivered(join(out, options.plan));
      note(ctx, `wrote ${join(out, options.plan)}`);
    }
  }
}
