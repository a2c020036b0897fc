import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { parseEnvBytes, readLiteral, type RawEnvBytesEntry } from '../../src/collect/envfile.js';
import { tempDir } from '../support/cli.js';
import { forEachEngine, removeContainers, type Engine } from './engine.js';
import { LiveHost } from './live-host.js';

/*
 * Issue 24, item 1, on the real tools: one env file given to containers through `docker run
 * --env-file` (on Podman: `podman run --env-file`, Podman's own CLI, which parses the file itself) and
 * through Debian's docker-compose 1.29 (`env_file:`, `network_mode: none`: no network is made). For
 * every line, the scanner's reading for that consumer (src/collect/envfile.ts) must give what the
 * container really holds (inspect Config.Env); a scan of the containers against the unchanged file has
 * no finding; one value changed inside its quotes gives exactly one MA1001 on each container.
 *
 * Every case runs on both engines, Compose included: docker-compose 1.29 creates its container through
 * Podman's Docker-compatible API as through Docker's (measured: same Config.Env, but for the keys
 * Podman adds itself and a bare `KEY`, which Podman drops where Docker keeps it).
 * Lines Docker's CLI refuses (`export K=v`, `K = v`: a blank in a key) cannot be in a file given to
 * `docker run --env-file` (it refuses the whole file): they are in a second file that only the Compose
 * container is made from.
 */

const CALLER = { PASS_SET: 'from-the-caller' } as const;
/** The shared file: each line one case; CR LF line ends, a BOM, the last line without a line end. */
const CORPUS_LINES = [
  '\uFEFFPLAIN=value', // a BOM before the first key
  'DQ="quoted value"',
  "SQ='single'",
  'BQ=`back tick`',
  String.raw`DQ_ESC="a\nb\tc\"d\\e\$f"`,
  String.raw`SQ_ESC='it\'s \\ \n'`,
  String.raw`UNQ_ESC=a\nb`,
  'C=x # not a comment',
  'C_TIGHT=x#y',
  'C_DQ="x" # after quotes',
  "C_SQ='x'  # after single quotes",
  'T=trail  ',
  'T_TAB=tab\t',
  '   LEAD=key after blanks',
  '\tLEAD_TAB=key after a tab',
  'LV=   value after blanks',
  'EQ=a=b=c',
  'EQ_DQ="a=b"',
  'EMPTY=',
  'EMPTY_DQ=""',
  "EMPTY_SQ=''",
  'BLANKS_ONLY=   ',
  'PASS_UNSET', // no `=`, not set where the tool runs
  'PASS_SET', // no `=`, set where the tool runs
  'UNI=café ünï 日本',
  'UNI_DQ="naïve"',
  'ML="first', // a double-quoted value over two lines
  'second"',
  "ML_SQ='one", // a single-quoted one
  "two'",
  'HASH_DQ="a # b"',
  'SQ_IN_DQ="it\'s"',
  'DQ_IN_SQ=\'say "hi"\'',
  'URL=postgresql://user:pw@db.example.org:5432/app?sslmode=require',
  'DUP=first',
  'lower_key=lower',
  'KEY.DOT=dots',
  'KEY-DASH=dash',
  'NBSP=\u00a0x\u00a0',
  'BS_END=ends\\',
  'INTERP=${PLAIN}-x',
  'INTERP_DEF=${NOT_SET_ANYWHERE:-dflt}',
  "INTERP_SQ='${PLAIN}'",
  'DOLLAR=$PLAIN',
  'DQ_TRAIL="quoted"  ',
  'DQ_JUNK="quoted" junk', // Compose cannot parse it: skipped
  'MID_QUOTE=a"b"c',
  'OPEN_Q="unterminated', // Compose: skipped
  'AFTER_OPEN=after',
  '# a comment',
  '   # an indented comment',
  '',
  'DUP=second', // later lines win
  'LAST=no line end after it',
];
const CORPUS = CORPUS_LINES.join('\r\n');
/** Lines only Compose takes (Docker's CLI refuses a file holding any of them). */
const COMPOSE_ONLY = [
  'export EXP=exported',
  'export EXP_DQ="exp quoted"',
  'SPACED = spaced',
  '  export   EXP_LEAD=x',
  '=no key',
  '',
].join('\n');
/** Keys a container holds that no env file gives: the image's PATH, and what Podman writes itself. */
const NOT_FROM_FILES = new Set(['PATH', 'TERM', 'container', 'HOSTNAME', 'HOME']);

