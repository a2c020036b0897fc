import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, runCli } from './support/cli.js';

/* Refused values name what was meant (issue 47): a long name of a short value, a rule of another profile. */

test("premigrate --format markdown is refused with `md` suggested; scan's --fail-on keeps its own", async () => {
  const r = await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--format',
    'markdown',
  ]);
  assert.is(r.code, 2);
  assert.match(r.stderr, "unknown format 'markdown' (did you mean 'md'?)");
  const fail = await runCli(['evaluate', example('clean', 'snapshot.json'), '--fail-on', 'eror']);
  assert.match(fail.stderr, "(did you mean 'error'?)");
});

test('rules show HD5013 without --profile hardening names the pack and the profile to add', async () => {
  const r = await runCli(['rules', 'show', 'HD5013']);
  assert.is(r.code, 2);
  assert.match(
    r.stderr,
    'HD5013 is in the docker-hardening pack (profiles: hardening), not in --profile all: add --profile hardening',
  );
  const shown = await runCli(['rules', 'show', 'HD5013', '--profile', 'hardening']);
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^HD5013 /);
  assert.match((await runCli(['rules', 'show', 'MA9999'])).stderr, "no rule 'MA9999'");
});

test.run();
