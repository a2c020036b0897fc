import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { MAX_STEPS, MAX_VALUE_ITEMS } from '../src/policy/budget.js';
import { example, tempDir } from './support/cli.js';

/*
 * A pack is data a user writes, and JSON Logic can make values and work that grow without bound
 * (issue: a `reduce` doubling a list ran 47 s and 2.95 GB on 17 subjects, or died of V8's
 * out-of-memory abort with no report). With the evaluation budget (src/policy/budget.ts, docs/writing-rules.md
 * "Writing rules") such a rule stops on each subject with a named error, the other rules report, the
 * run is incomplete (exit 3) — in bounded memory, measured as the child's peak RSS by GNU time.
 */
const TIME = '/usr/bin/time';
/** Peak RSS allowed to the whole CLI run: node itself takes ~60-120 MB; an unbounded run took 2.95 GB. */
const MAX_RSS_MB = 400;

const forty = JSON.stringify(Array.from({ length: 40 }, (_, i) => i + 1));
const PACK = `schema: mesh-audit/policy@1
pack: {id: hostile, name: hostile, version: "1"}
rules:
  - id: T1
    name: merge-doubles-a-list
    title: A reduce whose step doubles a list with merge
    severity: warning
    subject: containers
    let:
      big: {"reduce": [${forty}, {"merge": [{"var": "accumulator"}, {"var": "accumulator"}]}, [1]]}
    assert: {"==": [{"count": [{"var": "big"}]}, 0]}
    message: "{name}: {big}"
    help: Nothing to do.
    remediation: Nothing.
    tags: []
    profiles: [nightly]
  - id: T2
    name: literal-doubles-a-nested-list
    title: A reduce whose step doubles a nested list without copying it
    severity: warning
    subject: containers
    let:
      big: {"reduce": [${forty}, [{"var": "accumulator"}, {"var": "accumulator"}], 0]}
    assert: {"==": [{"cat": [{"var": "big"}]}, "x"]}
    message: "{name}"
    help: Nothing to do.
    remediation: Nothing.
    tags: []
    profiles: [nightly]
  - id: T3
    name: every-container
    title: Every container, named
    severity: note
    subject: containers
    assert: false
    message: "{name} is here"
    help: Nothing to do.
    remediation: Nothing.
    tags: []
    profiles: [nightly]
`;

test('a doubling reduce (merge, and a nested list literal) ends with a named budget error per subject, the other rules report, in bounded memory', () => {
  assert.ok(existsSync(TIME), `${TIME} (Debian's time package) measures the child's peak memory; .ci/run installs it`);
  const dir = tempDir();
  const pack = join(dir, 'hostile.yaml');
  writeFileSync(pack, PACK);
  const out = join(dir, 'out');
  const r = spawnSync(
    TIME,
    [
      '-f',
      'maxrss-kb=%M',
      process.execPath,
      join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'),
      'evaluate',
      example('demo', 'snapshot.json'),
      '--policy',
      pack,
      '--no-default-policy',
      '--out',
      out,
      '--format',
      'json',
    ],
    {
      cwd: PACKAGE_ROOT,
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  const rssKb = Number(/maxrss-kb=(\d+)/.exec(r.stderr)?.[1]);
  assert.ok(rssKb > 0, `GNU time gave no figure: ${r.stderr}`);
  assert.ok(rssKb / 1024 < MAX_RSS_MB, `peak RSS ${Math.round(rssKb / 1024)} MB, bound ${MAX_RSS_MB} MB`);
  assert.is(r.status, 3, r.stderr);
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as {
    summary: { complete: boolean };
    findings: { ruleId: string }[];
    notifications: { level: string; kind: string; source: string; message: string }[];
  };
  assert.is(report.summary.complete, false);
  const containers = report.findings.filter((f) => f.ruleId === 'T3').length;
  assert.ok(containers >= 3, `T3 still reports every container (${containers})`);
  assert.equal(
    report.findings.filter((f) => f.ruleId !== 'T3'),
    [],
    'no finding from a rule stopped by the budget',
  );
  // T1's merge makes a real list: its size stops it. T2's list shares itself (tiny in memory, huge when
  // walked): measuring it spends steps, so either limit may be the one met first.
  const items = `merge made a value of more than ${MAX_VALUE_ITEMS.toLocaleString('en-US')} items (the evaluation budget)`;
  const either =
    /: stopped: (a list written in the rule made a value of more than 1,000,000 items|more than 1,000,000 evaluation steps on one subject) \(the evaluation budget\)$/;
  for (const [rule, says] of [
    ['T1', items],
    ['T2', either],
  ] as const) {
    const errors = report.notifications.filter((n) => n.kind === 'evaluation' && n.source === rule);
    assert.is(errors.length, containers, `${rule}: one error per container`);
    for (const e of errors) {
      assert.is(e.level, 'error');
      assert.match(e.message, says);
    }
  }
});

test('the step budget stops a rule whose work, not its values, grows: map inside map inside map', () => {
  const dir = tempDir();
  const list = JSON.stringify(Array.from({ length: 300 }, (_, i) => i));
  const pack = join(dir, 'steps.yaml');
  writeFileSync(
    pack,
    PACK.split('  - id: T2')[0]!
      .replace(
        /let:\n {6}big: .*\n {4}assert: .*/,
        `assert: {"some": [${list}, {"some": [${list}, {"some": [${list}, {"==": [{"var": ""}, -1]}]}]}]}`,
      )
      .replace('message: "{name}: {big}"', 'message: "{name}"'),
  );
  const out = join(dir, 'out');
  const r = spawnSync(
    process.execPath,
    [
      join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'),
      'evaluate',
      example('demo', 'snapshot.json'),
      '--policy',
      pack,
      '--no-default-policy',
      '--out',
      out,
      '--format',
      'json',
    ],
    {
      cwd: PACKAGE_ROOT,
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  assert.is(r.status, 3, r.stderr);
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as {
    notifications: { source: string; message: string }[];
  };
  const stopped = report.notifications.filter((n) => n.source === 'T1');
  assert.ok(stopped.length >= 3, JSON.stringify(report.notifications));
  for (const n of stopped)
    assert.match(
      n.message,
      `more than ${MAX_STEPS.toLocaleString('en-US')} evaluation steps on one subject (the evaluation budget)`,
    );
  assert.ok(
    report.notifications.every((n) => n.source !== 'T3'),
    'T3 ran whole',
  );
});

test.run();
