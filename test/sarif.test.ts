import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { FINGERPRINT_KEY, HOST_ROOT } from '../src/report/sarif.js';
import { HostModel } from './support/host-model.js';
import { example, runCli, tempDir } from './support/cli.js';
import { driftHostSnapshot } from './support/drift-host.js';
import { multitoolErrors, multitoolGhasErrors } from './support/multitool.js';

// The converters people feed SARIF into, as published (devDependencies). sarif-to-markdown is a
// library (CommonJS); sarif-junit is run as its command (its library keeps one report across calls).
const require = createRequire(import.meta.url);
const { sarifToMarkdown } = require('@security-alert/sarif-to-markdown') as {
  sarifToMarkdown: (o: {
    owner: string;
    repo: string;
    branch: string;
    sourceRoot: string;
  }) => (log: unknown) => { body: string }[];
};
const SARIF_JUNIT = join(PACKAGE_ROOT, 'node_modules', 'sarif-junit', 'bin', 'sarif-junit.js');

interface SarifResult {
  ruleId: string;
  kind?: string;
  level?: string;
  message: { text: string };
  locations: {
    physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string }; region?: { startLine?: number } };
    logicalLocations?: { name: string }[];
  }[];
  partialFingerprints: Record<string, string>;
  baselineState?: string;
  suppressions?: { kind: string; status: string; justification: string }[];
  properties: { severity: string };
}
interface SarifRun {
  automationDetails: { id: string };
  originalUriBaseIds: Record<string, { uri: string }>;
  invocations: {
    executionSuccessful: boolean;
    startTimeUtc: string;
    endTimeUtc: string;
    toolExecutionNotifications: { level: string; message: { text: string } }[];
  }[];
  tool: {
    driver: {
      rules: {
        id: string;
        name: string;
        helpUri: string;
        help: { text: string };
        properties: { tags: string[]; 'security-severity'?: string };
      }[];
    };
  };
  results: SarifResult[];
}
const readSarif = (file: string): { runs: SarifRun[] } => JSON.parse(readFileSync(file, 'utf8'));
const sarifFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.sarif'))
    .sort()
    .map((n) => join(dir, n));

