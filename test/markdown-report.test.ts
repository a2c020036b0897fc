import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, spawnCli, tempDir } from './support/cli.js';

/*
 * `scan --format md` / `evaluate --format md` (src/report/markdown.ts), through the real bin/mesh-audit.js: the header
 * says the host, the time, whether the run is complete and what was skipped; a table of counts; the findings grouped
 * by severity with rule, subject and message; how to fix each rule. An incomplete run says INCOMPLETE and lists what
 * was not checked. Hostile names: test/hostile-names.test.ts.
 */

const NO_CONFIG = { MESH_AUDIT_SYSTEM_CONFIG: '/nonexistent/config.yaml', MESH_AUDIT_CONFIG: '', MESH_AUDIT_SKIP: '' };
const DEMO = example('demo', 'snapshot.json');
const md = (args: string[]) => spawnCli(['evaluate', ...args, '--format', 'md', '--out', '-'], NO_CONFIG);

test('the demo host as Markdown: header, counts, findings by severity, how to fix', () => {
  const r = md([DEMO]);
  assert.is(r.code, 1, r.stderr);
  const lines = r.stdout.split('\n');
  assert.is(lines[0], '# mesh-audit report: edge-7');
  assert.match(r.stdout, /^\*\*Complete\*\*/m);
  assert.not.match(r.stdout, /INCOMPLETE|Skipped by configuration/);
  assert.match(r.stdout, /^Generated \d{4}-\d\d-\d\dT[\d:.]+Z by mesh-audit /m);
  for (const row of ['| findings | 8 |', '| error | 4 |', '| warning | 3 |', '| note | 1 |', '| not checked | 0 |'])
    assert.ok(lines.includes(row), row);
  // Most severe first; each finding a row with its rule, subject and message.
  const errors = r.stdout.indexOf('### Errors (4)');
  const warnings = r.stdout.indexOf('### Warnings (3)');
  const notes = r.stdout.indexOf('### Notes (1)');
  assert.ok(errors > 0 && errors < warnings && warnings < notes, 'grouped by severity, errors first');
  assert.ok(
    lines.some(
      (l) =>
        l.startsWith('| MA2001 no-unclaimed-container | container `debug-shell` | debug-shell (running) is claimed') &&
        l.endsWith(' | - |'),
    ),
    r.stdout,
  );
  assert.match(r.stdout, /^## How to fix$/m);
  assert.match(r.stdout, /^### MA2001 no-unclaimed-container\n\nfind the module named by its labels/m);
  assert.match(r.stdout, /^More: https:\/\/\S+\/rules\/MA2001\.md$/m);
});

test('an incomplete run: INCOMPLETE in the header, and each thing not checked under its host', () => {
  const snap = JSON.parse(readFileSync(DEMO, 'utf8')) as { problems: unknown[] };
  snap.problems.push({
    source: 'files',
    subject: '/etc/mesh/gitea/app.ini',
    message: '/etc/mesh/gitea/app.ini: EACCES',
  });
  const path = join(tempDir(), 'snapshot.json');
  writeFileSync(path, JSON.stringify(snap));
  const r = md([path]);
  assert.is(r.code, 3, r.stderr);
  assert.match(r.stdout, /^\*\*INCOMPLETE: \d+ things? not checked\*\*/m);
  assert.not.match(r.stdout, /^\*\*Complete\*\*/m);
  assert.match(r.stdout, /^### INCOMPLETE: not checked \(\d+\)$/m);
  assert.match(r.stdout, /^- `files` \/etc\/mesh\/gitea\/app\.ini: EACCES$/m);
});

test('skipped rules are named in the header, and their findings are not there', () => {
  const r = md([DEMO, '--skip', 'MA2001,MA1003']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stdout, /^Skipped by configuration \(not evaluated\): MA1003, MA2001\.$/m);
  assert.not.match(r.stdout, /^\| MA2001 /m);
  assert.not.match(r.stdout, /^\| MA1003 /m);
  assert.match(r.stdout, /^\| MA1001 /m);
});

test('scan --format md is written as mesh-audit.md in the output folder', () => {
  const out = tempDir();
  const r = spawnCli(['scan', '--snapshot', DEMO, '--format', 'md', '--out', out], NO_CONFIG);
  assert.is(r.code, 1, r.stderr);
  assert.is(r.stdout, '');
  assert.match(readFileSync(join(out, 'mesh-audit.md'), 'utf8'), /^# mesh-audit report: edge-7\n/);
});

test.run();
