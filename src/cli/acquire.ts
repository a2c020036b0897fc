import type { Command } from 'cac';
import { acquireSnapshot, type Acquired, type AcquireIo } from '../acquire.js';
import type { ScanSettings } from '../config.js';
import { parseCount } from './choices.js';
import { detail, note, type CommandContext } from './context.js';
import type { OutputFolder } from '../write/runs.js';
import { progressLine } from './progress.js';
import { addSettingOptions, settingsOf, type SettingFlags } from './settings.js';
import type { ScopeJudge } from '../scope.js';
import { shownMessage } from '../shown.js';

/* The command-line side of acquiring a snapshot (src/acquire.ts): the options that say how the host is read,
   and where acquisition speaks. */

export type CollectFlags = SettingFlags;

/** The options of every command that reads the live host (`scan`, `snapshot`, `premigrate`). */
export const addCollectOptions = (command: Command): Command =>
  addSettingOptions(command, ['dockerHost', 'ledger', 'root', 'managedRoots', 'hostname', 'maxFiles', 'config']);

/** The scan settings of a run; --verbose tells where the config came from. */
export async function scanSettingsOf(flags: CollectFlags, ctx: CommandContext): Promise<ScanSettings> {
  const resolved = await settingsOf(flags, ctx);
  if (resolved.configFile !== undefined) detail(ctx, `config: ${resolved.configFile}`);
  return resolved.settings;
}

/**
 * Acquisition speaks on stderr: notes (not under --quiet), each source not read on its own line, a progress line on a
 * terminal.
 */
export function acquireIo(ctx: CommandContext): AcquireIo {
  return {
    now: () => ctx.now(),
    // What acquisition says names host things (paths, names, history folders): shown, never raw (src/shown.ts).
    note: (text) => note(ctx, shownMessage(text)),
    detail: (text) => detail(ctx, shownMessage(text)),
    problem: (message) => ctx.stderr(`mesh-audit: ${shownMessage(message)}\n`),
    startProgress: () => progressLine(ctx),
  };
}

export type AcquireOptions = CollectFlags & { snapshot?: string; history?: string; out: string };

/**
 * The snapshot a command works on (`--snapshot`, or the live host), with its history. The settings
 * were resolved (and checked) before: nothing of the host is read before every option is known good.
 * What is out of `scope` is not read.
 */
export function acquireFor(
  options: AcquireOptions,
  settings: ScanSettings,
  ctx: CommandContext,
  folder?: OutputFolder,
  scope?: ScopeJudge,
): Promise<Acquired> {
  const request = {
    keep: parseCount('--keep', options.keep, 30),
    settings: () => Promise.resolve(settings),
    ...(scope ? { scope } : {}),
  };
  return acquireSnapshot(
    {
      ...request,
      ...(options.snapshot !== undefined ? { snapshot: options.snapshot } : {}),
      ...(options.history !== undefined ? { history: options.history } : {}),
    },
    acquireIo(ctx),
    folder,
  );
}
