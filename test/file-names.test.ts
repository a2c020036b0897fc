import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Snapshot } from '../src/snapshot/types.js';
import { runCli, tempDir } from './support/cli.js';

// File names that are not valid UTF-8, under a managed root, scanned by the CLI with no engine
// (`--docker-host unix:///nonexistent.sock`: exit 3 because of the engine, and only because of it).
// Node would read `x\xff.env` as `x\ufffd.env`, whose lstat fails: recorded as missing, the file went
// unreported. Its name is kept as src/fs/path-bytes.ts writes it (the byte 0xff as U+DCFF).
const NO_ENGINE = 'unix:///nonexistent.sock';
const sha = (content: string): string => 'sha256:' + createHash('sha256').update(content).digest('hex');

interface Finding {
  ruleId: string;
  subject?: { kind: string; id: string };
}

/** Bytes of a name under `dir`: `prefix` (UTF-8) then the raw bytes `raw`, then `suffix`. */
function rawName(dir: string, prefix: string, raw: number[], suffix: string): Buffer {
  return Buffer.concat([Buffer.from(`${dir}/${prefix}`), Buffer.from(raw), Buffer.from(suffix)]);
}

test('a managed root holding a name that is not UTF-8: its file is read by its bytes, recorded under its escaped name and reported unclaimed (MA2004), not missing', async () => {
  const base = realpathSync(tempDir('ma-names-', '/tmp'));
  const m = join(base, 'm');
  mkdirSync(m);
  // x<0xff>.env: no valid UTF-8; x\ufffd.env: the valid name Node's decoding would make of it.
  writeFileSync(rawName(m, 'x', [0xff], '.env'), 'HIDDEN=1\n');
  writeFileSync(join(m, 'x\ufffd.env'), 'SHOWN=1\n');
  // A folder whose own name is not UTF-8 (a lone continuation byte), and a file in it.
  mkdirSync(rawName(m, 'd', [0x80], ''));
  writeFileSync(Buffer.concat([rawName(m, 'd', [0x80], ''), Buffer.from('/inner.ini')]), 'inner\n');
  // Ledger: only the valid name is claimed, so a name mixed up with it would be claimed too.
  const ledger = join(base, 'ledger.json');
  writeFileSync(ledger, JSON.stringify([{ id: 'shown', type: 'file', target: `${m}/x\ufffd.env` }]));
  const out = join(base, 'out');
  mkdirSync(out);
  const run = await runCli([
    'scan',
    '--docker-host',
    NO_ENGINE,
    '--ledger',
    ledger,
    '--managed-root',
    m,
    '--hostname',
    'names',
    '--out',
    out,
    '--format',
    'json,text',
  ]);
  assert.is(run.code, 3, run.stderr);
  assert.match(run.stderr, 'cannot reach the Docker engine at unix:///nonexistent.sock');

  const escaped = `${m}/x\udcff.env`;
  const valid = `${m}/x\ufffd.env`;
  const inner = `${m}/d\udc80/inner.ini`;
  const history = join(out, 'history', 'names');
  const kept = readdirSync(history).filter((n) => n.endsWith('.json'));
  const snapshotText = readFileSync(join(history, kept[0]!), 'utf8');
  const snapshot = JSON.parse(snapshotText) as Snapshot;
  const files = new Map(snapshot.files.map((f) => [f.path, f]));
  // Two records, each read: the escaped name is its own file, not the valid one, and not missing.
  assert.equal(
    { kind: files.get(escaped)?.kind, sha256: files.get(escaped)?.sha256, error: files.get(escaped)?.error },
    { kind: 'file', sha256: sha('HIDDEN=1\n'), error: undefined },
  );
  assert.equal(
    { kind: files.get(valid)?.kind, sha256: files.get(valid)?.sha256 },
    { kind: 'file', sha256: sha('SHOWN=1\n') },
  );
  assert.is(files.get(`${m}/d\udc80`)?.kind, 'directory');
  assert.equal(
    { kind: files.get(inner)?.kind, sha256: files.get(inner)?.sha256 },
    { kind: 'file', sha256: sha('inner\n') },
  );
  assert.is(snapshot.files.filter((f) => f.kind === 'missing').length, 0, JSON.stringify(snapshot.files));
  // The snapshot file writes the escape as JSON's \udcff: the saved form keeps the byte.
  assert.ok(snapshotText.includes('x\\udcff.env'), 'the snapshot spells the escape');
  // Only the engine is a problem: every file was read.
  assert.equal(
    snapshot.problems.map((p) => p.source),
    ['docker'],
    JSON.stringify(snapshot.problems),
  );

  // The report: MA2004 on the unclaimed file (and the file in the ill-named folder), none on the claimed one.
  const reportText = readFileSync(join(out, 'mesh-audit.json'), 'utf8');
  const report = JSON.parse(reportText) as { findings: Finding[] };
  const unclaimed = report.findings
    .filter((f) => f.ruleId === 'MA2004')
    .map((f) => f.subject?.id)
    .sort();
  assert.equal(unclaimed, [`${m}/d\udc80/inner.ini`, escaped].sort());
  assert.ok(reportText.includes('x\\udcff.env'), 'the JSON report names the file by its escaped name');
  // The text view shows the byte as the visible escape `\udcff` (src/shown.ts), never the raw surrogate a
  // terminal would print as U+FFFD, indistinguishable from a valid name holding U+FFFD.
  assert.ok(run.stdout.includes(`MA2004`) && run.stdout.includes(`${m}/x\\udcff.env`), run.stdout);
  assert.not.ok(run.stdout.includes(escaped), 'no raw surrogate in the text view');
  assert.not.ok(run.stdout.includes(`${valid} under managed root`), 'the claimed valid name is not reported');
});

