import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, spawnCli, tempDir } from './support/cli.js';

// Issue 28 (items 5 and 10): the terminal view as an operator reads it, and what --quiet and
// --only-new print for a nightly job whose output cron mails.
const demo = ['evaluate', example('demo', 'snapshot.json'), '--history', example('demo', 'history')];
const clean = ['evaluate', example('clean', 'snapshot.json')];

interface JsonFinding {
  ruleId: string;
  severity: string;
  fingerprint: string;
  subject: { kind: string; id: string };
  message: string;
}
const RANK: Record<string, number> = { error: 3, warning: 2, note: 1 };

/** The demo's JSON report, written to a file: a baseline to compare with. */
function demoReport(dir: string): { path: string; doc: { findings: JsonFinding[] } & Record<string, unknown> } {
  const r = spawnCli([...demo, '--format', 'json', '--out', '-', '--fail-on', 'none']);
  assert.is(r.code, 0, r.stderr);
  const path = join(dir, 'baseline.json');
  writeFileSync(path, r.stdout);
  return { path, doc: JSON.parse(r.stdout) as { findings: JsonFinding[] } };
}

/** The table's rows: `severity ruleId` in the order printed. */
const rowsOf = (text: string): { severity: string; rule: string; subject: string }[] =>
  [...text.matchAll(/^ {2}(error|warning|note) +(MA\d+) \S+ +(.+)$/gm)].map((m) => ({
    severity: m[1]!,
    rule: m[2]!,
    subject: m[3]!,
  }));

test('the text table: the summary first, findings most severe first and by rule within a severity', () => {
  const r = spawnCli([...demo, '--format', 'text']);
  assert.is(r.code, 1, r.stderr);
  const lines = r.stdout.split('\n');
  assert.is(lines[0], '9 findings (6 errors, 2 warnings, 1 note) on 1 host', 'the summary is the first line');
  const rows = rowsOf(r.stdout);
  assert.is(rows.length, 9);
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1]!, rows[i]!];
    assert.ok(
      RANK[a.severity]! > RANK[b.severity]! || (a.severity === b.severity && a.rule <= b.rule),
      `${a.severity} ${a.rule} before ${b.severity} ${b.rule}`,
    );
  }
  // The demo has an error of MA2001 and a note of the same rule: the note comes after every warning.
  assert.equal(
    rows.map((x) => x.severity),
    ['error', 'error', 'error', 'error', 'error', 'error', 'warning', 'warning', 'note'],
  );
});

test('digests are cut to 12 hex digits in the terminal view only; JSON and SARIF keep them whole', () => {
  const text = spawnCli([...demo, '--format', 'text']).stdout;
  assert.not.match(text, /[0-9a-f]{13}/, 'no long hex run on the terminal');
  assert.match(text, 'at sha256:df0273296014…; the file is now sha256:ccc6fca0ef7c…');
  const json = spawnCli([...demo, '--format', 'json', '--out', '-']).stdout;
  assert.match(json, 'sha256:df0273296014c3dd0b4de0c784f57215d6b381c206c074995d7698a536850934');
  const sarif = spawnCli([...demo, '--format', 'sarif', '--out', '-']).stdout;
  assert.match(sarif, 'sha256:ccc6fca0ef7c2d7daf3f0c95d929ac4c5f29fe224d8906f33254ea5922e4c882');
});

test('diff on the terminal cuts digests as the text report does; its JSON keeps them whole', () => {
  const dir = tempDir();
  const { path } = demoReport(dir);
  const before = join(dir, 'clean.json');
  writeFileSync(before, spawnCli([...clean, '--format', 'json', '--out', '-']).stdout);
  const text = spawnCli(['diff', before, path]);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, 'New (9):');
  assert.match(text.stdout, 'sha256:df0273296014…');
  assert.not.match(text.stdout, /[0-9a-f]{13}/);
  assert.match(
    spawnCli(['diff', before, path, '--format', 'json']).stdout,
    'sha256:df0273296014c3dd0b4de0c784f57215d6b381c206c074995d7698a536850934',
  );
});

