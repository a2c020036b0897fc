import type { CAC } from 'cac';
import { existsSync } from 'node:fs';
import { ExitCode, MeshAuditError } from '../errors.js';
import type { Settings } from '../config.js';
import type { CommandContext } from './context.js';
import { addScopeOptions, addSettingOptions, IGNORE_FILE, settingsAndScopeOf, type SettingFlags } from './settings.js';
import { didYouMean, parseChoice } from './choices.js';
import { addCollectOptions } from './acquire.js';
import { FAIL_ON_VALUES } from '../settings/outcome.js';
import { shownAlertmanagerSettings } from '../alert/target.js';
import { CONFIG_SETTINGS } from '../settings/registry.js';

const shown = (value: unknown): string =>
  value === undefined ? '(unset)' : typeof value === 'string' ? value : JSON.stringify(value);

/**
 * `mesh-audit config show`: the effective settings, and where each came from. It takes the settings'
 * flags as `scan` does and checks them as a run would (exit 2 on a bad one), so the merged result shown
 * is what that command line would run with.
 */
export function registerConfig(cli: CAC, ctx: CommandContext): void {
  addSettingOptions(
    addScopeOptions(
      addCollectOptions(
        cli.command(
          'config <action>',
          'The effective settings and where each came from, with the flags of a scan applied: show',
        ),
      ),
    ),
    ['out', 'failOn', 'keep', 'skip'],
  )
    // How to show the settings, not the reports' formats (so not the `format` setting).
    .option('--format <format>', 'text or json', { default: 'text' })
    .example('mesh-audit config show')
    .example('mesh-audit config show --exclude name:ci-* --format json')
    .example('MESH_AUDIT_CONFIG=/etc/mesh-audit/nightly.yaml mesh-audit config show --format json')
    .action(async (action: string, options: SettingFlags & { format: string }) => {
      if (action !== 'show')
        throw new MeshAuditError(`unknown config action '${action}'${didYouMean(action, ['show'])} (config show)`);
      const format = parseChoice('--format', options.format, ['text', 'json'] as const);
      // This command's --format is how to show the settings, not the reports' formats.
      const { resolved, scope } = await settingsAndScopeOf({ ...options, format: undefined }, ctx);
      parseChoice('--fail-on', resolved.settings.failOn, FAIL_ON_VALUES);
      const { origins, configFile } = resolved;
      // A credential in the config file is shown as set, never printed.
      const settings = {
        ...resolved.settings,
        alertmanager: shownAlertmanagerSettings(resolved.settings.alertmanager),
      };
      const ignoreFile = options.ignoreFile ?? (existsSync(IGNORE_FILE) ? IGNORE_FILE : undefined);
      const fromIgnoreFile = scope.ignore.filter(
        (e) => ignoreFile !== undefined && e.source.startsWith(`${ignoreFile}:`),
      ).length;
      // Every setting the config file can hold (src/settings/registry.ts), by name.
      const keys = CONFIG_SETTINGS.map((s) => s.key as keyof Settings).sort();
      if (format === 'json') {
        const out = Object.fromEntries(keys.map((k) => [k, { value: settings[k] ?? null, from: origins[k] }]));
        ctx.stdout(
          JSON.stringify(
            {
              configFile: configFile ?? null,
              ignoreFile: ignoreFile ? { path: ignoreFile, entries: fromIgnoreFile } : null,
              settings: out,
            },
            null,
            2,
          ) + '\n',
        );
        return ExitCode.Ok;
      }
      const width = Math.max(...keys.map((k) => k.length));
      ctx.stdout(`config file: ${configFile ?? '(none)'}\n`);
      if (ignoreFile !== undefined)
        ctx.stdout(`ignore file: ${ignoreFile} (${fromIgnoreFile} entr${fromIgnoreFile === 1 ? 'y' : 'ies'})\n`);
      for (const k of keys) ctx.stdout(`${k.padEnd(width)}  ${shown(settings[k])}  (${origins[k]})\n`);
      return ExitCode.Ok;
    });
}