/** Every result, converted by sarif-junit and sarif-to-markdown: one test case and one link line each. */
function assertConvertersTakeIt(file: string): void {
  const results = readSarif(file).runs.flatMap((r) => r.results);
  const junitFile = join(tempDir(), 'junit.xml');
  const run = spawnSync(process.execPath, [SARIF_JUNIT, '-i', file, '-o', junitFile], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.is(run.status, 0, `sarif-junit on ${file}: ${run.stdout}${run.stderr}`);
  const junit = readFileSync(junitFile, 'utf8');
  assert.is(
    junit.match(/<testcase /g)?.length ?? 0,
    results.length,
    `sarif-junit: one test case per result in ${file}`,
  );
  const pages = sarifToMarkdown({ owner: 'o', repo: 'r', branch: 'main', sourceRoot: '/' })(readSarif(file));
  // The result lines (the rule information below them has bullets of its own).
  const resultPart = (body: string) => body.split('## Rules information')[0]!;
  const links = pages.flatMap((p) =>
    resultPart(p.body)
      .split('\n')
      .filter((l) => l.startsWith('    - ')),
  );
  assert.is(links.length, results.length, `sarif-to-markdown: one entry per result in ${file}`);
  for (const l of links)
    assert.match(
      l,
      /^ {4}- https:\/\/github\.com\/o\/r\/blob\/main\/\S+#L\d+/,
      `a link to a line, not an empty bullet: '${l}'`,
    );
  // Nothing is listed as suppressed unless a waiver matched it.
  const suppressed = results.filter((r) => r.suppressions !== undefined);
  const listedSuppressed = pages.reduce(
    (n, p) =>
      n +
      (resultPart(p.body)
        .split('## Suppressed results')[1]
        ?.split('\n')
        .filter((l) => l.startsWith('    - ')).length ?? 0),
    0,
  );
  assert.is(
    listedSuppressed,
    suppressed.length,
    `sarif-to-markdown lists exactly the waived results as suppressed in ${file}`,
  );
}

/** What every consumer needs of every result and run. */
function assertEveryConsumerCanPlaceIt(file: string): void {
  for (const run of readSarif(file).runs) {
    assert.is(run.originalUriBaseIds[HOST_ROOT]?.uri, 'file:///');
    const inv = run.invocations[0]!;
    assert.ok(Date.parse(inv.startTimeUtc) <= Date.parse(inv.endTimeUtc), 'startTimeUtc and endTimeUtc');
    for (const r of run.results) {
      const loc = r.locations[0]!.physicalLocation;
      assert.is(loc.artifactLocation.uriBaseId, HOST_ROOT, `${r.ruleId}: relative to ${HOST_ROOT}`);
      assert.not.match(loc.artifactLocation.uri, /^(file:|\/)/, `${r.ruleId}: a relative URI`);
      assert.ok((loc.region?.startLine ?? 0) >= 1, `${r.ruleId}: region.startLine`);
    }
  }
}

const EXAMPLES = ['045', '097', 'clean', 'demo'];

test("every example: valid for the Multitool, and for GitHub's ingestion rules GH1001–GH1007", () => {
  const files = EXAMPLES.map((name) => example(name, 'expected.sarif'));
  for (const file of files) assert.equal(multitoolErrors(file), [], file);
  assert.equal(multitoolGhasErrors(...files), []);
});

test('every example: sarif-junit and sarif-to-markdown convert every result; each result is placed in a file and line', () => {
  for (const name of EXAMPLES) {
    assertConvertersTakeIt(example(name, 'expected.sarif'));
    assertEveryConsumerCanPlaceIt(example(name, 'expected.sarif'));
  }
});

test("a container is located at its ledger entry's line, an unclaimed one at the top of the ledger; its logical location is kept", () => {
  const run = readSarif(example('097', 'expected.sarif')).runs[0]!;
  const containerResults = run.results.filter(
    (r) => r.locations[0]!.logicalLocations?.some((l) => l.name.length > 0) && /^MA200[13]$/.test(r.ruleId),
  );
  assert.ok(containerResults.length >= 2, 'MA2001 and MA2003 on the renamed container');
  const ledger = JSON.parse(readFileSync(example('097', 'snapshot.json'), 'utf8')).ledger as {
    path: string;
    entries: { line: number; entry: { id?: string } }[];
  };
  for (const r of containerResults) {
    const loc = r.locations[0]!.physicalLocation;
    assert.is(`/${loc.artifactLocation.uri}`, ledger.path, `${r.ruleId} located in the ledger`);
    const stale = r.ruleId === 'MA2003';
    if (stale) {
      const lines = ledger.entries.map((e) => e.line);
      assert.ok(
        lines.includes(loc.region!.startLine!),
        `MA2003 at the line of the entry that moved away (${loc.region!.startLine})`,
      );
    }
  }
});

test("rules: helpUri to the rule's page under docs/, security-severity and the security tag on exposure rules only", () => {
  const rules = readSarif(example('demo', 'expected.sarif')).runs[0]!.tool.driver.rules;
  for (const rule of rules) {
    assert.ok(rule.helpUri.startsWith('https://'), 'absolute');
    const page = /\/blob\/v[^/]+\/(docs\/rules\/[A-Z0-9]+\.md)$/.exec(rule.helpUri)?.[1];
    assert.is(page, `docs/rules/${rule.id}.md`, rule.helpUri);
    assert.match(
      readFileSync(example('..', page ?? 'missing'), 'utf8'),
      `# ${rule.id} \`${rule.name}\``,
      `the page of ${rule.id}`,
    );
  }
  const exposure = rules.filter((r) => r.properties['security-severity'] !== undefined);
  assert.equal(
    exposure.map((r) => r.id),
    ['MA2001', 'MA2009'],
    'the exposure rules: an unclaimed container, an undeclared host listener',
  );
  for (const r of exposure) {
    assert.ok(r.properties.tags.includes('security'));
    assert.ok(Number(r.properties['security-severity']) >= 7, `${r.id}: exposed and unclaimed is high`);
  }
  assert.ok(
    rules.filter((r) => !['MA2001', 'MA2009'].includes(r.id)).every((r) => !r.properties.tags.includes('security')),
  );
});

test('an incomplete run: executionSuccessful false, one error notification per problem naming its subject, and still valid', async () => {
  const dir = tempDir();
  const snap = new HostModel('half-read', '2026-10-01T00:00:00Z')
    .problem({ source: 'docker', message: 'cannot reach the Docker engine at unix:///var/run/docker.sock (ENOENT)' })
    .problem({ source: 'files', subject: '/etc/mesh/app/secret.env', message: 'EACCES: permission denied' })
    .ledgerUnavailable('cannot read /var/lib/mesh-host/ledger.json (EACCES)')
    .build();
  writeFileSync(join(dir, 'snap.json'), JSON.stringify(snap));
  const run = await runCli(['evaluate', join(dir, 'snap.json'), '--out', dir, '--format', 'sarif']);
  assert.is(run.code, 3);
  const file = join(dir, 'mesh-audit.sarif');
  const invocation = readSarif(file).runs[0]!.invocations[0]!;
  assert.is(invocation.executionSuccessful, false);
  const texts = invocation.toolExecutionNotifications.map((n) => n.message.text);
  assert.is(texts.length, 3);
  assert.ok(invocation.toolExecutionNotifications.every((n) => n.level === 'error'));
  assert.match(texts[0]!, 'Docker engine');
  assert.ok(texts.includes('/etc/mesh/app/secret.env: EACCES: permission denied'), texts.join(' | '));
  assert.equal(multitoolErrors(file), []);
  assert.equal(multitoolGhasErrors(file), []);
  assertConvertersTakeIt(file);
});

test('waivers: suppressions only on the results a waiver matched, in a run of their own; none at all without waivers', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const waivers = join(dir, 'waivers.yaml');
  writeFileSync(
    waivers,
    'waivers:\n  - rule: no-unclaimed-container\n    subject: stray\n    justification: kept for the vendor, ticket OPS-1\n    expires: 2099-12-31\n',
  );
  const snap = driftHostSnapshot(dir, 'w', { drift: true, stray: true });
  await runCli(['evaluate', snap, '--out', out, '--format', 'sarif', '--waivers', waivers, '--fail-on', 'none']);
  const file = join(out, 'mesh-audit.sarif');
  const runs = readSarif(file).runs;
  assert.equal(
    runs.map((r) => r.automationDetails.id),
    ['mesh-audit/drift-host/', 'mesh-audit/drift-host/waived/'],
  );
  assert.ok(
    runs[0]!.results.length > 0 && runs[0]!.results.every((r) => r.suppressions === undefined),
    'the main run has no suppressions at all',
  );
  assert.equal(
    runs[1]!.results.map((r) => [r.ruleId, r.suppressions?.[0]?.status]),
    [['MA2001', 'accepted']],
  );
  assert.equal(multitoolGhasErrors(file), []);
  assertConvertersTakeIt(file);

  await runCli(['evaluate', snap, '--out', out, '--format', 'sarif', '--fail-on', 'none']);
  assert.ok(readSarif(file).runs.every((r) => r.results.every((x) => x.suppressions === undefined)));
});

