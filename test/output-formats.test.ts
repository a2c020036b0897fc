import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OUTPUT_FORMATS, formatNames } from '../src/report/formats.js';
import { REPORT_FILES } from '../src/write/runs.js';
import { configSchema } from '../src/config.js';
import { validatorFor } from '../src/input/validate.js';
import { example, runCli, tempDir } from './support/cli.js';

/*
 * The output formats are one table (src/report/formats.ts): every format in it is accepted by its commands'
 * --format, written under its file name (or printed, for text), and accepted by the config file's `format`; the
 * run folder's names (src/write/runs.ts) are the table's.
 */

const reportsIn = (dir: string): string[] => readdirSync(dir).filter((n) => n !== 'runs' && !n.startsWith('.'));

for (const format of OUTPUT_FORMATS.filter((f) => f.family === 'audit')) {
  test(`evaluate --format ${format.name}: accepted and ${format.file ?? 'printed on stdout'}`, async () => {
    const out = tempDir();
    const r = await runCli(['evaluate', example('045', 'snapshot.json'), '--format', format.name, '--out', out]);
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    const written = reportsIn(out).filter((n) => n !== 'latest');
    if (format.file === null) {
      assert.equal(written, []);
      assert.ok(r.stdout.length > 0);
    } else {
      assert.equal(written, [format.file]);
      assert.is(r.stdout, '');
      assert.ok(readFileSync(join(out, format.file), 'utf8').length > 0);
    }
  });
}

for (const format of OUTPUT_FORMATS.filter((f) => f.family === 'premigrate')) {
  test(`premigrate --format ${format.name}: accepted and ${format.file ?? 'printed on stdout'}`, async () => {
    const out = tempDir();
    const snapshot = example('adopted-node', 'snapshot.json');
    const history = example('adopted-node', 'history');
    const r = await runCli([
      'premigrate',
      '--snapshot',
      snapshot,
      '--history',
      history,
      '--format',
      format.name,
      '--out',
      out,
    ]);
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    if (format.file === null) {
      assert.equal(reportsIn(out), []);
      assert.ok(r.stdout.length > 0);
    } else {
      assert.equal(reportsIn(out), [format.file]);
      assert.is(r.stdout, '');
    }
  });
}

// Every format of premigrate is one of scan and evaluate too (md since issue 47): evaluate's refusal is of a name
// neither has.
test("a format of scan and evaluate only is refused by premigrate's --format, with the known names", async () => {
  const plan = await runCli(['evaluate', example('045', 'snapshot.json'), '--format', 'plan', '--out', '-']);
  assert.is(plan.code, 2);
  assert.match(plan.stderr, `(known: ${formatNames('audit').join(', ')})`);
  const prom = await runCli(['premigrate', '--snapshot', example('adopted-node', 'snapshot.json'), '--format', 'prom']);
  assert.is(prom.code, 2);
  assert.match(prom.stderr, `(known: ${formatNames('premigrate').join(', ')})`);
});

test("the config file's format takes every format of scan and evaluate, and nothing else", () => {
  const validate = validatorFor('config', configSchema);
  for (const name of formatNames('audit')) assert.ok(validate({ format: `text, ${name}` }), name);
  assert.ok(validate({ format: formatNames('audit').join(',') }));
  assert.ok(validate({ format: 'md' }), 'md is a format of scan and evaluate too');
  assert.not.ok(validate({ format: 'xml' }));
});

test("the run folder's report names (src/write/runs.ts, from the table) are the documented ones", () => {
  // docs/outputs.md names these files; scripts and alerting read them by name.
  assert.equal(
    { ...REPORT_FILES },
    {
      json: 'mesh-audit.json',
      jsonl: 'mesh-audit.jsonl',
      junit: 'mesh-audit.junit.xml',
      md: 'mesh-audit.md',
      prom: 'mesh-audit.prom',
      sarif: 'mesh-audit.sarif',
    },
  );
});

test.run();
