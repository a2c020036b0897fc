import type { CAC, Command } from 'cac';
import type { ScanSettings } from '../config.js';
import { CONFIG_HELP, prepareAudit, settingsOf, type SettingFlags } from './settings.js';
import { MeshAuditError } from '../errors.js';
import { resolveHostname, takeSnapshot } from '../scan.js';
import { withMemory } from '../facts/history.js';
import { loadHistory } from '../snapshot/history.js';
import { keepSnapshot, readOwnHistory } from '../snapshot/history-store.js';
import { loadSnapshot } from '../snapshot/load.js';
import type { Problem, Snapshot } from '../snapshot/types.js';
import { prepareOutputDir, writeFileAtomic } from '../write/atomic.js';
import { DEFAULT_MAX_FILES } from '../limits.js';
import { existsSync } from 'node:fs';
import { dirname, basename, join, resolve } from 'node:path';
import { addAuditOptions, auditAndReport, parseCount, parseLockTimeout, usesOutputFolder, type AuditOptions } from './evaluate.js';
import { parseFormats, withOutputFolder, type OutputFolder } from './output.js';
import { WriteFailure } from '../write/atomic.js';
import { detail, list, note, type CommandContext } from './context.js';
import { loadPolicies } from '../policy/load.js';
import { progressLine } from './progress.js';

type CollectFlags = SettingFlags;

export function addCollectOptions(command: Command): Command {
  return command
    .option('--docker-host <url>', 'Docker engine: unix:///path, tcp://host:port, ssh://user@host (default: $DOCKER_HOST, else the local socket)')
    .option('--ledger <path>', 'The host agent\'s ledger (default: /var/lib/mesh-host/ledger.json)')
    .option('--root <dir>', 'Where the host is mounted read-only when the scanner runs in a container (paths are reported as host paths)')
    .option('--managed-root <dir>', 'A folder the mesh writes into; every file under it is checked; repeatable')
    .option('--hostname <name>', 'Name of the host in reports (default: the host\'s own)')
    .option('--max-files <n>', `At most this many files recorded (managed roots included); past it the scan is incomplete (default ${DEFAULT_MAX_FILES})`)
    .option('--config <file>', CONFIG_HELP);
}

/** The scan settings of a run, and each one's origin; --verbose tells where the config came from. */
async function scanSettingsOf(flags: CollectFlags, ctx: CommandContext): Promise<ScanSettings> {
  const resolved = await settingsOf(flags, ctx);
  if (resolved.configFile !== undefined) detail(ctx, `config: ${resolved.configFile}`);
  return resolved.settings;
}

/** Each source that could not be read: one clear line on stderr as well as in the reports. */
function reportProblems(snapshot: Pick<Snapshot, 'problems'>, ctx: CommandContext): void {
  for (const p of snapshot.problems) ctx.stderr(`mesh-audit: ${p.message}\n`);
}

/** Reads the host with a progress line (long scans on a terminal) and, with --verbose, what was read and when. */
async function readHost(settings: ScanSettings, history: Snapshot[], ctx: CommandContext): Promise<Snapshot> {
  const progress = progressLine(ctx);
  try {
    const snapshot = await takeSnapshot(settings, history, { now: () => ctx.now(), progress: (m) => progress.step(m) });
    progress.done(`read ${snapshot.containers.length} containers, ${snapshot.files.length} files, ${snapshot.ledger.entries.length} ledger entries; ${snapshot.problems.length} source${snapshot.problems.length === 1 ? '' : 's'} not read`);
    return snapshot;
  } catch (err) {
    progress.done();
    throw err;
  }
}

export interface Acquired {
  snapshots: Snapshot[];
  history: { snapshots: Snapshot[]; problems: Problem[] };
  keepCount: number;
  /**
   * Keeps a live snapshot as history under --out (nothing for a saved one). A snapshot that could not
   * be kept (a full disk) is a problem of the run, returned to be added to what it reports.
   */
  keep(): Promise<Problem[]>;
}

export type AcquireOptions = CollectFlags & { snapshot?: string; history?: string; out: string };

/**
 * The snapshot a command works on: a saved one (`--snapshot`), or the live host read now, with the
 * history that tells former targets — an explicit folder, else the scanner's own under --out.
 */