/** The environment of the tools that read the files: the caller's own variables, the engine named, nothing else. */
const toolEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: tempDir('ma-envread-home-', '/tmp'),
  ...CALLER,
  ...extra,
});

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env, cwd, timeout: 180_000 });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal ?? r.error?.message}): ${r.stderr}`);
  return r.stdout;
}

/** Config.Env as the engine holds it: a bare `KEY` is a key with no value; a repeated key, its last value. */
function heldEnv(e: Engine, name: string): Map<string, string | null> {
  const [inspect] = JSON.parse(e.docker(['inspect', name])) as { Config: { Env: string[] | null } }[];
  const held = new Map<string, string | null>();
  for (const line of inspect?.Config.Env ?? []) {
    const eq = line.indexOf('=');
    held.set(eq < 0 ? line : line.slice(0, eq), eq < 0 ? null : line.slice(eq + 1));
  }
  return held;
}

/** Entries of a reading, the last one of each key (later lines win in every consumer). */
const lastOf = (entries: readonly RawEnvBytesEntry[]): Map<string, RawEnvBytesEntry> =>
  new Map(entries.map((x) => [x.key, x]));

/**
 * Each key of the reading against what the container holds; returns how many were checked. A key
 * written without `=` holds the caller's variable, or nothing (Docker keeps Compose's bare `KEY`).
 */
function checkReading(reading: Map<string, RawEnvBytesEntry>, held: Map<string, string | null>, what: string): number {
  for (const [key, entry] of reading) {
    if (entry.value === null) {
      const callerValue = (CALLER as Record<string, string>)[key];
      if (callerValue !== undefined)
        assert.is(held.get(key), callerValue, `${what}: ${key} (no =) passes the caller's value through`);
      else
        assert.ok(
          !held.has(key) || held.get(key) === null,
          `${what}: ${key} (no =, unset) is absent or bare: ${JSON.stringify(held.get(key))}`,
        );
      continue;
    }
    assert.ok(typeof entry.value === 'string', `${what}: ${key} is text`);
    assert.is(held.get(key), entry.value, `${what}: line ${entry.line}, ${JSON.stringify(key)}`);
  }
  const unexplained = [...held.keys()].filter((k) => !reading.has(k) && !NOT_FROM_FILES.has(k));
  assert.equal(unexplained, [], `${what}: keys the container holds that the reading does not give`);
  return reading.size;
}

function composeMissing(): string | null {
  const r = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8', env: toolEnv() });
  return r.status === 0
    ? null
    : `docker-compose is not installed${r.error ? ` (${r.error.message})` : ''}: .ci/run must apt-get install docker-compose`;
}

