/**
 * Start-up: `mesh-audit --version`, and `mesh-audit evaluate` of a tiny snapshot (3 containers,
 * JSON report only), each against `node -e 0` run side by side (interleaved, so the machine's noise
 * falls on both). Median of 15 of each, timed around spawn with process.hrtime. Also what loading
 * dockerode costs a process, as mesh-audit loads it (`loadDockerode`, without the modules of features
 * it never uses: src/collect/docker-deferred.ts) and as a plain `import('dockerode')`, against
 * `node -e 0`: only the commands that talk to an engine pay it, once, when they connect.
 *
 * Usage: node dist/test/bench/startup.bench.js [runs]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeSynthetic, syntheticSnapshot } from './synthetic.js';
import { createRequire } from 'node:module';
import { BIN, report, median, round, timeProcess } from './common.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

const DOCKERODE = createRequire(import.meta.url).resolve('dockerode');
const DOCKER_API = join(PACKAGE_ROOT, 'dist', 'src', 'collect', 'docker-api.js');

const runs = Number(process.argv[2] ?? 15);
const dir = await mkdtemp(join(tmpdir(), 'ma-bench-startup-'));
try {
  const tiny = join(dir, 'tiny.json');
  const tinySnapshot = syntheticSnapshot(3, 5);
  await writeFile(tiny, JSON.stringify(tinySnapshot.snapshot));
  const commands = {
    node: [process.execPath, '-e', '0'],
    version: [process.execPath, BIN, '--version'],
    evaluate: [
      process.execPath,
      BIN,
      'evaluate',
      tiny,
      '--format',
      'json',
      '--out',
      join(dir, 'out'),
      '--fail-on',
      'none',
    ],
    dockerode: [
      process.execPath,
      '--input-type=module',
      '-e',
      `await (await import(${JSON.stringify(DOCKER_API)})).loadDockerode()`,
    ],
    dockerodeWhole: [process.execPath, '--input-type=module', '-e', `await import(${JSON.stringify(DOCKERODE)})`],
  } as const;
  const times: Record<keyof typeof commands, number[]> = {
    node: [],
    version: [],
    evaluate: [],
    dockerode: [],
    dockerodeWhole: [],
  };
  for (const cmd of Object.values(commands)) await timeProcess(cmd[0], cmd.slice(1)); // warm the file cache
  for (let i = 0; i < runs; i++) {
    for (const name of Object.keys(commands) as (keyof typeof commands)[]) {
      const [command, ...args] = commands[name];
      const r = await timeProcess(command, args);
      if (r.code !== 0) throw new Error(`${name} exited ${r.code}: ${r.stderr.slice(-2000)}`);
      times[name].push(r.ms);
    }
  }
  const node = median(times.node);
  const figure = (name: 'version' | 'evaluate' | 'dockerode' | 'dockerodeWhole', label: string) => {
    const value = median(times[name]);
    return {
      label,
      value: round(value, 1),
      unit: 'ms',
      reference: { label: '`node -e 0`', value: round(node, 1) },
      ratio: round(value / node),
      notes: `median of ${runs}, interleaved with the reference`,
    };
  };
  process.stderr.write(
    `startup: node -e 0 ${round(node, 1)} ms, --version ${round(median(times.version), 1)} ms, evaluate ${round(median(times.evaluate), 1)} ms, load dockerode ${round(median(times.dockerode), 1)} ms (whole: ${round(median(times.dockerodeWhole), 1)} ms)\n`,
  );
  const dockerodeCost = round(median(times.dockerode) - node, 1);
  const wholeCost = round(median(times.dockerodeWhole) - node, 1);
  report(
    'startup',
    [
      figure('version', '`mesh-audit --version`'),
      figure('evaluate', '`mesh-audit evaluate` of a 3-container snapshot (JSON report)'),
      {
        ...figure(
          'dockerode',
          '`node` loading dockerode as mesh-audit does (what `scan`/`snapshot`/`premigrate` add when they connect)',
        ),
        notes: `median of ${runs}, interleaved; the load itself costs ${dockerodeCost} ms over \`node -e 0\` (docker-api.js included)`,
      },
      {
        ...figure('dockerodeWhole', '`node` importing all of dockerode (for comparison)'),
        notes: `median of ${runs}, interleaved; the import itself costs ${wholeCost} ms over \`node -e 0\``,
      },
    ],
    `\`evaluate\` reads a ${describeSynthetic({ ...tinySnapshot, history: [] }, 'seed 5')}, with no history, ` +
      "writing JSON only; every command is run from the npm install (node bin/mesh-audit.js) with this process's " +
      'environment, dockerode from node_modules.',
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
