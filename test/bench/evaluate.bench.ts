/**
 * Evaluation alone: the shipped pack is loaded once, then buildSubjects + evaluate (auditSnapshots)
 * and both machine writers (renderSarif, renderJson) on a synthetic snapshot of 1,000, 10,000 and
 * 50,000 real-shaped containers (test/bench/synthetic.ts: 15–40 env keys, 6–14 labels, with the images,
 * daemon settings, networks, volumes and host sockets a scan records beside them). Each size runs
 * in its own child process so that its peak RSS (process.resourceUsage().maxRSS) is its own. The parent
 * generates the snapshot and writes it to a file; the child reads and parses it (as `evaluate` would),
 * then times, each run on a copy of its own parsed before the clock starts, from a collected heap.
 *
 * Reference, measured just before the evaluation, in a fresh child of its own (nothing else in its
 * heap): JSON.parse of the same snapshot's text. Parsing is the least any evaluation of a saved
 * snapshot has to do, so the ratio says how many "parses" the evaluation costs, and it moves with the
 * machine the way the evaluation does. Peak memory of `mesh-audit evaluate` at 10,000 and 50,000 is
 * set against a fresh node that reads the same file and parses it once.
 *
 * Usage: node dist/test/bench/evaluate.bench.js [sizes…]   (child modes: --child FILE N RUNS, --parse FILE RUNS)
 */
import { constants } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { auditSnapshots } from '../../src/pipeline.js';
import { loadPolicies } from '../../src/policy/load.js';
import { renderJson } from '../../src/report/json.js';
import { renderSarif } from '../../src/report/sarif.js';
import { describeSynthetic, syntheticSnapshot, type Synthetic } from './synthetic.js';
import { report, linearFit, median, round, type Figure } from './common.js';

interface ParseResult {
  parseMs: number[];
  /** Peak RSS of a fresh node once it has read the text and parsed it once. */
  maxRssMB: number;
  textMB: number;
}

/**
 * Each timed run on both sides starts from a collected heap (the children run with --expose-gc): the garbage
 * of the run before is not collected during the next one, as it is not in `mesh-audit evaluate`, which
 * evaluates once.
 */
const collectGarbage = (): void => (globalThis as { gc?: () => void }).gc?.();

/** The reference: JSON.parse of the file's text, `runs` times, in a process that does nothing else. */
async function parseChild(file: string, runs: number): Promise<ParseResult> {
  const text = await readFile(file, 'utf8');
  const parseMs: number[] = [];
  let maxRssMB = 0;
  for (let i = 0; i < runs; i++) {
    collectGarbage();
    const t = process.hrtime.bigint();
    const parsed: unknown = JSON.parse(text);
    parseMs.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (i === 0) maxRssMB = process.resourceUsage().maxRSS / 1024;
    if (parsed === null) throw new Error('empty snapshot');
  }
  return { parseMs, maxRssMB, textMB: Buffer.byteLength(text) / 1024 / 1024 };
}

