import type { CAC } from 'cac';
import { ExitCode } from '../errors.js';
import { buildSubjects } from '../facts/subjects.js';
import { auditSnapshots } from '../pipeline.js';
import { loadPolicies } from '../policy/load.js';
import { buildInventory } from '../premigrate/inventory.js';
import { renderPremigrationJson } from '../report/premigration/json.js';
import { renderPremigrationMarkdown } from '../report/premigration/markdown.js';
import type { Premigration, PremigrationReport } from '../report/premigration/model.js';
import { renderPremigrationText } from '../report/premigration/text.js';
import { renderSarif } from '../report/sarif.js';
import { prepareOutputDir, writeFileAtomic } from '../write/atomic.js';
import { list, note, type CommandContext } from './context.js';
import { parseFormatList } from './choices.js';
import { settingsOf } from './settings.js';
import { acquireSnapshot, addCollectOptions, type AcquireOptions } from './scan.js';

/** Output formats of the pre-migration check, in one list: name, file, renderer. */
const FORMATS = {
  json: { file: 'premigration.json', render: (p: PremigrationReport) => renderPremigrationJson(p) },
  md: { file: 'premigration.md', render: (p: PremigrationReport) => renderPremigrationMarkdown(p) },
  sarif: { file: 'premigration.sarif', render: (p: PremigrationReport) => renderSarif(p.report) },
  text: { file: null, render: (p: PremigrationReport, color = false) => renderPremigrationText(p, { color }) },
} as const;
type Format = keyof typeof FORMATS;

const parseFormats = (value: unknown): Format[] => parseFormatList(value, Object.keys(FORMATS) as Format[]);

export function registerPremigrate(cli: CAC, ctx: CommandContext): void {
  addCollectOptions(cli.command('premigrate', 'Pre-migration check of an adopted node: every resource\'s standing, its ports, and a verdict'))
    .option('--snapshot <file>', 'Check a saved snapshot instead of reading the host')
    .option('--history <dir>', 'Folder of earlier snapshots (default: the history kept under --out)')
    .option('--policy <path>', 'Policy pack file or folder; repeatable (default: the shipped mesh-core pack)')
    .option('--format <list>', 'Comma-separated: text (stdout), json, sarif, md (a summary for a change ticket)', { default: 'text,json,sarif,md' })
    .option('--out <dir>', 'Output folder for the json, sarif and md files (default: reports; /var/lib/mesh-audit for root; $MESH_AUDIT_OUT)')
    .example('sudo mesh-audit premigrate --managed-root /etc/mesh')
    .example('mesh-audit premigrate --snapshot examples/adopted-node/snapshot.json --history examples/adopted-node/history')
    .action(async (flags: Omit<AcquireOptions, 'out'> & { out?: string; policy?: string | string[]; format: string }) => {
      const formats = parseFormats(flags.format);
      const options = { ...flags, out: (await settingsOf(flags, ctx)).settings.out };
      const startedAt = ctx.now();
      const packs = await loadPolicies(list(options.policy));
      const acquired = await acquireSnapshot(options, ctx);
      const snapshots = acquired.snapshots.map((s) => (acquired.history.problems.length > 0 ? { ...s, problems: [...s.problems, ...acquired.history.problems] } : s));
      const report = auditSnapshots(snapshots, acquired.history.snapshots, packs.flatMap((p) => p.rules), { profile: 'premigration', now: ctx.now(), startedAt });
      const nodes: Premigration[] = snapshots.map((s, i) => {
        const evaluation = report.evaluations[i]!;
        return {
          host: s.host.hostname,
          takenAt: s.takenAt,
          complete: evaluation.complete,
          notChecked: evaluation.notifications.filter((n) => n.level === 'error').map((n) => n.message),
          inventory: buildInventory(buildSubjects(s, acquired.history.snapshots)),
        };
      });
      const result: PremigrationReport = { report, nodes };
      if (formats.includes('text')) ctx.stdout(FORMATS.text.render(result, ctx.color));
      const files = formats.filter((f) => FORMATS[f].file !== null);
      if (files.length > 0) {
        await prepareOutputDir(options.out);
        for (const f of files) note(ctx, `wrote ${await writeFileAtomic(options.out, FORMATS[f].file!, FORMATS[f].render(result))}`);
      }
      await acquired.keep();
      if (nodes.some((n) => !n.complete)) return ExitCode.Incomplete;
      return nodes.every((n) => n.inventory.ready) ? ExitCode.Ok : ExitCode.Findings;
    });
}
