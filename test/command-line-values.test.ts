import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { longFlagOf, SETTINGS } from '../src/settings/registry.js';
import { example, NO_SYSTEM_CONFIG, optionNameOf, readCommandLine, runCli, spawnCli } from './support/cli.js';

/*
 * What cac's parser (mri) gets wrong and src/cli/cli-spec.ts corrects: a hyphenated switch written before a word took
 * the word for its value (`evaluate --fail-on-new snap.json` lost the snapshot), and a value that looks like a number
 * was made one (`--hostname 007` was 7). Read from the settings table, so a new switch or setting is covered.
 */

const switches = SETTINGS.filter((s) => s.arity === 'switch' && s.flag !== undefined && !s.flag.startsWith('--no-'));

test('every hyphenated switch of evaluate, written before the snapshot, is on and leaves the snapshot alone', async () => {
  const hyphenated = switches.filter((s) => s.commands.includes('evaluate') && longFlagOf(s)!.slice(2).includes('-'));
  assert.ok(hyphenated.length >= 3, hyphenated.map((s) => s.flag).join(' '));
  for (const spec of hyphenated) {
    const flag = longFlagOf(spec)!;
    const r = await readCommandLine(['evaluate', flag, 'snap.json']);
    assert.is(r.options[optionNameOf(flag)], true, flag);
    assert.equal(r.args, ['snap.json'], `${flag} keeps the snapshot`);
  }
});

test('a switch a command declares itself too: diff --exit-code A B', async () => {
  const diff = await readCommandLine(['diff', '--exit-code', 'a.json', 'b.json']);
  assert.is(diff.options.exitCode, true);
  assert.equal(diff.args, ['a.json', 'b.json']);
});

test('evaluate --fail-on-new SNAPSHOT runs (it used to say "missing required args")', async () => {
  const r = await runCli([
    'evaluate',
    '--fail-on-new',
    example('045', 'snapshot.json'),
    '--format',
    'json',
    '--out',
    '-',
  ]);
  assert.not.match(r.stderr, /missing required args/);
  // No baseline: every finding is new, and 045's are errors.
  assert.is(r.code, 1, r.stderr);
});

test('a value that looks like a number is kept as written, for every single-valued setting (the table)', async () => {
  const singles = SETTINGS.filter((s) => s.arity === 'single' && s.flag !== undefined);
  for (const spec of singles) {
    const flag = longFlagOf(spec)!;
    const command = spec.commands[0]!;
    for (const written of ['007', '1e3', '0x10']) {
      const r = await readCommandLine([command, flag, written]);
      assert.is(r.options[optionNameOf(flag)], written, `${command} ${flag} ${written}`);
      assert.is(
        (await readCommandLine([command, `${flag}=${written}`])).options[optionNameOf(flag)],
        written,
        `${flag}=${written}`,
      );
    }
  }
  const repeatable = SETTINGS.find((s) => s.arity === 'repeatable' && s.flag !== undefined)!;
  const flag = longFlagOf(repeatable)!;
  const r = await readCommandLine([repeatable.commands[0]!, flag, '007', flag, '1.50']);
  assert.equal(r.options[optionNameOf(flag)], ['007', '1.50'], flag);
});

test('config show --hostname 007 shows 007', () => {
  const r = spawnCli(['config', 'show', '--format', 'json', '--hostname', '007'], NO_SYSTEM_CONFIG);
  assert.is(r.code, 0, r.stderr);
  const { settings } = JSON.parse(r.stdout) as { settings: Record<string, { value: unknown }> };
  assert.is(settings.hostname!.value, '007');
});

test.run();
