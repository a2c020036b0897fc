import type { CAC, Command } from 'cac';
import { MeshAuditError } from '../errors.js';
import { exitCodeOf, FAIL_ON_VALUES, type FailOn } from '../outcome.js';
import { auditSnapshots } from '../pipeline.js';
import { loadPolicies } from '../policy/load.js';
import type { Profile } from '../policy/types.js';
import { loadHistory } from '../snapshot/history.js';
import { loadSnapshot } from '../snapshot/load.js';
import type { Problem, Snapshot } from '../snapshot/types.js';
import { parseFormats, writeReports } from './output.js';
import { list, type CommandContext } from './context.js';

export interface AuditOptions {
  policy?: string | string[];
  history?: string;
  format: string;
  out: string;
  failOn: string;
  profile?: string;
}

export function parseFailOn(value: unknown): FailOn {
  const v = String(value) as FailOn;
  if (!FAIL_ON_VALUES.includes(v)) throw new MeshAuditError(`--fail-on must be one of ${FAIL_ON_VALUES.join(', ')}, not '${String(value)}'`);
  return v;
}

export function parseProfile(value: unknown): Profile | undefined {
  if (value === undefined || value === 'all') return undefined;
  if (value === 'nightly' || value === 'premigration') return value;
  throw new MeshAuditError(`--profile must be nightly, premigration or all, not '${String(value)}'`);
}

/** Evaluate loaded snapshots and write the reports; shared by `evaluate` and `scan --snapshot`. */
export async function auditAndReport(
  snapshots: Snapshot[],
  options: AuditOptions,
  ctx: CommandContext,
  preloadedHistory?: { snapshots: Snapshot[]; problems: Problem[] },
): Promise<number> {
  // Everything that can be wrong with the invocation is checked before anything is evaluated.
  const formats = parseFormats(options.format);
  const failOn = parseFailOn(options.failOn);
  const profile = parseProfile(options.profile);
  const packs = await loadPolicies(list(options.policy));
  const history = preloadedHistory ?? (options.history !== undefined ? await loadHistory(options.history) : { snapshots: [], problems: [] });
  const withHistoryProblems = snapshots.map((s) => (history.problems.length > 0 ? { ...s, problems: [...s.problems, ...history.problems] } : s));
  const report = auditSnapshots(withHistoryProblems, history.snapshots, packs.flatMap((p) => p.rules), { profile, now: ctx.now() });
  const written = await writeReports(report, formats, options.out, ctx);
  for (const path of written) ctx.stderr(`wrote ${path}\n`);
  return exitCodeOf(report, failOn);
}

/** The options of every command that evaluates and reports: policy, format, output, exit threshold. */
export function addAuditOptions(command: Command): Command {
  return command
    .option('--policy <path>', 'Policy pack file or folder; repeatable (default: the shipped mesh-core pack)')
    .option('--format <list>', 'Comma-separated: text (stdout), sarif, json', { default: 'text,sarif,json' })
    .option('--out <dir>', 'Output folder for reports (and a scan\'s history), or - for stdout', { default: 'reports' })
    .option('--fail-on <severity>', 'Exit 1 on findings at or above: error, warning, note, none', { default: 'error' })
    .option('--profile <name>', 'Only rules of this profile: nightly, premigration, all', { default: 'all' });
}

export function registerEvaluate(cli: CAC, ctx: CommandContext): void {
  addAuditOptions(
    cli
      .command('evaluate <...snapshots>', 'Evaluate saved snapshots (no live host is read)')
      .option('--history <dir>', 'Folder of earlier snapshots of the same hosts: former targets of ledger ids'),
  )
    .example('mesh-audit evaluate examples/045/snapshot.json')
    .example('mesh-audit evaluate examples/097/snapshot.json --history examples/097/history --format json --out -')
    .action(async (paths: string[], options: AuditOptions) => {
      const snapshots: Snapshot[] = [];
      for (const path of paths) snapshots.push(await loadSnapshot(path));
      return auditAndReport(snapshots, options, ctx);
    });
}
