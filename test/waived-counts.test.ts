import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { example, runCli, tempDir } from './support/cli.js';
import { publishedSchemaErrors } from './support/published-schema.js';

/**
 * Issue 47: a waived finding stays in every report but is counted apart from the open ones — not in the text line's
 * "N errors", not in `summary.findings` / `bySeverity` / `byRule` (counted in `suppressed` and
 * `suppressedBySeverity`), not in `mesh_audit_findings` (in `mesh_audit_findings_waived`), and it does not fail the run.
 * The demo has 9 findings: 6 errors (MA1002 on gitea-server one of them), 2 warnings, 1 note.
 */
interface Summary {
  findings: number;
  bySeverity: Record<string, number>;
  byRule: Record<string, number>;
  byState?: Record<string, number>;
  suppressed: number;
  suppressedBySeverity: Record<string, number>;
}

function waiversFile(entries: { rule: string; subject: string }[]): string {
  const file = join(tempDir(), 'waivers.yaml');
  writeFileSync(
    file,
    'waivers:\n' +
      entries
        .map(
          (w) =>
            `  - rule: ${w.rule}\n    subject: "${w.subject}"\n    justification: accepted until the migration, OPS-1\n` +
            '    expires: 2027-12-31\n',
        )
        .join(''),
  );
  return file;
}

async function demoWith(waivers: string, ...more: string[]) {
  const out = tempDir();
  const run = await runCli([
    'evaluate',
    example('demo', 'snapshot.json'),
    '--history',
    example('demo', 'history'),
    '--out',
    out,
    '--format',
    'text,json,prom',
    '--waivers',
    waivers,
    ...more,
  ]);
  const json = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as {
    summary: Summary;
    findings: { ruleId: string; severity: string; suppressed?: object }[];
  };
  const prom = readFileSync(join(out, 'mesh-audit.prom'), 'utf8');
  const promSum = (metric: string, severity: string) =>
    prom
      .split('\n')
      .filter((l) => l.startsWith(`${metric}{`) && l.includes(`severity="${severity}"`))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  return { run, json, promSum, firstLine: run.stdout.split('\n')[0] };
}

test('a waived error is not counted among the errors: text line, JSON summary, Prometheus', async () => {
  const { run, json, promSum, firstLine } = await demoWith(waiversFile([{ rule: 'MA1002', subject: 'gitea-server' }]));
  assert.is(run.code, 1, run.stderr);
  assert.is(firstLine, '8 findings (5 errors, 2 warnings, 1 note; 1 waived) on 1 host');
  assert.equal(publishedSchemaErrors('report.schema.json', json), []);
  assert.is(json.findings.length, 9, 'the waived finding is still in the report');
  assert.is(json.summary.findings, 8);
  assert.equal(json.summary.bySeverity, { error: 5, warning: 2, note: 1 });
  assert.is(json.summary.byRule['MA1002'], undefined, 'its only finding is waived');
  assert.is(json.summary.suppressed, 1);
  assert.equal(json.summary.suppressedBySeverity, { error: 1, warning: 0, note: 0 });
  assert.is(promSum('mesh_audit_findings', 'error'), 5);
  assert.is(promSum('mesh_audit_findings_waived', 'error'), 1);
});

test('every error waived: "0 errors", and --fail-on error passes while the warnings still fail --fail-on warning', async () => {
  const waivers = waiversFile([
    ...['MA1001', 'MA1002', 'MA2003'].map((rule) => ({ rule, subject: '*' })),
    { rule: 'MA2001', subject: 'forge-forge.server' },
    // A subject glob's `*` stops at `/` (src/fs/glob.ts): a file is waived by its path.
    { rule: 'MA2002', subject: '/etc/mesh/forge/app.ini' },
  ]);
  const errors = await demoWith(waivers, '--fail-on', 'error');
  assert.is(errors.run.code, 0, errors.run.stderr);
  assert.is(errors.firstLine, '3 findings (0 errors, 2 warnings, 1 note; 6 waived) on 1 host');
  assert.equal(errors.json.summary.bySeverity, { error: 0, warning: 2, note: 1 });
  assert.equal(errors.json.summary.suppressedBySeverity, { error: 6, warning: 0, note: 0 });
  assert.is(errors.promSum('mesh_audit_findings', 'error'), 0);
  const warnings = await demoWith(waivers, '--fail-on', 'warning');
  assert.is(warnings.run.code, 1, warnings.run.stderr);
});

test('with a baseline, states are still given to every finding, the waived one too', async () => {
  const { json } = await demoWith(
    waiversFile([{ rule: 'MA1002', subject: 'gitea-server' }]),
    '--baseline',
    example('demo', 'expected.json'),
  );
  assert.equal(publishedSchemaErrors('report.schema.json', json), []);
  assert.equal(json.summary.byState, { new: 0, unchanged: 9, updated: 0, absent: 0 });
  assert.is(json.summary.findings, 8);
});

test.run();
