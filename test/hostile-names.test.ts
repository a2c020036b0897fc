import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { acquireIo } from '../src/cli/acquire.js';
import { main } from '../src/cli/main.js';
import { SHOWN_BOUND } from '../src/shown.js';
import { example, FIXED_NOW, runCli, spawnCli, tempDir } from './support/cli.js';

/*
 * What a host controls cannot forge a line, clear the terminal, plant a link or break a table on its way to a
 * person (src/shown.ts), and a 100k-character value is not printed or sent whole. The demo host's snapshot,
 * with a forging string in a container's name and its mesh.module / mesh.resource labels, a ledger entry's id,
 * target and module, a managed-root file's path and a problem's message, is rendered by the real CLI as text
 * (scan report and premigrate), as Markdown (premigrate) and as stderr.
 */

const FORGE =
  '\n[FAKE] 0 findings, clean\r\u001b[2J\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007' +
  '|x|`<script>alert(1)</script>](javascript:alert(1))\u202eabc\u2066\u009b\u007f';

type Snap = {
  containers: { name: string; labels: Record<string, string> }[];
  ledger: { entries: unknown[] };
  files: { path: string; inode: number }[];
  problems: unknown[];
};

/** The demo snapshot with `value` planted in every host-controlled string a report names. */
function hostileSnapshot(value: string, dir = tempDir()): string {
  const snap = JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')) as Snap;
  const shell = snap.containers.find((c) => c.name === 'debug-shell')!;
  shell.name = `debug${value}`;
  shell.labels = { 'mesh.module': `mod${value}`, 'mesh.resource': `res${value}` };
  snap.ledger.entries.push({
    line: 99,
    valid: true,
    errors: [],
    entry: {
      id: `id${value}`,
      type: 'file',
      target: `/etc/mesh/t${value}`,
      origin: 'declared',
      module: `m${value}`,
      digest: `sha256:${'0'.repeat(64)}`,
      applied_at: '2026-09-13T09:30:00Z',
    },
  });
  const file = { ...snap.files.find((f) => f.path === '/etc/mesh/gitea/app.ini')! };
  snap.files.push({ ...file, path: `/etc/mesh/f${value}`, inode: 9999 });
  snap.problems.push({ source: 'files', subject: `/etc/mesh/p${value}`, message: `/etc/mesh/p${value}: not read` });
  const path = join(dir, 'snapshot.json');
  writeFileSync(path, JSON.stringify(snap));
  return path;
}

/** A raw control (every one but the line breaks the tool writes), DEL, C1, or a bidi or invisible character. */
// eslint-disable-next-line no-control-regex -- control characters are what is looked for
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

function assertNothingForged(text: string, what: string, planted = true): void {
  const raw = RAW.exec(text);
  assert.is(raw, null, `${what}: raw U+${raw?.[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${raw?.index}`);
  assert.not.match(text, /^\s*\[FAKE\]/m, `${what}: a forged line`);
  if (planted) assert.ok(text.includes('[FAKE]'), `${what}: the planted value is shown at all`);
}

test('the scan report as text (the real bin/mesh-audit.js): no raw control, no forged line; stderr neither', () => {
  const snap = hostileSnapshot(FORGE);
  const r = spawnCli(['evaluate', snap, '--out', '-', '--format', 'text']);
  assert.is(r.code, 3, r.stderr);
  assertNothingForged(r.stdout, 'text report');
  // The planted name is shown escaped, whole and recognisable.
  assert.ok(r.stdout.includes('container debug\\n[FAKE] 0 findings, clean\\r\\x1b[2J\\x1b]8;;'), r.stdout);
  assert.ok(r.stdout.includes('\\u202eabc\\u2066\\x9b\\x7f'));
  const json = spawnCli(['evaluate', snap, '--out', '-', '--format', 'json']);
  assert.ok(json.stdout.includes(JSON.stringify(`debug${FORGE}`).slice(1, -1)), 'the JSON keeps the name whole');
  assert.match(json.stderr, 'INCOMPLETE');
  assertNothingForged(json.stderr, 'stderr');
});

test('a snapshot refused for a key it should not have: the key is shown escaped in the error, exit 2', async () => {
  const snap = JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')) as Record<string, unknown>;
  const containers = snap['containers'] as Record<string, unknown>[];
  containers[0]![`stray${FORGE}`] = true;
  const path = join(tempDir(), 'snapshot.json');
  writeFileSync(path, JSON.stringify(snap));
  const r = await runCli(['evaluate', path, '--out', tempDir()]);
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /not a valid mesh-audit\/snapshot@2/);
  assertNothingForged(r.stderr, 'the refusal on stderr');
});