forEachEngine('env-readings', (e, it) => {
  const missing = composeMissing();
  if (missing !== null) {
    // In CI a missing tool is a failure, never a skip.
    if (process.env['CI'] === 'true') {
      it('docker-compose 1.29 is installed', () => {
        throw new Error(missing);
      });
    } else it.skip(`env-readings (${missing})`, () => undefined);
    return;
  }

  const host = new LiveHost();
  const tag = `${e.kind}-${process.pid}`;
  const LITERAL = `ma-envread-literal-${tag}`; // --env-file, labelled mesh.env-file-syntax=docker
  const UNLABELLED = `ma-envread-plain-${tag}`; // --env-file, nothing says which consumer
  const COMPOSED = `ma-envread-compose-${tag}`; // docker-compose, its own labels say so
  const project = join(host.dir, 'compose'); // outside the managed root: the scan need not claim it

  it('each line as the consumer reads it is what the container holds; no finding on the unchanged file; one changed value is one MA1001 per container', () => {
    const corpus = host.write(host.path('app', 'corpus.env'), CORPUS);
    const composeOnly = host.write(host.path('app', 'compose-only.env'), COMPOSE_ONLY);
    const mesh = (resource: string, sources: string[]) => ({
      'mesh.module': 'app',
      'mesh.resource': resource,
      'mesh.sources': sources.join(','),
      'mesh-audit-test': e.run,
    });
    const labelArgs = (labels: Record<string, string>) =>
      Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]);
    try {
      // --env-file: Docker's CLI on Docker, Podman's own CLI (remote, on the private service) on Podman.
      for (const [name, extra] of [
        [LITERAL, { 'mesh.env-file-syntax': 'docker' }],
        [UNLABELLED, {}],
      ] as const) {
        const args = [
          'create',
          '--name',
          name,
          '--network',
          'none',
          '--env-file',
          corpus,
          ...labelArgs({ ...mesh(`app.${name}`, [corpus]), ...extra }),
          e.image,
          'sleep',
          '3600',
        ];
        if (e.kind === 'podman') run('podman', ['--remote', '--url', e.dockerHost, ...args], toolEnv());
        else run(process.env['MA_DOCKER_CLI'] ?? '/usr/bin/docker', ['-H', e.dockerHost, ...args], toolEnv());
      }
      // Compose: env_file of both files, pointed at this engine alone.
      const composeFile = host.write(
        join(project, 'docker-compose.yml'),
        [
          'version: "2.4"',
          'services:',
          '  app:',
          `    image: ${JSON.stringify(e.image)}`,
          `    container_name: ${COMPOSED}`,
          '    command: ["sleep", "3600"]',
          '    network_mode: none',
          `    env_file: [${JSON.stringify(corpus)}, ${JSON.stringify(composeOnly)}]`,
          '    labels:',
          ...Object.entries(mesh(`app.${COMPOSED}`, [corpus, composeOnly])).map(
            ([k, v]) => `      ${JSON.stringify(k)}: ${JSON.stringify(v)}`,
          ),
          '',
        ].join('\n'),
      );
      run(
        'docker-compose',
        ['-f', composeFile, '-p', `ma-envread-${tag}`, 'up', '--no-start'],
        toolEnv({ DOCKER_HOST: e.dockerHost }),
        project,
      );

      // The scanner's readings, line by line, against Config.Env.
      const bytes = readFileSync(corpus);
      const literal = readLiteral(bytes);
      assert.is(literal.dockerRefuses, undefined, 'Docker takes the shared file');
      // Docker's CLI drops the BOM; Podman's keeps it at the start of the first key.
      const literalKeys =
        e.kind === 'podman'
          ? literal.entries
          : literal.entries.map((x) => (x.line === 1 ? { ...x, key: x.key.replace(/^\uFEFF/, '') } : x));
      let checked = 0;
      for (const name of [LITERAL, UNLABELLED])
        checked += checkReading(lastOf(literalKeys), heldEnv(e, name), `${name} (--env-file)`);
      const composeReading = lastOf([...parseEnvBytes(bytes), ...parseEnvBytes(readFileSync(composeOnly))]);
      checked += checkReading(composeReading, heldEnv(e, COMPOSED), `${COMPOSED} (compose)`);
      assert.ok(
        literal.entries.length >= 40 && composeReading.size >= 40,
        `at least 40 lines per consumer (${literal.entries.length}, ${composeReading.size})`,
      );
      assert.ok(checked >= 3 * 40, `${checked} keys checked`);
      // The readings differ where the issue says they do: the same file, other values.
      assert.is(composeReading.get('DQ')?.value, 'quoted value');
      assert.is(lastOf(literalKeys).get('DQ')?.value, '"quoted value"');

      host.ledger([
        { id: `app.${LITERAL}`, type: 'container', origin: 'declared', target: LITERAL, sources: [corpus] },
        { id: `app.${UNLABELLED}`, type: 'container', origin: 'declared', target: UNLABELLED, sources: [corpus] },
        {
          id: `app.${COMPOSED}`,
          type: 'container',
          origin: 'declared',
          target: COMPOSED,
          sources: [corpus, composeOnly],
        },
        { id: 'app.corpus', type: 'file', origin: 'declared', target: corpus },
        { id: 'app.compose-only', type: 'file', origin: 'declared', target: composeOnly },
      ]);
      const clean = host.scan(e.dockerHost, `live-envread-${e.kind}`);
      assert.ok(clean.report.summary.complete, clean.stderr);
      assert.equal(
        clean.report.findings.map((f) => [f.ruleId, f.subject.id, f.discriminator, f.message]),
        [],
        'no finding on the unchanged file',
      );
      assert.is(clean.code, 0, clean.stderr);

      // One value changed inside its quotes: each container now holds what neither reading gives.
      writeFileSync(corpus, CORPUS.replace('DQ="quoted value"', 'DQ="quoted VALUE"'));
      const changed = host.scan(e.dockerHost, `live-envread-${e.kind}`);
      assert.ok(changed.report.summary.complete, changed.stderr);
      const found = changed.report.findings.map((f) => [f.ruleId, f.subject.id, f.discriminator]).sort();
      assert.equal(
        found,
        [COMPOSED, UNLABELLED, LITERAL].sort().map((name) => ['MA1001', name, `${corpus}#DQ`]),
      );
      const message = (name: string) => changed.report.findings.find((f) => f.subject.id === name)!.message;
      // Each finding names the reading it used; VALUE for value keeps the length (the shape).
      assert.match(message(LITERAL), 'holds DQ=<14 chars> but');
      assert.match(
        message(LITERAL),
        'now says DQ=<14 chars> as `docker run --env-file` reads it (same shape, different value); label mesh.env-file-syntax=docker',
      );
      assert.match(message(COMPOSED), 'holds DQ=<12 chars> but');
      assert.match(
        message(COMPOSED),
        "now says DQ=<12 chars> as Compose's env_file reads it (same shape, different value); made by Compose (label com.docker.compose.project)",
      );
      assert.match(
        message(UNLABELLED),
        "now says DQ=<14 chars> as `docker run --env-file` reads it, DQ=<12 chars> as Compose's env_file does (same shape, different value); nothing says",
      );
      assert.is(changed.code, 1);
    } finally {
      removeContainers(e, [LITERAL, UNLABELLED, COMPOSED]);
    }
  });
});
