/**
 * The packaged program (`npm run package`, dist/package): the size of the single executable and of
 * the .deb, and the single executable's start-up — `--version` and `evaluate` of a tiny snapshot (3
 * containers, JSON report only) — against `node -e 0` and against the same commands run from the
 * npm install (node bin/mesh-audit.js), interleaved. Median of 15 of each.
 *
 * Usage: npm run package, then node dist/test/bench/package.bench.js [runs]
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeSynthetic, syntheticSnapshot } from './synthetic.js';
import { BIN, ROOT, median, report, round, timeProcess, type Figure } from './common.js';

const runs = Number(process.argv[2] ?? 15);
const pkg = join(ROOT, 'dist', 'package');
const exe = join(pkg, 'mesh-audit-linux-x64');
if (!existsSync(exe)) throw new Error(`${exe} is not built: run \`npm run package\` first`);
const deb = readdirSync(pkg).find((n) => n.endsWith('_amd64.deb'));
const dir = await mkdtemp(join(tmpdir(), 'ma-bench-package-'));
try {
  const tiny = join(dir, 'tiny.json');
  const tinySnapshot = syntheticSnapshot(3, 5);
  await writeFile(tiny, JSON.stringify(tinySnapshot.snapshot));
  const evaluate = (out: string) => [
    'evaluate',
    tiny,
    '--format',
    'json',
    '--out',
    join(dir, out),
    '--fail-on',
    'none',
  ];
  const commands = {
    node: [process.execPath, '-e', '0'],
    exeVersion: [exe, '--version'],
    npmVersion: [process.execPath, BIN, '--version'],
    exeEvaluate: [exe, ...evaluate('exe')],
    npmEvaluate: [process.execPath, BIN, ...evaluate('npm')],
  } as const;
  type Name = keyof typeof commands;
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, [] as number[]])) as Record<Name, number[]>;
  for (const cmd of Object.values(commands)) await timeProcess(cmd[0], cmd.slice(1)); // warm the file cache
  for (let i = 0; i < runs; i++) {
    for (const name of Object.keys(commands) as Name[]) {
      const [command, ...args] = commands[name];
      // An empty environment, as the acceptance runs the executable (no PATH, no NODE_OPTIONS).
      const r = await timeProcess(command, args, { env: {} });
      if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.stderr.slice(-2000)}`);
      times[name].push(r.ms);
    }
  }
  const mib = (bytes: number) => round(bytes / 1024 / 1024, 1);
  const startup = (name: Name, label: string, npm: Name): Figure => ({
    label,
    value: round(median(times[name]), 1),
    unit: 'ms',
    reference: { label: '`node -e 0`', value: round(median(times.node), 1) },
    ratio: round(median(times[name]) / median(times.node)),
    notes: `median of ${runs}, interleaved; the npm install (node bin/mesh-audit.js) ${round(median(times[npm]), 1)} ms`,
  });
  const figures: Figure[] = [
    {
      label: 'single executable `mesh-audit-linux-x64`',
      value: mib(statSync(exe).size),
      unit: 'MiB',
      reference: { label: 'node binary', value: mib(statSync(process.execPath).size) },
      ratio: round(statSync(exe).size / statSync(process.execPath).size),
    },
    ...(deb ? [{ label: `\`${deb}\``, value: mib(statSync(join(pkg, deb)).size), unit: 'MiB' }] : []),
    startup('exeVersion', 'single executable `--version`', 'npmVersion'),
    startup('exeEvaluate', 'single executable `evaluate` of a 3-container snapshot (JSON report)', 'npmEvaluate'),
  ];
  process.stderr.write(`package: ${figures.map((f) => `${f.label} ${f.value} ${f.unit}`).join(', ')}\n`);
  report(
    'package',
    figures,
    `dist/package as \`npm run package\` built it just before; \`evaluate\` reads a ` +
      `${describeSynthetic({ ...tinySnapshot, history: [] }, 'seed 5')}, writing JSON only.`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