test('the scan report in colour: the tool paints around the escaped value, the value paints nothing', async () => {
  let stdout = '';
  await main(['node', 'mesh-audit', 'evaluate', hostileSnapshot(FORGE), '--out', '-', '--format', 'text'], {
    now: () => FIXED_NOW,
    stdout: (t) => void (stdout += t),
    stderr: () => undefined,
    color: true,
    interactive: false,
  });
  const sgr = (inner: string) => new RegExp(`\u001b\\[${inner}m`, 'g');
  assert.match(stdout, new RegExp(`${sgr('33').source}warning *${sgr('39').source}`), 'painted');
  // The only ESC a coloured view holds is the tool's own SGR: without those, nothing raw remains.
  assertNothingForged(stdout.replace(sgr('\\d+'), ''), 'coloured text report');
});

test('premigrate as text and as Markdown: no raw control, no forged line, every table row keeps its columns', async () => {
  const snap = hostileSnapshot(FORGE);
  const text = await runCli(['premigrate', '--snapshot', snap, '--format', 'text', '--out', '-']);
  assertNothingForged(text.stdout, 'premigrate text');
  assertNothingForged(text.stderr, 'premigrate stderr', false);
  const md = await runCli(['premigrate', '--snapshot', snap, '--format', 'md', '--out', '-']);
  assertMarkdownHolds(md.stdout, 'premigrate md', 6);
});

test('the scan report as Markdown (evaluate --format md): no raw control, no markup, every row keeps its columns', () => {
  const md = spawnCli(['evaluate', hostileSnapshot(FORGE), '--format', 'md', '--out', '-']);
  assert.is(md.code, 3, md.stderr);
  assertMarkdownHolds(md.stdout, 'evaluate md', 2);
  // The host's problem is said as what was not checked, escaped.
  assert.match(md.stdout, /^### INCOMPLETE: not checked \(\d+\)$/m);
  // Shown (`\n` for the newline), then its backslashes and brackets escaped for Markdown.
  assert.ok(md.stdout.includes('/etc/mesh/p\\\\n\\[FAKE\\] 0 findings, clean\\\\r\\\\x1b'), md.stdout);
});

/**
 * Markdown over the hostile values: nothing forged; outside code (where Markdown reads nothing) no HTML and no link;
 * every table row with as many cells as its header (GFM: a row's cells end at each `|` no backslash escapes).
 */
function assertMarkdownHolds(md: string, what: string, leastRows: number): void {
  assertNothingForged(md, what);
  const prose = outsideCode(md);
  assert.not.match(prose, /(?<!\\)<script>/, `${what}: HTML written raw`);
  assert.not.match(prose, /(?<!\\)\]\(javascript:/, `${what}: a link written raw`);
  assert.ok(prose.includes('\\<script\\>'), `${what}: the HTML is shown, escaped`);
  const lines = md.split('\n');
  const cells = (row: string) => row.split(/(?<!\\)\|/).length;
  let rows = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('|')) continue;
    let header = i;
    while (header > 0 && lines[header - 1]!.startsWith('|')) header--;
    assert.is(cells(lines[i]!), cells(lines[header]!), `${what}, row ${i + 1}: ${lines[i]}`);
    if (lines[i]!.includes('FAKE')) rows++;
  }
  assert.ok(rows >= leastRows, `${what}: the hostile rows are in the tables (${rows})`);
}

test('diff of two reports, as text: the new findings about the planted names are shown escaped', async () => {
  const dir = tempDir();
  const report = async (snap: string, name: string) => {
    const r = await runCli(['evaluate', snap, '--out', '-', '--format', 'json']);
    writeFileSync(join(dir, name), r.stdout);
    return join(dir, name);
  };
  const older = await report(example('demo', 'snapshot.json'), 'old.json');
  const newer = await report(hostileSnapshot(FORGE, dir), 'new.json');
  const r = await runCli(['diff', older, newer]);
  assert.is(r.code, 0, r.stderr);
  assertNothingForged(r.stdout, 'diff');
});

