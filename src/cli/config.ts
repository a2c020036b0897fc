import type { CAC } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import type { Settings } from '../config.js';
import type { CommandContext } from './context.js';
import { CONFIG_HELP, settingsOf, type SettingFlags } from './settings.js';
import { didYouMean, parseChoice } from './choices.js';

const shown = (value: unknown): string => (value === undefined ? '(unset)' : typeof value === 'string' ? value : JSON.stringify(value));

/** `mesh-audit config show`: the effective settings, and where each came from. */
export function registerConfig(cli: CAC, ctx: CommandContext): void {
  cli
    .command('config <action>', 'The effective settings and where each came from: show')
    .option('--config <file>', CONFIG_HELP)
    .option('--format <format>', 'text or json', { default: 'text' })
    .example('mesh-audit config show')
    .example('MESH_AUDIT_CONFIG=/etc/mesh-audit/nightly.yaml mesh-audit config show --format json')
    .action(async (action: string, options: SettingFlags & { format: string }) => {
      if (action !== 'show') throw new MeshAuditError(`unknown config action '${action}'${didYouMean(action, ['show'])} (config show)`);
      const format = parseChoice('--format', options.format, ['text', 'json'] as const);
      // This command's --format is how to show the settings, not the reports' formats.
      const { settings, origins, configFile } = await settingsOf({ ...options, format: undefined }, ctx);
      const keys = Object.keys(settings).sort() as (keyof Settings)[];
      if (format === 'json') {
        const out = Object.fromEntries(keys.map((k) => [k, { value: settings[k] ?? null, from: origins[k] }]));
        ctx.stdout(JSON.stringify({ configFile: configFile ?? null, settings: out }, null, 2) + '\n');
        return ExitCode.Ok;
      }
      const width = Math.max(...keys.map((k) => k.length));
      ctx.stdout(`config file: ${configFile ?? '(none)'}\n`);
      for (const k of keys) ctx.stdout(`${k.padEnd(width)}  ${shown(settings[k])}  (${origins[k]})\n`);
      return ExitCode.Ok;
    });
}
