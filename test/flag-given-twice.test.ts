import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { longFlagOf, SETTINGS } from '../src/settings/registry.js';
import { example, NO_SYSTEM_CONFIG, optionNameOf, readCommandLine, runCli, spawnCli, tempDir } from './support/cli.js';

/*
 * A flag given twice (issue 47): one rule for every flag, from the settings table (src/settings/registry.ts): a
 * repeatable setting keeps every value, any other flag — single-valued settings, switches, the flags a command
 * declares itself — takes the last, as git and docker do; a value is never split on its commas.
 */

const optionsOf = async (args: string[]) => (await readCommandLine(args)).options;

const flagged = SETTINGS.filter((s) => s.flag !== undefined);
const byArity = (arity: string) =>
  flagged.filter((s) => s.arity === arity).flatMap((s) => s.commands.map((command) => ({ spec: s, command })));

test('every single-valued setting given twice takes the last value, whole, on every command (the table)', async () => {
  const singles = byArity('single');
  assert.ok(singles.length > 40, `${singles.length} single-valued flags of commands`);
  for (const { spec, command } of singles) {
    const flag = longFlagOf(spec)!;
    const options = await optionsOf([command, flag, 'first,1', flag, 'last,2']);
    assert.is(options[optionNameOf(flag)], 'last,2', `${command} ${flag}`);
  }
});

test('every switch given twice is on, and every repeatable setting keeps each value whole (the table)', async () => {
  for (const { spec, command } of byArity('switch')) {
    const flag = longFlagOf(spec)!;
    const options = await optionsOf([command, flag, flag]);
    assert.is(options[optionNameOf(flag)], !flag.startsWith('--no-'), `${command} ${flag}`);
  }
  const repeatables = byArity('repeatable');
  assert.ok(repeatables.length > 10);
  for (const { spec, command } of repeatables) {
    const flag = longFlagOf(spec)!;
    assert.equal(
      (await optionsOf([command, flag, 'a,1', flag, 'b']))[optionNameOf(flag)],
      ['a,1', 'b'],
      `${command} ${flag}`,
    );
    assert.equal((await optionsOf([command, flag, '7']))[optionNameOf(flag)], ['7'], `${command} ${flag} once`);
  }
});

test("a command's own flags given twice take the last value too (--snapshot, --history, --jobs, --plan, -o, --socket)", async () => {
  const cases: [string[], string, unknown][] = [
    [['scan', '--snapshot', 'a.json', '--snapshot', 'b.json'], 'snapshot', 'b.json'],
    [['scan', '--history', 'h1', '--history', 'h2'], 'history', 'h2'],
    [['evaluate', '--jobs', '2', '--jobs', '3'], 'jobs', '3'],
    [['premigrate', '--plan', 'a.json', '--plan', 'b.json'], 'plan', 'b.json'],
    [['snapshot', '-o', 'a.json', '--output', 'b.json'], 'output', 'b.json'],
    [['snapshot', '--output', 'a.json', '-o', 'b.json'], 'output', 'b.json'],
    [['serve', '--socket', '/run/a.sock', '--socket', '/run/b.sock'], 'socket', '/run/b.sock'],
    [['status', '--listen', '127.0.0.1:1', '--listen', '127.0.0.1:2'], 'listen', '127.0.0.1:2'],
    [['diff', '--format', 'json', '--format', 'text'], 'format', 'text'],
    [['scan', '-q', '--quiet'], 'quiet', true],
  ];
  for (const [args, name, expected] of cases) assert.is((await optionsOf(args))[name], expected, args.join(' '));
});

test('config show: the last --hostname, --out, --keep, --ledger and --fail-on; a comma stays in the value', () => {
  const r = spawnCli(
    [
      'config',
      'show',
      '--format',
      'json',
      '--hostname',
      'a',
      '--hostname',
      'b',
      '--out',
      'x',
      '--out',
      'reports,2026',
      '--keep',
      '3',
      '--keep',
      '4',
      '--ledger',
      '/srv/a.json',
      '--ledger',
      '/srv/b,c.json',
      '--fail-on',
      'error',
      '--fail-on',
      'none',
      '--include',
      'name:a',
      '--include',
      'path:/srv/a,b',
    ],
    NO_SYSTEM_CONFIG,
  );
  assert.is(r.code, 0, r.stderr);
  const { settings } = JSON.parse(r.stdout) as { settings: Record<string, { value: unknown; from: string }> };
  assert.is(settings.hostname!.value, 'b');
  assert.is(settings.out!.value, 'reports,2026');
  assert.is(settings.keep!.value, 4);
  assert.is(settings.ledger!.value, '/srv/b,c.json');
  assert.is(settings.failOn!.value, 'none');
  assert.equal(settings.include!.value, ['name:a', 'path:/srv/a,b']);
});

test('--out a --out b writes the reports into b, and no folder a,b', async () => {
  const dir = tempDir();
  const [a, b] = [join(dir, 'a'), join(dir, 'b')];
  const r = await runCli(['evaluate', example('clean', 'snapshot.json'), '--format', 'json', '--out', a, '--out', b]);
  assert.is(r.code, 0, r.stderr);
  assert.ok(existsSync(join(b, 'mesh-audit.json')), 'the reports are in b');
  assert.not.ok(existsSync(a), 'nothing in a');
  assert.not.ok(existsSync(`${a},${b}`), 'no folder a,b');
});

test('--fail-on error --fail-on none acts as none: findings, exit 0', async () => {
  const demo = example('demo', 'snapshot.json');
  const failing = await runCli(['evaluate', demo, '--format', 'text', '--fail-on', 'none', '--fail-on', 'error']);
  assert.is(failing.code, 1, failing.stderr);
  const r = await runCli(['evaluate', demo, '--format', 'text', '--fail-on', 'error', '--fail-on', 'none']);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /\d+ findings/);
});

test('premigrate --out x --format md --out - prints the markdown and writes nothing into x', async () => {
  const dir = tempDir();
  const r = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--history',
    example('adopted-node', 'history'),
    '--out',
    join(dir, 'x'),
    '--format',
    'md',
    '--out',
    '-',
  ]);
  assert.ok(r.code === 0 || r.code === 1, r.stderr);
  assert.match(r.stdout, /^## Pre-migration check: /m);
  assert.not.ok(existsSync(join(dir, 'x')), 'nothing in x');
  assert.not.ok(existsSync(join(dir, 'x,-')), 'no folder x,-');
});

test.run();