test("a live scan's problems and notes on stderr (src/cli/acquire.ts): shown escaped, one line each", () => {
  let stderr = '';
  const io = acquireIo({
    now: () => FIXED_NOW,
    stdout: () => undefined,
    stderr: (t) => void (stderr += t),
    color: false,
    interactive: false,
  });
  io.problem(`/etc/mesh/p${FORGE}: not read`);
  io.note(`kept snapshot history/h${FORGE}/s.json`);
  assertNothingForged(stderr, 'stderr');
  assert.is(stderr.split('\n').length, 3, stderr);
});

/** Markdown without its fenced blocks and code spans (a span ends at the next run of as many backticks). */
function outsideCode(md: string): string {
  const text = md.replace(/^```[a-z]*\n[\s\S]*?\n```$/gm, '');
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '`' || text[i - 1] === '\\') {
      out += text[i]!;
      continue;
    }
    const fence = /^`+/.exec(text.slice(i))![0];
    const close = new RegExp(`(?<!\`)${fence}(?!\`)`, 'g');
    close.lastIndex = i + fence.length;
    const end = close.exec(text);
    assert.ok(end, `a code span that does not end: ${text.slice(i, i + 80)}`);
    i = end.index + fence.length - 1;
  }
  return out;
}

/** A loopback stand-in for Alertmanager that keeps what it is sent. */
async function receiver(): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

test(`a 100k-character id is shown cut to ${SHOWN_BOUND} characters in text and in the Alertmanager body`, async () => {
  const dir = tempDir();
  const snap = hostileSnapshot('y'.repeat(100_000), dir);
  const text = await runCli(['evaluate', snap, '--out', '-', '--format', 'text']);
  assert.ok(text.stdout.length < 40_000, `text report of ${text.stdout.length} characters`);
  assert.match(text.stdout, /container debugy+… \(100005 characters, sha256:[0-9a-f]{12}\)/);
  for (const line of text.stdout.split('\n')) assert.ok(line.length < 4_200, `a line of ${line.length}`);

  const am = await receiver();
  try {
    const r = await runCli(
      ['evaluate', snap, '--out', join(dir, 'reports'), '--format', 'json,prom', '--alertmanager', am.url],
      new Date('2026-09-24T04:00:00Z'),
    );
    assert.is(r.code, 3, r.stderr);
    assert.is(am.bodies.length, 1, r.stderr);
    const body = am.bodies[0]!;
    const alerts = JSON.parse(body) as { labels: Record<string, string>; annotations: Record<string, string> }[];
    assert.ok(body.length < 200_000, `an Alertmanager body of ${body.length} characters for ${alerts.length} alerts`);
    for (const a of alerts) for (const v of Object.values(a.labels)) assert.ok(v.length <= SHOWN_BOUND, v);
    // The unclaimed container's alerts are grouped by its mesh.resource label, 100003 characters long.
    const stray = alerts.find((a) => a.labels['resource']?.startsWith('resy'));
    assert.match(stray!.labels['resource']!, /^resy+… \(100003 characters, sha256:[0-9a-f]{12}\)$/);
    assert.ok(stray!.annotations['subject']!.length <= SHOWN_BOUND);
    const prom = readFileSync(join(dir, 'reports', 'mesh-audit.prom'), 'utf8');
    assert.ok(prom.length < 100_000);
  } finally {
    am.server.close();
  }
});

test('a 100k-character host name with controls: cut and escaped in the text header and the Prometheus host label', async () => {
  const dir = tempDir();
  const snap = JSON.parse(readFileSync(example('demo', 'snapshot.json'), 'utf8')) as { host: { hostname: string } };
  snap.host.hostname = `h${'y'.repeat(100_000)}${FORGE}`;
  writeFileSync(join(dir, 's.json'), JSON.stringify(snap));
  const r = await runCli(['evaluate', join(dir, 's.json'), '--out', join(dir, 'reports'), '--format', 'text,prom']);
  assertNothingForged(r.stdout, 'text report', false);
  const characters = 1 + 100_000 + [...FORGE].length;
  assert.match(r.stdout, new RegExp(`^hy+… \\(${characters} characters, sha256:[0-9a-f]{12}\\)  snapshot `, 'm'));
  const prom = readFileSync(join(dir, 'reports', 'mesh-audit.prom'), 'utf8');
  assertNothingForged(prom, 'Prometheus textfile', false);
  const hosts = [...prom.matchAll(/host="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
  assert.ok(hosts.length > 10);
  // The label is the shown host (at most SHOWN_BOUND), written with the exposition format's own escapes.
  for (const h of hosts) assert.ok(h.replace(/\\(.)/g, '$1').length <= SHOWN_BOUND, `a host label of ${h.length}`);
});

test.run();
