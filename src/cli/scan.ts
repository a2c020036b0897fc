import type { CAC } from 'cac';
import { historyFolderFor, snapshotOfHost } from '../acquire.js';
import { ExitCode, MeshAuditError } from '../errors.js';
import { withProblems } from '../snapshot/problems.js';
import { prepareOutputDir, writeFileAtomic } from '../write/atomic.js';
import { basename, dirname, resolve } from 'node:path';
import { acquireFor, acquireIo, addCollectOptions, type CollectFlags } from './acquire.js';
import { detail, note, type CommandContext } from './context.js';
import { addAuditOptions, auditAndReport, prepareAuditRun, usesOutputFolder, type AuditOptions } from './evaluate.js';
import { withOutputFolder, type OutputFolder } from '../write/runs.js';
import { addScopeOptions, settingsAndScopeOf } from './settings.js';
import { readingScopeOf } from '../scope.js';

export function registerScan(cli: CAC, ctx: CommandContext): void {
  addAuditOptions(
    addCollectOptions(
      cli
        .command('scan', 'Snapshot this host (read-only) and evaluate it; keeps the snapshot as history')
        .option('--snapshot <file>', 'Evaluate a saved snapshot instead of reading the host'),
    ).option('--history <dir>', 'Folder of earlier snapshots (default: the history kept under --out)'),
  )
    .example('sudo mesh-audit scan --managed-root /etc/mesh --out /var/lib/mesh-audit')
    .example('mesh-audit scan --snapshot examples/demo/snapshot.json')
    .action(async (flags: CollectFlags & AuditOptions & { snapshot?: string }) => {
      const startedAt = ctx.now();
      // Every option, setting, policy, waiver and baseline is checked before the host is read or the folder touched.
      const run = await prepareAuditRun(flags, ctx);
      const { options } = run;
      if (run.resolved.configFile !== undefined) detail(ctx, `config: ${run.resolved.configFile}`);
      const scanInto = async (folder?: OutputFolder): Promise<number> => {
        const acquired = await acquireFor(
          { ...flags, out: run.out },
          run.resolved.settings,
          ctx,
          folder,
          readingScopeOf(run.scope, startedAt),
        );
        // The snapshot is kept before the reports are written, so that a failure to keep it is in them.
        const notKept = await acquired.keep();
        const snapshots = acquired.snapshots.map((s) => withProblems(s, notKept));
        return auditAndReport(
          { snapshots },
          { ...run, keep: acquired.keepCount },
          ctx,
          acquired.history,
          startedAt,
          folder,
        );
      };
      // One run at a time in an output folder: held from reading its history to publishing the reports.
      const live = flags.snapshot === undefined && options.history === undefined;
      return usesOutputFolder(options, live) ? withOutputFolder(run.out, run.lockTimeout, scanInto) : scanInto();
    });

  addScopeOptions(
    addCollectOptions(
      cli.command('snapshot', 'Snapshot this host (read-only) into a file, to evaluate later or elsewhere'),
    ),
  )
    .option('-o, --output <file>', 'Where to write the snapshot (its folder must exist and be safe)')
    .option(
      '--history <dir>',
      "Earlier snapshots: a scan's --out folder or its history/<host> folder (default: the history/ beside the " +
        'output file, when there is one)',
    )
    .example('sudo mesh-audit snapshot -o /var/lib/mesh-audit/host.json')
    .example('sudo mesh-audit snapshot -o /tmp/host.json --history /var/lib/mesh-audit')
    .action(async (options: CollectFlags & { output?: string; history?: string }) => {
      if (options.output === undefined) throw new MeshAuditError('snapshot needs -o FILE (where to write it)');
      const { resolved, scope } = await settingsAndScopeOf(options, ctx);
      if (resolved.configFile !== undefined) detail(ctx, `config: ${resolved.configFile}`);
      // The same memory as `scan`: files at former targets are read, and the snapshot carries the table.
      const io = acquireIo(ctx);
      const snapshot = await snapshotOfHost(
        resolved.settings,
        historyFolderFor(resolve(String(options.output)), 'the output', options.history, io),
        io,
        readingScopeOf(scope, ctx.now()),
      );
      const target = resolve(String(options.output));
      await prepareOutputDir(dirname(target));
      const written = await writeFileAtomic(
        dirname(target),
        basename(target),
        JSON.stringify(snapshot, null, 2) + '\n',
      );
      note(ctx, `wrote ${written}`);
      return snapshot.problems.length > 0 ? ExitCode.Incomplete : ExitCode.Ok;
    });
}
