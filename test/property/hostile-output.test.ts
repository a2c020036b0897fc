import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { SHOWN_BOUND, SHOWN_MESSAGE_BOUND } from '../../src/shown.js';
import { alertsOf } from '../../src/report/alerts.js';
import { auditSnapshots } from '../../src/pipeline.js';
import { loadPolicies } from '../../src/policy/load.js';
import type { Snapshot } from '../../src/snapshot/types.js';
import { example, runCli, tempDir, FIXED_NOW } from '../support/cli.js';
import { multitoolErrors } from '../support/multitool.js';
import { promtoolCheckMetrics } from '../support/promtool.js';

/*
 * Whatever a host writes into a name, it cannot forge, hide or break a report (SECURITY.md, "Hostile input").
 * Hostile strings — terminal controls, bidi overrides, lone surrogates, bytes that are not UTF-8, 100 kB values, Markdown, HTML, XML and
 * Prometheus metacharacters — are put, one place at a time and renamed consistently wherever the snapshot
 * names them, into a container's name, a `mesh.module` label, a ledger id, an env key, a network's and a
 * volume's name and a file's name under a managed root of the demo host (examples/demo/snapshot.json). Every
 * output format is rendered and checked:
 *   - text and Markdown (scan and premigrate) carry no raw control byte or bidi override and no forged line;
 *   - every Markdown table row keeps its column count;
 *   - JSON, JSON Lines parse; SARIF passes Microsoft's validator (a few cases: it takes a second or two); JUnit
 *     passes its XSD (xmllint); the Prometheus textfile passes promtool;
 *   - no Alertmanager label is longer than one shown value, no annotation longer than one shown message;
 *   - the findings (rule, severity, kind of subject) are the same as with the ordinary name.
 */

const RUNS = {
  numRuns: Number(process.env.HOSTILE_RUNS ?? 24),
  seed: Number(process.env.HOSTILE_SEED ?? 0x46),
} as const;
const demo = JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')) as Snapshot;
const rules = (await loadPolicies({ added: [], shipped: true, hardening: false })).flatMap((p) => p.rules);

/** Every string value equal to `from` (and every key equal to it) becomes `to`: a consistent rename. */
function renamed(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value === from ? to : value;
  if (Array.isArray(value)) return value.map((v) => renamed(v, from, to));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k === from ? to : k, renamed(v, from, to)]),
    );
  return value;
}

/** Places a host controls, each as the ordinary name the demo host has there and what the hostile one must avoid. */
const PLACES = [
  { what: 'container name', from: 'gitea-server', prefix: 'c' },
  { what: 'mesh.module label', from: 'runner', prefix: 'm' },
  { what: 'ledger id', from: 'gitea.server', prefix: 'l' },
  { what: 'env key', from: 'GITEA__server__DOMAIN', prefix: 'E' },
  { what: 'network name', from: 'forge_net', prefix: 'n' },
  { what: 'volume name', from: 'forge_data', prefix: 'v' },
  // A file's name: no `/` (that would be another path) and no NUL (no file name holds one).
  { what: 'file name', from: '/etc/mesh/forge/app.ini', prefix: '/etc/mesh/forge/f' },
] as const;

const PIECES = [
  '\n[FAKE] 0 findings, clean\r',
  '\r\n[FAKE] 0 findings (0 errors, 0 warnings, 0 notes) on 1 host\n',
  '\u001b[2J\u001b[H',
  '\u001b]8;;https://evil.example/\u0007click here\u001b]8;;\u0007',
  '\u0007',
  '\u0000',
  '\u007f',
  '\u0085',
  '\u009b31m',
  '\u202e',
  '\u2066',
  '\u2069',
  '\u200f',
  '\u2028',
  '\ud800',
  // A file name's byte that is not UTF-8, as the snapshot keeps it (src/fs/path-bytes.ts).
  '\udcff',
  '\udc80',
  '\ufffd',
  '|',
  '||',
  '`',
  '```',
  '<script>alert(1)</script>',
  '](javascript:alert(1))',
  '[x](https://evil.example)',
  '*_~',
  '\\',
  '\\n',
  '"',
  "'",
  '&amp;',
  ']]>',
  '<!--',
  '{a="b"} 1',
  '# HELP x',
  '%s%n',
  ' ',
  '\t',
];

/** A hostile name, kept as its parts so that a failing case prints short (the 100 kB filler as its length). */
interface HostileName {
  filler: number;
  parts: string[];
}
const hostile = fc.record({
  filler: fc.constantFrom(0, 0, 0, 100_000),
  parts: fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: 'binary', maxLength: 6 })), {
    minLength: 1,
    maxLength: 6,
  }),
});
// A file name holds neither `/` nor NUL; the other places may, and are given the same strings for simplicity.
const nameOf = (h: HostileName): string =>
  ('x'.repeat(h.filler) + h.parts.join('')).replaceAll('/', '-').replaceAll('\u0000', '\u0001');

/** A character a terminal or a Markdown viewer would obey, or that would reorder what is shown. */
// eslint-disable-next-line no-control-regex -- these are exactly what must not be printed raw
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