test('a ledger naming files: an escaped name claims the ill-named file; a name of no bytes is not checked, never missing', async () => {
  const base = realpathSync(tempDir('ma-names-', '/tmp'));
  const m = join(base, 'm');
  mkdirSync(m);
  writeFileSync(rawName(m, 'x', [0xff], '.env'), 'HIDDEN=1\n');
  // JSON can carry any UTF-16 string: `\udcff` is how a snapshot writes the byte 0xff; `\ud800` names no bytes.
  const ledger = join(base, 'ledger.json');
  writeFileSync(
    ledger,
    JSON.stringify([
      { id: 'escaped', type: 'file', target: `${m}/x\udcff.env` },
      { id: 'no-bytes', type: 'file', target: `${m}/y\ud800.env` },
      { id: 'decoded', type: 'file', target: `${m}/x\ufffd.env` },
      { id: 'gone', type: 'file', target: `${m}/z\ufffd.env` },
    ]),
  );
  const out = join(base, 'out');
  mkdirSync(out);
  const run = await runCli(
    ['scan', '--docker-host', NO_ENGINE, '--ledger', ledger, '--managed-root', m].concat([
      '--hostname',
      'names',
      '--out',
      out,
      '--format',
      'json',
    ]),
  );
  assert.is(run.code, 3, run.stderr);
  const history = join(out, 'history', 'names');
  const kept = readdirSync(history).filter((n) => n.endsWith('.json'));
  const snapshot = JSON.parse(readFileSync(join(history, kept[0]!), 'utf8')) as Snapshot;
  const files = new Map(snapshot.files.map((f) => [f.path, f]));
  assert.is(files.get(`${m}/x\udcff.env`)?.kind, 'file');
  // The lone high surrogate: which file it means is not known, so it is unknown and said, not missing.
  assert.is(files.get(`${m}/y\ud800.env`)?.kind, 'unknown');
  assert.ok(
    snapshot.problems.some((p) => p.subject === `${m}/y\ud800.env` && p.message.includes('not checked')),
    JSON.stringify(snapshot.problems),
  );
  // The name as a lossy decoder writes it (Docker's and Podman's JSON put U+FFFD for each bad byte of a mount
  // source): the folder holds a name it could stand for, so which file it means is not known — not checked, never
  // `missing` (a declared file reported gone that is there).
  assert.is(files.get(`${m}/x\ufffd.env`)?.kind, 'unknown');
  assert.ok(
    snapshot.problems.some((p) => p.subject === `${m}/x\ufffd.env` && p.message.includes('U+FFFD')),
    JSON.stringify(snapshot.problems),
  );
  // With no such name beside it, a name holding U+FFFD is an ordinary name: missing when it is not there.
  assert.is(files.get(`${m}/z\ufffd.env`)?.kind, 'missing');
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as { findings: Finding[] };
  const about = (path: string) =>
    report.findings.filter((f) => JSON.stringify(f).includes(JSON.stringify(path).slice(1, -1)));
  assert.equal(
    about(`${m}/x\udcff.env`).map((f) => f.ruleId),
    [],
    'claimed by its escaped name: no MA2004',
  );
  assert.equal(
    about(`${m}/y\ud800.env`).map((f) => f.ruleId),
    [],
    'nothing found on what was not read',
  );
});

test.run();