test('baseline: a finding gone since is a pass at level none, its severity kept; the file stays valid for every consumer', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const args = (snap: string) => [
    'evaluate',
    snap,
    '--out',
    out,
    '--format',
    'json,sarif',
    '--baseline',
    'auto',
    '--fail-on',
    'none',
  ];
  await runCli(args(driftHostSnapshot(dir, 'a', { drift: true })));
  await runCli(args(driftHostSnapshot(dir, 'b')));
  const file = join(out, 'mesh-audit.sarif');
  const results = readSarif(file).runs[0]!.results;
  const gone = results.filter((r) => r.baselineState === 'absent');
  assert.equal(
    gone.map((r) => [r.ruleId, r.kind, r.level, r.properties.severity]),
    [['MA1001', 'pass', 'none', 'error']],
  );
  assert.ok(results.every((r) => r.baselineState !== undefined));
  assert.equal(multitoolGhasErrors(file), []);
  assertConvertersTakeIt(file);
});

test('the pre-migration SARIF of the adopted-node example: no GitHub ingestion error, every result converted', async () => {
  const out = join(tempDir(), 'reports');
  await runCli([
    'premigrate',
    '--snapshot',
    example('adopted-node', 'snapshot.json'),
    '--out',
    out,
    '--format',
    'sarif',
  ]);
  const file = join(out, 'premigration.sarif');
  assert.ok(readSarif(file).runs[0]!.results.length > 0);
  assert.equal(multitoolGhasErrors(file), []);
  assertConvertersTakeIt(file);
  assertEveryConsumerCanPlaceIt(file);
});

