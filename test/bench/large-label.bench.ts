/*
 * large-label benchmark (issue 46): the CPU time of a whole `mesh-audit scan` (from source) of a private
 * engine holding one created container, with a label of 1 MB of letters (what made the old URL-credential
 * check quadratic) against the same scan with that container's ordinary labels only. Target: <= 1.5x.
 * Each round scans both, recreating the container between them; the figure is the median of the rounds.
 * CPU is the scan process's user + system time (bash's `times`), which a shared machine moves less than
 * wall time.
 *
 * Usage: node dist/test/bench/large-label.bench.js [rounds]
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createWithLabels, engine, removeContainers } from '../docker/engine.js';
import { LiveHost } from '../docker/live-host.js';
import { machineScope } from '../support/machine-scope.js';
import { BIN, ratioFigure, report } from './common.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const MB = 1024 * 1024;

/** CPU ms (user + system) of one scan, from bash's `times` (its children's line). */
function scanCpuMs(args: string[]): { ms: number; code: number } {
  const r = spawnSync('bash', ['-c', '"$@" >/dev/null 2>&1; code=$?; times; exit $code', 'bash', ...args], {
    encoding: 'utf8',
  });
  const children = (r.stdout.trim().split('\n')[1] ?? '').split(/\s+/);
  const seconds = children.map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    if (!m) throw new Error(`times gave ${JSON.stringify(r.stdout)}`);
    return Number(m[1]) * 60 + Number(m[2]);
  });
  return { ms: (seconds[0]! + seconds[1]!) * 1000, code: r.status ?? -1 };
}

function main(): void {
  // This machine's own listeners beyond loopback are left out of scope, as test/uvu-each.mjs
  // does: else every scan has findings, or is incomplete (exit 3), for a reason that is not the label's.
  const foreign = machineScope();
  if (foreign.length > 0)
    process.env['MESH_AUDIT_EXCLUDE'] = [process.env['MESH_AUDIT_EXCLUDE'] ?? '', ...foreign].join(' ').trim();
  const e = engine();
  if (!e) throw new Error('no Docker engine: install docker.io and busybox-static');
  const host = new LiveHost();
  const name = `ma-bench-large-label-${process.pid}`;
  const ordinary = { 'mesh.module': 'app', 'com.example.homepage': 'https://example.org/' };
  const large = { ...ordinary, 'com.example.blob': 'a'.repeat(MB) };
  host.ledger([{ id: 'app.server', type: 'container', target: name }]);
  const scanArgs = (round: number, which: string) => [
    process.execPath,
    BIN,
    ...host.scanArgs(e.dockerHost, 'bench-large-label', join(host.dir, `out-${round}-${which}`)),
  ];
  const without: number[] = [];
  const withLabel: number[] = [];
  const codes = new Set<number>();
  try {
    // Round -1 is a warm-up (file cache, the engine's first answers), not counted.
    for (let round = -1; round < ROUNDS; round++) {
      const cases: [Record<string, string>, number[]][] = [
        [ordinary, without],
        [large, withLabel],
      ];
      for (const [labels, into] of cases) {
        removeContainers(e, [name]);
        createWithLabels(e, host.dir, name, labels);
        const s = scanCpuMs(scanArgs(round, labels === large ? 'large' : 'ordinary'));
        codes.add(s.code);
        if (round >= 0) into.push(s.ms);
      }
    }
  } finally {
    removeContainers(e, [name]);
  }
  if ([...codes].some((c) => c !== 0 && c !== 1)) throw new Error(`a scan ended with exit ${[...codes].join('/')}`);
  report(
    'large-label',
    [
      ratioFigure(
        'scan CPU (user + system), one container with a 1 MiB label of letters',
        withLabel,
        'the same scan, the container with its ordinary labels only',
        without,
        1.5,
        `median of ${ROUNDS} rounds, interleaved; with: ${withLabel.map((ms) => Math.round(ms)).join(', ')} ms; ` +
          `without: ${without.map((ms) => Math.round(ms)).join(', ')} ms; scan exit ${[...codes].join('/')}`,
      ),
    ],
    'a private Docker engine (test/docker/engine.ts) holding one created busybox container; `mesh-audit scan` from source, JSON report.',
  );
}

try {
  main();
  process.exit(0);
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
