import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { example, runCli, tempDir } from './support/cli.js';
import { publishedSchemaErrors } from './support/published-schema.js';

/**
 * Issue 47, "Scripting the findings": each JSON and JSON Lines finding carries its rule's tags, its CIS id when the
 * rule has one, and the mesh module and resource it concerns, so that `jq -r '.findings[] | [.ruleId, .cis, .module,
 * .resource] | @tsv'` needs nothing else; the JSON report is held to its published schema (policies/report.schema.json).
 */
interface JsonFinding {
  ruleId: string;
  subject: { kind: string; id: string };
  tags?: string[];
  cis?: string;
  module?: string;
  resource?: string;
}
interface JsonReport {
  findings: JsonFinding[];
}

async function evaluateTo(args: string[]): Promise<{ json: JsonReport & object; jsonl: JsonFinding[] }> {
  const out = tempDir();
  const run = await runCli(['evaluate', ...args, '--out', out, '--format', 'json,jsonl', '--fail-on', 'none']);
  assert.ok(run.code === 0 || run.code === 3, run.stderr);
  const json = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as JsonReport;
  const jsonl = readFileSync(join(out, 'mesh-audit.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as JsonFinding & { notChecked?: true })
    .filter((l) => l.notChecked !== true);
  return { json, jsonl };
}

/** What `jq -r '.findings[] | [.ruleId, .cis, .module, .resource] | @tsv'` prints, a line a finding. */
const tsv = (findings: JsonFinding[]): string[] =>
  findings.map((f) => [f.ruleId, f.cis ?? '', f.module ?? '', f.resource ?? ''].join('\t'));

test('demo example: each finding names its module and resource (from labels or the ledger) and its rule tags', async () => {
  const { json, jsonl } = await evaluateTo([example('demo', 'snapshot.json'), '--history', example('demo', 'history')]);
  assert.equal(publishedSchemaErrors('report.schema.json', json), []);
  const lines = tsv(json.findings);
  // The drifted gitea container: its module from the ledger entry claiming it, its resource that entry's id.
  assert.ok(lines.includes('MA1001\t\tgitea\tgitea.server'), lines.join('\n'));
  // A file the ledger claims: the module of the entry that claims it.
  assert.ok(lines.includes('MA2002\t\tforge\tforge.config'), lines.join('\n'));
  // An unclaimed container without mesh labels belongs to no module and no resource: both left out.
  const unlabelled = json.findings.find((f) => f.ruleId === 'MA2001' && f.resource === undefined);
  assert.ok(unlabelled, 'the unlabelled unclaimed container');
  assert.not.ok('module' in unlabelled && 'cis' in unlabelled);
  // mesh-core has no CIS ids; every finding has its rule's tags.
  assert.ok(json.findings.every((f) => f.cis === undefined && Array.isArray(f.tags) && f.tags.length > 0));
  assert.ok(json.findings.find((f) => f.ruleId === 'MA2001')!.tags!.includes('exposure'));
  // JSON Lines says the same of each finding.
  assert.equal(tsv(jsonl).sort(), [...lines].sort());
  assert.equal(
    jsonl.map((f) => f.tags),
    json.findings.map((f) => f.tags),
  );
});

test('hardening profile: each docker-hardening finding carries the CIS id its tag names', async () => {
  const { json, jsonl } = await evaluateTo([
    join(PACKAGE_ROOT, 'test', 'fixtures', 'golden', 'realistic-3', 'snapshot.json'),
    '--profile',
    'hardening',
  ]);
  assert.equal(publishedSchemaErrors('report.schema.json', json), []);
  const hardening = json.findings.filter((f) => f.ruleId.startsWith('HD'));
  assert.ok(hardening.length > 10, `${hardening.length} hardening findings`);
  for (const f of hardening) {
    const tag = f.tags!.find((t) => t.startsWith('cis-docker-'));
    assert.is(f.cis, tag!.split(':')[1], `${f.ruleId}: ${f.cis} from ${tag}`);
  }
  const lines = tsv(json.findings);
  assert.ok(lines.includes('HD5029\t5.29\tdb\tdb.server'), lines.join('\n'));
  // An image belongs to no module: a CIS id, nothing else.
  assert.ok(lines.includes('HD4006\t4.6\t\t'), lines.join('\n'));
  assert.equal(tsv(jsonl).sort(), [...lines].sort());
});

test('every golden and example JSON report is valid against policies/report.schema.json', () => {
  const golden = join(PACKAGE_ROOT, 'test', 'fixtures', 'golden');
  const files = [
    ...readdirSync(golden).flatMap((host) =>
      ['default', 'hardening'].map((profile) => join(golden, host, profile, 'mesh-audit.json')),
    ),
    ...['045', '097', 'clean', 'demo'].map((name) => example(name, 'expected.json')),
  ];
  for (const file of files) {
    assert.equal(publishedSchemaErrors('report.schema.json', JSON.parse(readFileSync(file, 'utf8'))), [], file);
  }
});

test.run();
