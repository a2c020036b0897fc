import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CONFIG_HELP,
  CONFIG_SETTINGS,
  ENV_SETTINGS,
  longFlagOf,
  SETTINGS,
  type SettingCommand,
} from '../src/settings/registry.js';
import { configSchema } from '../src/config.js';
import { runCli, spawnCli } from './support/cli.js';

/*
 * The settings are one table (src/settings/registry.ts): every setting in it shows up wherever a user looks for it —
 * each command's --help and its man page section, the shell completion of that command, `config show` and the man
 * page's ENVIRONMENT — and each environment variable of the table sets its setting.
 */

const flagged = SETTINGS.filter((s) => s.flag !== undefined);
const pairs = flagged.flatMap((s) => s.commands.map((command) => ({ spec: s, command, flag: longFlagOf(s)! })));
const roff = (t: string): string => t.replace(/-/g, '\\-');
const NO_SYSTEM_CONFIG = { MESH_AUDIT_SYSTEM_CONFIG: '/nonexistent/config.yaml', MESH_AUDIT_CONFIG: '' };

test('the table gives each command its flags (a check that finds nothing proves nothing)', () => {
  assert.ok(pairs.length > 60, `${pairs.length} flags of commands`);
  assert.ok(CONFIG_SETTINGS.length > 25);
  assert.ok(ENV_SETTINGS.length >= 8);
});

test("each command's --help lists every flag the table gives it", () => {
  const helps = new Map<SettingCommand, string>();
  for (const { command, flag } of pairs) {
    if (!helps.has(command)) helps.set(command, spawnCli([command, '--help']).stdout);
    assert.ok(new RegExp(`^\\s+(-\\w, )?${flag}(?=\\s)`, 'm').test(helps.get(command)!), `${command} --help: ${flag}`);
  }
});

test('the man page lists every flag under each command that takes it, and every environment variable', async () => {
  const page = (await runCli(['man'])).stdout;
  const sections = new Map(
    page
      .split('\n.SS ')
      .slice(1)
      .map((s) => [s.split(/[ \n]/)[0]!, s] as const),
  );
  for (const { command, flag } of pairs) {
    assert.match(
      sections.get(command) ?? '',
      new RegExp(`\\n\\.B ${roff(flag).replace(/\\/g, '\\\\')}[ \\n]`),
      `man, ${command}: ${flag}`,
    );
  }
  const environment = page.split('.SH ENVIRONMENT')[1]!.split('.SH ')[0]!;
  for (const { env } of ENV_SETTINGS) assert.ok(environment.includes(env.variable), `ENVIRONMENT: ${env.variable}`);
});

test("each command's shell completion offers every flag the table gives it, and the values it accepts", async () => {
  const bash = (await runCli(['completion', 'bash'])).stdout;
  const fish = (await runCli(['completion', 'fish'])).stdout;
  for (const { spec, command, flag } of pairs) {
    const opts = new RegExp(`^    ${command}\\) opts="([^"]*)"`, 'm').exec(bash)?.[1] ?? '';
    assert.ok(opts.split(' ').includes(flag), `bash, ${command}: ${flag}`);
    assert.ok(
      fish.includes(`__fish_seen_subcommand_from ${command}' -l ${flag.slice(2)} `),
      `fish, ${command}: ${flag}`,
    );
    if (spec.choices)
      assert.ok(bash.includes(`${flag}) COMPREPLY=( $(compgen -W "${spec.choices.join(' ')}"`), `bash values: ${flag}`);
  }
});

test("the config schema (its keys' types) has exactly the table's config keys", () => {
  assert.equal(Object.keys(configSchema.properties).sort(), CONFIG_SETTINGS.map((s) => s.key).sort());
});

test('config show lists every setting the config file holds, and --config names each', () => {
  const json = JSON.parse(spawnCli(['config', 'show', '--format', 'json'], NO_SYSTEM_CONFIG).stdout) as {
    settings: Record<string, unknown>;
  };
  assert.equal(Object.keys(json.settings).sort(), CONFIG_SETTINGS.map((s) => s.key).sort());
  const text = spawnCli(['config', 'show'], NO_SYSTEM_CONFIG).stdout;
  for (const { key } of CONFIG_SETTINGS) {
    assert.match(text, new RegExp(`^${key} `, 'm'), `config show: ${key}`);
    assert.ok(new RegExp(`\\b${key}\\b`).test(CONFIG_HELP), `--config's help: ${key}`);
  }
});

/** A value each environment variable of the table may take (a new variable needs one here). */
const ENV_SAMPLES: Record<string, string> = {
  MESH_AUDIT_LEDGER: '/srv/ledger.json',
  MESH_AUDIT_MANAGED_ROOTS: '/etc/mesh:/srv/mesh',
  MESH_AUDIT_HOSTNAME: 'node-7',
  MESH_AUDIT_OUT: '/srv/reports',
  MESH_AUDIT_FAIL_ON: 'warning',
  MESH_AUDIT_INCLUDE: 'name:web-*',
  MESH_AUDIT_EXCLUDE: 'name:ci-*',
  MESH_AUDIT_SKIP: 'MA2001,HD2001',
  DOCKER_HOST: 'tcp://192.0.2.7:2375',
};

test('each environment variable of the table sets its setting, as config show tells', () => {
  for (const { env } of ENV_SETTINGS)
    assert.ok(ENV_SAMPLES[env.variable] !== undefined, `a sample for ${env.variable}`);
  const shown = JSON.parse(
    spawnCli(['config', 'show', '--format', 'json'], { ...NO_SYSTEM_CONFIG, ...ENV_SAMPLES }).stdout,
  ) as { settings: Record<string, { value: unknown; from: string }> };
  for (const { key, env } of ENV_SETTINGS) {
    assert.is(shown.settings[key]?.from, `env ${env.variable}`, key);
    assert.equal(shown.settings[key]?.value, env.read(ENV_SAMPLES[env.variable]!), key);
  }
});

test.run();
