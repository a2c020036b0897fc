#!/usr/bin/env node
// Runs every compiled benchmark (dist/test/bench/*.bench.js) in turn as a child process, parses the
// JSON object on its last stdout line and rewrites BENCHMARKS.md. A failing benchmark is listed as
// failed with the tail of its stderr; the run goes on. Exit 1 if any benchmark failed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const benchDir = join(root, 'dist', 'test', 'bench');
const only = process.argv.slice(2);

function out(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function machine() {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) model = line.split(':').slice(1).join(':').trim();
  } catch {
    // no /proc/cpuinfo: the model stays as os.cpus() gave it
  }
  let memory = `${(totalmem() / 2 ** 30).toFixed(1)} GiB`;
  try {
    const kb = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]);
    if (kb) memory = `${(kb / 2 ** 20).toFixed(1)} GiB`;
  } catch {
    // no /proc/meminfo: os.totalmem() stands
  }
  const dockerd = existsSync('/usr/sbin/dockerd')
    ? '/usr/sbin/dockerd'
    : existsSync('/usr/bin/dockerd')
      ? '/usr/bin/dockerd'
      : 'dockerd';
  return {
    nproc: out('nproc', []) ?? String(cpus().length),
    cpu: model,
    memory,
    node: process.version,
    engine: out(dockerd, ['--version']) ?? 'not installed',
    kernel: out('uname', ['-sr']) ?? 'unknown',
  };
}

function cell(v) {
  if (v === undefined || v === null || v === '') return '';
  if (typeof v === 'boolean') return v ? 'yes' : '**no**';
  return String(v).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

const files = existsSync(benchDir)
  ? readdirSync(benchDir)
      .filter((f) => f.endsWith('.bench.js'))
      .sort()
  : [];
const selected = only.length > 0 ? files.filter((f) => only.some((o) => f.startsWith(o))) : files;
if (selected.length === 0) {
  console.error(`no benchmarks in ${benchDir} (run \`npm run -s build\` first)`);
  process.exit(1);
}
const results = [];
for (const file of selected) {
  const started = Date.now();
  console.error(`bench: ${file} …`);
  const r = spawnSync(process.execPath, [join(benchDir, file)], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
    timeout: 30 * 60_000,
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const lines = (r.stdout ?? '').trim().split('\n');
  let parsed = null;
  let why = r.error ? String(r.error.message) : r.status !== 0 ? `exit ${r.status ?? r.signal}` : '';
  if (!why) {
    try {
      const last = JSON.parse(lines[lines.length - 1] ?? '');
      if (typeof last?.name !== 'string' || !Array.isArray(last?.figures)) throw new Error('not {name, figures}');
      parsed = last;
    } catch (error) {
      why = `last stdout line is not the result object (${error.message})`;
    }
  }
  const stderrTail = (r.stderr ?? '').trim().split('\n').slice(-15).join('\n');
  results.push({ file, seconds, result: parsed, failure: parsed ? null : why, stderrTail });
  console.error(`bench: ${file} ${parsed ? 'done' : 'FAILED (' + why + ')'} in ${seconds} s`);
}

const m = machine();
const now = new Date();
const md = [];
md.push('# Benchmarks', '');
md.push('Written by `npm run bench` (test/bench/run.mjs); do not edit by hand — rerun it.', '');
md.push(`- Date: ${now.toISOString()}`);
md.push('- Command: `npm run bench`');
md.push(`- Machine: ${m.nproc} CPUs (nproc), ${m.cpu}, ${m.memory} memory, ${m.kernel}`);
md.push(`- Node: ${m.node}`);
md.push(`- Docker engine: ${m.engine} (a private dockerd started by test/docker/engine-harness.sh)`);
md.push('');
md.push('| benchmark | status | figures met | wall time |', '|---|---|---|---|');
for (const r of results) {
  const name = r.result?.name ?? r.file.replace(/\.bench\.js$/, '');
  const targeted = r.result ? r.result.figures.filter((f) => typeof f.met === 'boolean') : [];
  const met = targeted.filter((f) => f.met).length;
  md.push(
    `| ${cell(name)} | ${r.result ? 'ok' : '**failed**'} | ${r.result ? `${met}/${targeted.length}` : ''} | ${r.seconds} s |`,
  );
}
md.push('');
for (const r of results) {
  const name = r.result?.name ?? r.file.replace(/\.bench\.js$/, '');
  md.push(`## ${name}`, '', `\`${r.file}\`, ${r.seconds} s.`, '');
  if (!r.result) {
    md.push(`**Failed**: ${cell(r.failure)}`, '', 'stderr (tail):', '', '```', r.stderrTail || '(empty)', '```', '');
    continue;
  }
  md.push('| figure | value | reference | ratio | target | met |', '|---|---|---|---|---|---|');
  const notes = [];
  for (const f of r.result.figures) {
    const ref = f.reference ? `${cell(f.reference.value)} ${cell(f.unit)} (${cell(f.reference.label)})` : '';
    md.push(
      `| ${cell(f.label)} | ${cell(f.value)} ${cell(f.unit)} | ${ref} | ${f.ratio !== undefined ? cell(f.ratio) + 'x' : ''} | ${cell(f.target)} | ${cell(f.met)} |`,
    );
    if (f.notes) notes.push(`- ${f.label}: ${f.notes}`);
  }
  md.push('');
  if (notes.length > 0) md.push('Notes:', '', ...notes, '');
}
// What the profiles said about these figures (kept by hand beside the benchmarks).
const profiles = join(root, 'test', 'bench', 'PROFILES.md');
if (existsSync(profiles)) md.push(readFileSync(profiles, 'utf8').trim(), '');
writeFileSync(join(root, 'BENCHMARKS.md'), md.join('\n'));
console.error(`bench: wrote BENCHMARKS.md (${results.filter((r) => !r.result).length} failed)`);
process.exit(results.every((r) => r.result) ? 0 : 1);
