#!/usr/bin/env node
// Runs the compiled benchmarks (dist/test/bench/*.bench.js) in turn as child processes, parses the JSON
// object on each one's last stdout line and writes BENCHMARKS.md whole, from results only: nothing in it
// is edited by hand. `npm run bench` runs them all in one run. Naming some (`node test/bench/run.mjs
// scan`) runs those only: their sections are replaced and every other section is kept as its own run
// wrote it (each section carries its result, its date, its command, the machine and the load average,
// so a file made of several runs says so section by section). `--render` runs nothing and writes the
// file again from the results it carries (after test/bench/PROFILES.md changed). A failing benchmark is listed as failed
// with the tail of its stderr; the run goes on. Exit 1 if any benchmark failed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const benchDir = join(root, 'dist', 'test', 'bench');
const target = join(root, 'BENCHMARKS.md');
// --render: no benchmark runs; BENCHMARKS.md is written again from the results it carries (after
// test/bench/PROFILES.md changed, say).
const renderOnly = process.argv[2] === '--render';
const only = renderOnly ? [] : process.argv.slice(2);

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
  const nproc = out('nproc', []) ?? String(cpus().length);
  return (
    `${nproc} CPUs (nproc), ${model}, ${memory} memory, ${out('uname', ['-sr']) ?? 'unknown'}; ` +
    `Node ${process.version}; ${out(dockerd, ['--version']) ?? 'no Docker engine installed'}`
  );
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const files = existsSync(benchDir)
  ? readdirSync(benchDir)
      .filter((f) => f.endsWith('.bench.js'))
      .sort()
  : [];
const benchOf = (file) => file.replace(/\.bench\.js$/, '');
const selected = renderOnly ? [] : only.length > 0 ? files.filter((f) => only.includes(benchOf(f))) : files;
if (!renderOnly && (selected.length === 0 || selected.length < only.length)) {
  console.error(
    `no such benchmark in ${benchDir}: ${only.join(', ') || '(none built)'} (known: ${files.map(benchOf).join(', ')}; run \`npm run -s build\` first)`,
  );
  process.exit(1);
}
const command = only.length > 0 ? `node test/bench/run.mjs ${only.join(' ')}` : 'npm run bench';
const runStarted = new Date().toISOString();
const where = machine();
if (!existsSync(join(benchDir, 'render.js'))) {
  console.error(`${benchDir}/render.js is missing: run \`npm run -s build\` first`);
  process.exit(1);
}
const { parseSections, renderBenchmarks } = await import(pathToFileURL(join(benchDir, 'render.js')).href);
const sections = existsSync(target) ? parseSections(readFileSync(target, 'utf8')) : new Map();
for (const file of selected) {
  const started = Date.now();
  const loadBefore = load();
  console.error(`bench: ${file} …`);
  // Node 20's WebSocket (the serve bench asks serve's inspector for its heap: test/bench/common.ts) is behind a flag.
  const flags = Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-websocket'] : [];
  const r = spawnSync(process.execPath, [...flags, join(benchDir, file)], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
    // The scan benchmark lays out 2,000 containers: over 30 min on a loaded 2-core machine.
    timeout: 60 * 60_000,
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
  sections.set(benchOf(file), {
    bench: benchOf(file),
    file,
    seconds,
    started: new Date(started).toISOString(),
    run: { command, started: runStarted },
    machine: where,
    load: `${loadBefore} → ${load()}`,
    result: parsed,
    failure: parsed ? null : why,
    stderrTail: parsed ? '' : stderrTail,
  });
  console.error(`bench: ${file} ${parsed ? 'done' : 'FAILED (' + why + ')'} in ${seconds} s`);
}

// Every benchmark there is, in order; one whose section no run has written yet says so.
const profiles = join(root, 'test', 'bench', 'PROFILES.md');
writeFileSync(
  target,
  renderBenchmarks(files.map(benchOf), sections, existsSync(profiles) ? readFileSync(profiles, 'utf8') : null),
);
const failed = selected.filter((f) => !sections.get(benchOf(f))?.result);
console.error(`bench: wrote BENCHMARKS.md (${failed.length} failed)`);
process.exit(failed.length === 0 ? 0 : 1);