function assertNoForgery(text: string, what: string): void {
  const bad = RAW_CONTROL.exec(text);
  assert.is(
    bad,
    null,
    `${what}: a raw control U+${bad?.[0].codePointAt(0)?.toString(16).padStart(4, '0') ?? ''} at ${bad?.index ?? -1}`,
  );
  const forged = text.split('\n').find((line) => /^\s*[[(]?FAKE/.test(line));
  assert.is(forged, undefined, `${what}: a forged line: ${JSON.stringify(forged?.slice(0, 80))}`);
}

/** Each Markdown table keeps one column count: its cells' borders are the pipes no backslash escapes. */
function assertTablesIntact(markdown: string): void {
  let columns: number | null = null;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      columns = null;
      continue;
    }
    const count = line.replace(/\\./g, '').split('|').length;
    if (columns === null) columns = count;
    assert.is(count, columns, `a table row broken: ${JSON.stringify(line.slice(0, 120))}`);
  }
}

const findingSet = (s: Snapshot): string[] =>
  auditSnapshots([s], [], rules, { now: FIXED_NOW })
    .evaluations.flatMap((e) => e.findings)
    .map((f) => `${f.ruleId} ${f.severity} ${f.subject.kind}`)
    .sort();

function xmllint(file: string): { status: number | null; output: string } {
  const schema = join(PACKAGE_ROOT, 'test', 'fixtures', 'junit', 'jenkins-junit.xsd');
  const r = spawnSync('xmllint', ['--noout', '--schema', schema, file], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw new Error(`xmllint not found (apt-get install libxml2-utils): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

const ordinary = new Map(PLACES.map((p) => [p.what, findingSet(demo)]));
let sarifChecked = 0;

test('a hostile name in any place forges, breaks and changes nothing in any output format', async () => {
  const result = await fc.check(
    fc.asyncProperty(fc.constantFrom(...PLACES), hostile, async (place, name) => {
      const to = place.prefix + nameOf(name);
      const snapshot = renamed(demo, place.from, to) as Snapshot;
      assert.equal(findingSet(snapshot), ordinary.get(place.what), `the findings changed (${place.what})`);

      const dir = tempDir();
      const snap = join(dir, 'snapshot.json');
      writeFileSync(snap, JSON.stringify(snapshot));
      const out = join(dir, 'out');
      const formats = 'text,json,jsonl,sarif,junit,prom';
      const scan = await runCli(['evaluate', snap, '--out', out, '--format', formats, '--fail-on', 'none']);
      assert.is(scan.code, 0, scan.stderr);
      assertNoForgery(scan.stdout, `text report (${place.what})`);
      assertNoForgery(scan.stderr, `stderr (${place.what})`);

      const json = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as { findings: unknown[] };
      assert.ok(json.findings.length > 0);
      for (const line of readFileSync(join(out, 'mesh-audit.jsonl'), 'utf8').split('\n').filter(Boolean))
        JSON.parse(line);
      const sarifFile = join(out, 'mesh-audit.sarif');
      JSON.parse(readFileSync(sarifFile, 'utf8'));
      if (sarifChecked < 3) {
        sarifChecked++;
        assert.equal(multitoolErrors(sarifFile), [], `SARIF (${place.what})`);
      }
      const junit = xmllint(join(out, 'mesh-audit.junit.xml'));
      assert.is(junit.status, 0, `JUnit (${place.what}): ${junit.output}`);
      const prom = promtoolCheckMetrics(readFileSync(join(out, 'mesh-audit.prom'), 'utf8'));
      assert.ok(prom.ok, `Prometheus textfile (${place.what}): ${prom.output}`);

      const report = auditSnapshots([snapshot], [], rules, { now: FIXED_NOW });
      // A label holds one value (src/shown.ts's bound); an annotation a finished message. The pack's own texts
      // (help, remediation, runbook) are not the host's.
      for (const alert of alertsOf(report, { ttlHours: 26 })) {
        for (const [key, value] of Object.entries(alert.labels))
          assert.ok(value.length <= SHOWN_BOUND, `alert label ${key} is ${value.length} characters (${place.what})`);
        for (const [key, value] of Object.entries(alert.annotations))
          if (!['help', 'remediation', 'runbook_url'].includes(key))
            assert.ok(
              value.length <= SHOWN_MESSAGE_BOUND,
              `alert ${key} is ${value.length} characters (${place.what})`,
            );
      }

      const pre = join(dir, 'pre');
      const premigrate = await runCli(['premigrate', '--snapshot', snap, '--out', pre, '--format', 'text,md']);
      assert.ok(premigrate.code === 0 || premigrate.code === 1, premigrate.stderr);
      assertNoForgery(premigrate.stdout, `premigrate text (${place.what})`);
      const markdown = readFileSync(join(pre, 'premigration.md'), 'utf8');
      assertNoForgery(markdown, `premigrate markdown (${place.what})`);
      assertTablesIntact(markdown);
    }),
    RUNS,
  );
  // fast-check's own report would print the whole 100 kB name; the case is its parts, the error its first lines.
  if (result.failed)
    assert.unreachable(
      `after ${result.numRuns} cases, with ${JSON.stringify(result.counterexample)} (seed ${result.seed}): ` +
        String(result.errorInstance).slice(0, 2000),
    );
  assert.ok(sarifChecked > 0);
});

test.run();