function spawnChild(args: string[]): unknown {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=8192', fileURLToPath(import.meta.url), ...args],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

interface ChildResult {
  size: number;
  runs: number;
  ms: number[];
  parseMs: number[];
  findings: number;
  maxRssMB: number;
  /** V8 heap in use once the snapshot is loaded, before any evaluation. */
  snapshotHeapMB: number;
  snapshotTextMB: number;
}

async function child(file: string, size: number, runs: number): Promise<ChildResult> {
  const rules = (await loadPolicies()).flatMap((p) => p.rules);
  const text = await readFile(file, 'utf8');
  // The snapshot as `evaluate` holds it: parsed from the file the parent wrote.
  let { snapshot, history } = JSON.parse(text) as Synthetic;
  collectGarbage();
  const snapshotHeapMB = process.memoryUsage().heapUsed / 1024 / 1024;
  const now = new Date('2026-09-24T03:05:00Z');
  const ms: number[] = [];
  let findings = 0;
  for (let i = 0; i < runs; i++) {
    // A fresh copy per run, parsed before the clock starts: what the evaluation remembers of a snapshot it
    // has seen (facts/history.ts and facts/env-readings.ts keep work per snapshot object) is not carried to
    // the next run, which pays for all of it as `mesh-audit evaluate` does.
    if (i > 0) ({ snapshot, history } = JSON.parse(text) as Synthetic);
    collectGarbage();
    const t = process.hrtime.bigint();
    const report = auditSnapshots([snapshot], history, rules, { now });
    const sarif = renderSarif(report);
    const json = renderJson(report);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    findings = report.evaluations[0]!.findings.length;
    if (sarif.length === 0 || json.length === 0) throw new Error('empty report');
  }
  // Peak RSS: the snapshot, its evaluations and their reports.
  const maxRssMB = process.resourceUsage().maxRSS / 1024;
  return { size, runs, ms, parseMs: [], findings, maxRssMB, snapshotHeapMB, snapshotTextMB: 0 };
}

interface CliResult {
  ms: number;
  maxRssMB: number;
  code: number;
}

/**
 * The command a user runs, on the same snapshot: `mesh-audit evaluate FILE --history DIR` writing
 * SARIF and JSON, with its own peak RSS (getrusage, through rss-probe.js).
 */
async function runCli(dir: string, file: string, historyDir: string): Promise<CliResult> {
  const probe = join(dir, 'rss.txt');
  const started = process.hrtime.bigint();
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'rss-probe.js')).href,
      join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'),
      'evaluate',
      file,
      '--history',
      historyDir,
      '--out',
      join(dir, 'out'),
      '--format',
      'sarif,json',
      '--fail-on',
      'none',
    ],
    { encoding: 'utf8', env: { ...process.env, MA_RSS_PROBE: probe }, maxBuffer: 64 * 1024 * 1024 },
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0 && r.status !== 3)
    throw new Error(`mesh-audit evaluate failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return { ms, maxRssMB: Number(await readFile(probe, 'utf8')) / 1024, code: r.status };
}

async function runChild(
  dir: string,
  size: number,
  runs: number,
  withCli = false,
): Promise<ChildResult & { cli?: CliResult & { parseRssMB: number }; fixture: string }> {
  const file = join(dir, `snapshot-${size}.json`);
  const synthetic = syntheticSnapshot(size, 7);
  const { snapshot, history } = synthetic;
  await writeFile(file, JSON.stringify({ snapshot, history }));
  // The reference first, in a fresh process: nothing of the evaluation in its heap or its caches.
  const parse = spawnChild(['--parse', file, String(runs)]) as ParseResult;
  const result = spawnChild(['--child', file, String(size), String(runs)]) as ChildResult;
  let cli: (CliResult & { parseRssMB: number }) | undefined;
  if (withCli) {
    const alone = join(dir, `snapshot-${size}-alone.json`);
    const historyDir = join(dir, `history-${size}`);
    await writeFile(alone, JSON.stringify(snapshot));
    await mkdir(historyDir, { recursive: true });
    await Promise.all(history.map((h, i) => writeFile(join(historyDir, `snapshot-${i}.json`), JSON.stringify(h))));
    const parseAlone = spawnChild(['--parse', alone, '1']) as ParseResult;
    cli = { ...(await runCli(dir, alone, historyDir)), parseRssMB: parseAlone.maxRssMB };
    await rm(alone, { force: true });
    await rm(historyDir, { recursive: true, force: true });
  }
  await rm(file, { force: true });
  return {
    ...result,
    parseMs: parse.parseMs,
    snapshotTextMB: parse.textMB,
    ...(cli ? { cli } : {}),
    fixture: describeSynthetic(synthetic, 'seed 7'),
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    process.stdout.write(JSON.stringify(await child(args[1]!, Number(args[2]), Number(args[3]))) + '\n');
    return;
  }
  if (args[0] === '--parse') {
    process.stdout.write(JSON.stringify(await parseChild(args[1]!, Number(args[2]))) + '\n');
    return;
  }
  const sizes = args.length > 0 ? args.map(Number) : [1000, 10000, 30000, 50000];
  const dir = await mkdtemp(join(tmpdir(), 'ma-bench-evaluate-'));
  const results: Array<ChildResult & { cli?: CliResult & { parseRssMB: number }; fixture: string }> = [];
  const beyond: { size: number; expectedMB: number }[] = [];
  try {
    for (const size of sizes) {
      // A snapshot whose JSON is longer than V8's longest string cannot be read by JSON.parse, nor by
      // `evaluate`: said (from the size of the last one, which grows linearly), not attempted.
      const last = results.at(-1);
      const expectedMB = last ? (last.snapshotTextMB * size) / last.size : 0;
      if (expectedMB * 1024 * 1024 > constants.MAX_STRING_LENGTH) {
        beyond.push({ size, expectedMB });
        continue;
      }
      // 10,000 is the target's size: five runs a side, as this machine's figures move ±15% from run to run.
      results.push(await runChild(dir, size, size >= 30000 ? 1 : 5, size >= 10000));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  for (const r of results) {
    process.stderr.write(
      `evaluate ${r.size}: median ${round(median(r.ms))} ms (runs ${r.ms.map((m) => round(m, 0)).join(', ')}), JSON.parse ${round(median(r.parseMs))} ms, ${r.findings} findings, max RSS ${round(r.maxRssMB, 0)} MB (snapshot: ${round(r.snapshotTextMB, 0)} MB of JSON, ${round(r.snapshotHeapMB, 0)} MB of heap)\n`,
    );
  }
  const figures: Figure[] = results.map((r) => {
    const value = median(r.ms);
    const parse = median(r.parseMs);
    return {
      label: `evaluate ${r.size.toLocaleString('en')} containers (subjects + rules + SARIF + JSON)`,
      value: round(value),
      unit: 'ms',
      reference: { label: 'JSON.parse of the same snapshot, measured before in a fresh process', value: round(parse) },
      ratio: round(value / parse),
      ...(r.size === 10000 ? { target: '≤ 2.0x', met: value / parse <= 2 } : {}),
      notes: `median of ${r.runs}; ${r.findings} findings; ${round(r.snapshotTextMB, 0)} MB snapshot`,
    };
  });
  if (results.length >= 2) {
    const fit = linearFit(results.map((r) => ({ x: r.size / 1000, y: median(r.ms) })));
    const first = results[0]!;
    const last = results.at(-1)!;
    const perK = (r: ChildResult) => median(r.ms) / (r.size / 1000);
    const drift = perK(last) / perK(first);
    figures.push({
      label: 'slope (least squares over the sizes)',
      value: round(fit.slope),
      unit: 'ms per 1,000 containers',
      target: 'linear',
      met: fit.r2 > 0.98 && drift < 2,
      notes: `r² ${round(fit.r2, 4)}; ms per 1,000 at ${last.size.toLocaleString('en')} / at ${first.size.toLocaleString('en')} = ${round(drift)}`,
    });
  }
  for (const r of results) {
    if (!r.cli) continue;
    const cli = r.cli;
    figures.push({
      label: `peak RSS, ${r.size.toLocaleString('en')} containers: \`mesh-audit evaluate\` (SARIF + JSON written)`,
      value: round(cli.maxRssMB, 0),
      unit: 'MB',
      reference: {
        label: 'a fresh node reading the same snapshot file and parsing it once',
        value: round(cli.parseRssMB, 0),
      },
      ratio: round(cli.maxRssMB / cli.parseRssMB),
      notes:
        `maxRSS (getrusage) of each process; the command took ${round(cli.ms / 1000, 1)} s, exit ${cli.code}; the snapshot is ` +
        `${round(r.snapshotTextMB, 0)} MB of JSON (with the history the in-process runs read) and ` +
        `${round(r.snapshotHeapMB, 0)} MB of V8 heap once parsed; the in-process runs above peaked at ${round(r.maxRssMB, 0)} MB ` +
        `(${r.runs} evaluations in a row)`,
    });
  }
  for (const b of beyond)
    figures.push({
      label: `evaluate ${b.size.toLocaleString('en')} containers`,
      value: round(b.expectedMB, 0),
      unit: 'MB of snapshot JSON (not run)',
      notes:
        `not measurable: a snapshot of ${b.size.toLocaleString('en')} real-shaped containers is ~${round(b.expectedMB, 0)} MB of JSON ` +
        `(linear from the last size), beyond V8's longest string (${round(constants.MAX_STRING_LENGTH / 2 ** 20, 0)} MiB): ` +
        `JSON.parse cannot read it, and neither can \`mesh-audit evaluate\` (a snapshot is one JSON document)`,
    });
  const target = results.find((r) => r.size === 10000) ?? results.at(-1);
  report(
    'evaluate',
    figures,
    target &&
      `at ${target.size.toLocaleString('en')}, a ${target.fixture}; the other sizes from the same generator. Each size ` +
        'is written to a file, then read and parsed by a child process of its own, which evaluates it with the ' +
        'shipped pack (policies/mesh-core) and renders SARIF and JSON; the reference parses the same text in a ' +
        'fresh child first.',
  );
}

await main();