test('a fleet of 25 hosts: one SARIF file per host, one category each, no GitHub ingestion error, every result converted', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  const sources = EXAMPLES.map((name) => JSON.parse(readFileSync(example(name, 'snapshot.json'), 'utf8')));
  const paths = Array.from({ length: 25 }, (_, i) => {
    const snap = structuredClone(sources[i % sources.length]);
    snap.host.hostname = `fleet-${String(i).padStart(2, '0')}`;
    const path = join(dir, `h${i}.json`);
    writeFileSync(path, JSON.stringify(snap));
    return path;
  });
  // The same host twice: two runs, two categories.
  paths.push(paths[0]!);
  await runCli(['evaluate', ...paths, '--out', out, '--format', 'sarif', '--fail-on', 'none', '--jobs', '1']);
  const files = sarifFiles(out);
  assert.is(files.length, 25);
  const ids = files.flatMap((f) => readSarif(f).runs.map((r) => r.automationDetails.id));
  assert.is(new Set(ids).size, ids.length, 'automationDetails.id unique');
  assert.ok(ids.includes('mesh-audit/fleet-00/2/'));
  for (const f of files) assert.ok(readSarif(f).runs.length <= 20);
  assert.equal(multitoolGhasErrors(...files), []);
  for (const f of files) {
    assertConvertersTakeIt(f);
    assertEveryConsumerCanPlaceIt(f);
  }
});

test('results carry rule metadata, fingerprints, logical locations and the env file line of a drifting key', () => {
  const sarif = readSarif(example('045', 'expected.sarif'));
  const run = sarif.runs[0]!;
  const drift = run.results.find((r) => r.ruleId === 'MA1001') as SarifResult & {
    ruleIndex: number;
    fingerprints?: unknown;
  };
  assert.ok(drift, 'an MA1001 result');
  assert.is(run.tool.driver.rules[drift.ruleIndex]!.name, 'container-env-matches-composed-file');
  assert.is(drift.partialFingerprints[FINGERPRINT_KEY]!.length, 32);
  assert.is(drift.fingerprints, undefined);
  const loc = drift.locations[0]!;
  assert.equal(loc.physicalLocation.artifactLocation, { uri: 'etc/mesh/gitea/db.env', uriBaseId: HOST_ROOT });
  assert.is(loc.physicalLocation.region!.startLine, 2, 'DATABASE_URL is on line 2 of the composed file');
  assert.is(loc.logicalLocations![0]!.name, 'gitea-server');
  const rule = run.tool.driver.rules.find((r) => r.id === 'MA1001')!;
  assert.ok(rule.name !== rule.id);
  assert.not.match(rule.help.text, '**');
});

test.run();