test('--help shows --no-color without cac\'s "(default: true)", and no line ends in a blank', () => {
  for (const command of ['scan', 'evaluate', 'premigrate']) {
    const help = spawnCli([command, '--help']).stdout;
    const line = help.split('\n').find((l) => l.trimStart().startsWith('--no-color'));
    assert.ok(line, help);
    assert.not.match(line, 'default');
    assert.match(line, /No colour in the text report \(as NO_COLOR=1 does\)$/);
    assert.not.match(help, / \n/);
    assert.match(help, /\(default: text,/, 'the other defaults are still shown');
  }
});

test('--quiet: a clean, complete run prints nothing at all, stdout or stderr (the reports are still written)', () => {
  const out = tempDir();
  const r = spawnCli([...clean, '--out', out, '--quiet']);
  assert.is(r.code, 0);
  assert.is(r.stdout, '');
  assert.is(r.stderr, '');
  assert.ok(readFileSync(join(out, 'mesh-audit.json'), 'utf8').includes('"complete": true'));
  const loud = spawnCli([...clean, '--format', 'text']);
  assert.match(loud.stdout, 'no findings', 'without --quiet the clean run is told');
});

test('--quiet with findings prints them (waived ones left out, counted), and "How to fix"', () => {
  const dir = tempDir();
  const waivers = join(dir, 'waivers.yaml');
  writeFileSync(
    waivers,
    'waivers:\n  - rule: no-unclaimed-container\n    subject: debug-shell\n    justification: the on-call shell, kept on purpose\n    expires: 2099-01-01\n',
  );
  const r = spawnCli([...demo, '--format', 'text', '--quiet', '--waivers', waivers]);
  assert.is(r.code, 1, r.stderr);
  assert.is(r.stderr, '');
  // The waived note is counted apart from the open findings (issue 47).
  assert.match(r.stdout.split('\n')[0]!, '8 findings (6 errors, 2 warnings, 0 notes; 1 waived (not shown)) on 1 host');
  assert.is(rowsOf(r.stdout).length, 8);
  assert.not.match(r.stdout, 'debug-shell');
  assert.match(r.stdout, 'How to fix');
  const all = spawnCli([...demo, '--format', 'text', '--waivers', waivers]);
  assert.match(all.stdout, 'debug-shell', 'without --quiet the waived finding is listed, tagged');
});

test('--only-new prints only the findings new against a baseline that holds some of them; --quiet then prints nothing when none is new', () => {
  const dir = tempDir();
  const { path, doc } = demoReport(dir);
  // The baseline holds every finding but the two of MA1003 and the MA2002 one: those three are new tonight.
  const dropped = doc.findings.filter((f) => f.ruleId === 'MA1003' || f.ruleId === 'MA2002');
  assert.is(dropped.length, 3);
  const partial = join(dir, 'partial.json');
  writeFileSync(partial, JSON.stringify({ ...doc, findings: doc.findings.filter((f) => !dropped.includes(f)) }));

  const r = spawnCli([...demo, '--format', 'text', '--quiet', '--only-new', '--baseline', partial]);
  assert.is(r.code, 1, r.stderr);
  assert.is(r.stderr, '');
  const rows = rowsOf(r.stdout);
  assert.equal(
    rows.map((x) => `${x.severity} ${x.rule} ${x.subject}`),
    [
      'error MA2002 file /etc/mesh/forge/app.ini  [new]',
      'warning MA1003 container forge-forge.server  [new]',
      'warning MA1003 container gitea-server  [new]',
    ],
  );
  assert.match(
    r.stdout.split('\n')[0]!,
    '9 findings (6 errors, 2 warnings, 1 note; 3 new, 0 gone) on 1 host; showing the new ones only',
  );
  assert.equal(
    [...r.stdout.matchAll(/^ {2}(MA\d+) \S+: /gm)].map((m) => m[1]),
    ['MA1003', 'MA2002'],
    'How to fix: only the rules shown',
  );

  // The same without --quiet: the new ones only, and what is gone is still told.
  const loud = spawnCli([...demo, '--format', 'text', '--only-new', '--baseline', partial]);
  assert.is(rowsOf(loud.stdout).length, 3);

  // Against the whole report nothing is new: a complete run prints nothing; --fail-on-new makes it exit 0.
  const none = spawnCli([...demo, '--format', 'text', '--quiet', '--only-new', '--baseline', path]);
  assert.equal([none.code, none.stdout, none.stderr], [1, '', '']);
  const ok = spawnCli([...demo, '--format', 'text', '--quiet', '--only-new', '--fail-on-new', '--baseline', path]);
  assert.equal([ok.code, ok.stdout, ok.stderr], [0, '', '']);
});

test('onlyNew in a config file is --only-new (a job can keep its whole command there); config show says where it came from', () => {
  const dir = tempDir();
  const { path } = demoReport(dir);
  const config = join(dir, 'job.yaml');
  writeFileSync(config, `baseline: ${path}\nonlyNew: true\nformat: text\n`);
  const r = spawnCli([...demo, '--config', config, '--quiet']);
  assert.equal([r.code, r.stdout, r.stderr], [1, '', ''], 'nothing is new against the baseline: nothing printed');
  const shown = JSON.parse(spawnCli(['config', 'show', '--config', config, '--format', 'json']).stdout) as {
    settings: Record<string, { value: unknown; from: string }>;
  };
  assert.equal(shown.settings['onlyNew'], { value: true, from: `config ${config}:2` });
  writeFileSync(config, 'onlyNew: true\nformat: text\n');
  const none = spawnCli([...demo, '--config', config]);
  assert.is(none.code, 2, 'onlyNew from the config without a baseline is the same usage error');
  assert.match(none.stderr, '--only-new prints the findings new against a baseline');
});

test('--only-new without a baseline is a usage error: nothing could be told new', () => {
  const r = spawnCli([...demo, '--format', 'text', '--only-new']);
  assert.is(r.code, 2);
  assert.match(r.stderr, '--only-new prints the findings new against a baseline: add --baseline auto');
  assert.is(r.stdout, '');
});

test('an incomplete run under --quiet (and --only-new) still says so: in the text report, or on stderr when none is printed', () => {
  const dir = tempDir();
  const snap = JSON.parse(readFileSync(example('clean', 'snapshot.json'), 'utf8')) as { problems: unknown[] };
  snap.problems = [{ source: 'docker', message: 'cannot reach the Docker engine' }];
  const file = join(dir, 'incomplete.json');
  writeFileSync(file, JSON.stringify(snap));
  const { path } = demoReport(dir);
  const text = spawnCli(['evaluate', file, '--format', 'text', '--quiet', '--only-new', '--baseline', path]);
  assert.is(text.code, 3);
  assert.match(text.stdout, 'INCOMPLETE: 1 thing not checked');
  assert.match(text.stdout, 'Not checked (1):\n  - [docker] cannot reach the Docker engine');
  const json = spawnCli(['evaluate', file, '--format', 'json', '--out', join(dir, 'out'), '--quiet']);
  assert.is(json.code, 3);
  assert.is(json.stdout, '');
  assert.is(json.stderr, 'mesh-audit: INCOMPLETE: 1 thing not checked: cannot reach the Docker engine\n');
});

test.run();