export async function acquireSnapshot(options: AcquireOptions, ctx: CommandContext, folder?: OutputFolder): Promise<Acquired> {
  const keepCount = parseCount('--keep', options.keep, 30);
  if (options.snapshot !== undefined) {
    // A saved snapshot's history travels beside it, in `history/`, unless another folder is named.
    const beside = join(dirname(options.snapshot), 'history');
    const historyDir = options.history ?? (existsSync(beside) ? beside : undefined);
    if (options.history === undefined && historyDir !== undefined) note(ctx, `using the history beside the snapshot: ${historyDir}`);
    const history = historyDir !== undefined ? await loadHistory(historyDir) : { snapshots: [], problems: [] };
    return { snapshots: [await loadSnapshot(options.snapshot)], history, keepCount, keep: () => Promise.resolve([]) };
  }
  const settings = await scanSettingsOf(options, ctx);
  const hostname = await resolveHostname(settings);
  // The scanner's own history lives in the output folder this run holds.
  const ownHistory = options.history === undefined && folder !== undefined;
  const history =
    options.history !== undefined
      ? await loadHistory(options.history)
      : ownHistory
        ? await readOwnHistory(folder.dir, hostname)
        : { snapshots: [], problems: [] };
  // The memory of former targets travels in the snapshot itself, so pruning history never loses it.
  const snapshot = withMemory(await readHost({ ...settings, hostname }, history.snapshots, ctx), history.snapshots);
  reportProblems(snapshot, ctx);
  reportProblems({ problems: history.problems }, ctx);
  return {
    snapshots: [snapshot],
    history,
    keepCount: settings.keep,
    keep: async () => {
      if (!ownHistory) return [];
      try {
        const kept = await keepSnapshot(folder.dir, folder.sequence, snapshot, settings.keep);
        note(ctx, `kept snapshot ${kept}`);
        return [];
      } catch (err) {
        if (!(err instanceof WriteFailure) && !(err instanceof MeshAuditError)) throw err;
        const message = `history snapshot not kept: ${err.message}; the next scan will not know this one's targets`;
        ctx.stderr(`mesh-audit: ${message}\n`);
        return [{ source: 'history', subject: err instanceof WriteFailure ? err.path : folder.dir, message }];
      }
    },
  };
}

export function registerScan(cli: CAC, ctx: CommandContext): void {
  addAuditOptions(addCollectOptions(
    cli
      .command('scan', 'Snapshot this host (read-only) and evaluate it; keeps the snapshot as history')
      .option('--snapshot <file>', 'Evaluate a saved snapshot instead of reading the host'),
  )
    .option('--history <dir>', 'Folder of earlier snapshots (default: the history kept under --out)')
)
    .example('sudo mesh-audit scan --managed-root /etc/mesh --out /var/lib/mesh-audit')
    .example('mesh-audit scan --snapshot examples/demo/snapshot.json')
    .action(async (flags: CollectFlags & AuditOptions & { snapshot?: string }) => {
      const startedAt = ctx.now();
      const { audit: options } = await prepareAudit(flags, ctx);
      parseFormats(options.format);
      const lockTimeout = parseLockTimeout(options.lockTimeout);
      // A policy that does not load is a usage error before the host is read or the folder touched.
      await loadPolicies(list(options.policy));
      const scanInto = async (folder?: OutputFolder): Promise<number> => {
        const acquired = await acquireSnapshot(options, ctx, folder);
        // The snapshot is kept before the reports are written, so that a failure to keep it is in them.
        const notKept = await acquired.keep();
        const snapshots = acquired.snapshots.map((s) => (notKept.length > 0 ? { ...s, problems: [...s.problems, ...notKept] } : s));
        return auditAndReport({ snapshots }, { ...options, keep: acquired.keepCount }, ctx, acquired.history, startedAt, folder);
      };
      // One run at a time in an output folder: held from reading its history to publishing the reports.
      const live = options.snapshot === undefined && options.history === undefined;
      return usesOutputFolder(options, live) ? withOutputFolder(options.out, lockTimeout, scanInto) : scanInto();
    });

  addCollectOptions(cli.command('snapshot', 'Snapshot this host (read-only) into a file, to evaluate later or elsewhere'))
    .option('-o, --output <file>', 'Where to write the snapshot (its folder must exist and be safe)')
    .option('--history <dir>', 'Earlier snapshots: a scan\'s --out folder or its history/<host> folder (default: the history/ beside the output file, when there is one)')
    .example('sudo mesh-audit snapshot -o /var/lib/mesh-audit/host.json')
    .example('sudo mesh-audit snapshot -o /tmp/host.json --history /var/lib/mesh-audit')
    .action(async (options: CollectFlags & { output?: string; history?: string }) => {
      if (options.output === undefined) throw new MeshAuditError('snapshot needs -o FILE (where to write it)');
      const settings = await scanSettingsOf(options, ctx);
      const hostname = await resolveHostname(settings);
      // The same memory as `scan`: files at former targets are read, and the snapshot carries the table.
      const beside = join(dirname(resolve(String(options.output))), 'history');
      const historyDir = options.history ?? (existsSync(beside) ? beside : undefined);
      if (options.history === undefined && historyDir !== undefined) note(ctx, `using the history beside the output: ${historyDir}`);
      const history = historyDir !== undefined ? await loadHistory(historyDir) : { snapshots: [], problems: [] };
      const taken = await readHost({ ...settings, hostname }, history.snapshots, ctx);
      const snapshot = withMemory(history.problems.length > 0 ? { ...taken, problems: [...taken.problems, ...history.problems] } : taken, history.snapshots);
      reportProblems(snapshot, ctx);
      const target = resolve(String(options.output));
      await prepareOutputDir(dirname(target));
      const written = await writeFileAtomic(dirname(target), basename(target), JSON.stringify(snapshot, null, 2) + '\n');
      note(ctx, `wrote ${written}`);
      return snapshot.problems.length > 0 ? 3 : 0;
    });
}
