import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { DEFAULT_POLICY } from '../src/policy/load.js';
import type { Snapshot } from '../src/snapshot/types.js';
import { example, runCli, tempDir } from './support/cli.js';
import { HostModel, sha256 } from './support/host-model.js';

/*
 * The whole `evaluate` command, as a user runs it (the real bin/mesh-audit.js, with DEBUG=* and
 * NODE_DEBUG=http,net), on snapshots that hold raw secrets: a host built from raw values (env of a
 * container, of /proc, of an env file, unknown ledger fields), and the same snapshot with raw values
 * written into it where a forged or broken snapshot would carry them. Every format (text on stdout;
 * SARIF, JSON, JSON Lines, JUnit, Prometheus in --out, the --prom-file, each format alone with
 * `--out -`), --verbose stderr and what is posted to an Alertmanager hold no 8-character piece of any
 * of them. test/property/secret-shapes.test.ts plants secrets through the reporters in-process; this is
 * the command around them: process output, files written, logs.
 */

/** The planted secrets (fake): 16 characters each, no 8-character piece of one is in another or in the pack. */
const SECRET = {
  heldDbPassword: 'Qx7vLm2Rk9TzWp4N',
  fileDbPassword: 'Hj3KsD8fGq2ZmXc5',
  heldToken: 'tK9pLw3QzR7mXv2B',
  fileToken: 'Vb6NcX1aSd4FgH8j',
  droppedValue: 'Lz5WqE2rTy7UiO3p',
  procToken: 'Mn4BvC9xZa2SdF6g',
  strayPassword: 'Pq8RsT3uVw6XyZ1a',
  ledgerNote: 'Gh2JkL5mNb8VcX4z',
  ledgerPassword: 'Ws9EdR4fTg7YhU2j',
  // Characters percent-encoding changes (`/ @ : % + = & #` and a blank): its encoded form differs from the raw one.
  heldSessionKey: 'Rk/9@Qx:%Tf +Z=&',
  filePasswordToEncode: 'Yu#4 e/Wq@8:R%n+',
} as const;
const ENV_FILE = '/etc/mesh/app/app.env';
const FORMATS = ['text', 'sarif', 'json', 'jsonl', 'junit', 'prom'] as const;

/**
 * The base64 characters that any base64 text holding `secret` must contain, whatever comes before it
 * (`base64("app:" + secret)` included): base64 turns each 3-byte group into 4 characters, so a secret
 * starting at byte offset k of the encoded text has its whole groups aligned in one of three ways.
 */
function base64Alignments(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [0, 1, 2].map((start) =>
    bytes.subarray(start, start + Math.floor((bytes.length - start) / 3) * 3).toString('base64'),
  );
}

const pieces8 = (t: string): string[] => Array.from({ length: t.length - 7 }, (_, i) => t.slice(i, i + 8));

/** Every 8-character piece of each secret: raw, percent-encoded (alone and as URL userinfo), and base64 at every alignment. */
const PIECES: string[] = Object.values(SECRET).flatMap((s) =>
  [
    s,
    encodeURIComponent(s),
    encodeURIComponent(`:${s}@`),
    ...base64Alignments(s),
    ...base64Alignments(encodeURIComponent(s)),
  ].flatMap(pieces8),
);

test('the leak check itself catches a secret in base64 at every byte offset and percent-encoded', () => {
  const caught = (text: string): boolean => PIECES.some((p) => text.includes(p));
  for (const secret of Object.values(SECRET)) {
    for (const prefix of ['', 'a', 'ap', 'app:', 'user:x', 'Basic ']) {
      assert.ok(
        caught(Buffer.from(prefix + secret + '@host').toString('base64')),
        `base64 of ${JSON.stringify(prefix)} + secret`,
      );
      assert.ok(
        caught(Buffer.from(prefix + encodeURIComponent(secret)).toString('base64')),
        `base64 of ${JSON.stringify(prefix)} + encoded secret`,
      );
    }
    assert.ok(caught(`postgresql://app:${encodeURIComponent(secret)}@db/x`), 'percent-encoded in a URL');
  }
  for (const secret of [SECRET.heldSessionKey, SECRET.filePasswordToEncode])
    assert.is.not(encodeURIComponent(secret), secret);
  assert.not.ok(
    caught('postgresql://…@db.mesh.internal:5432/…  <16 chars>  hmac-sha256:0123456789abcdef'),
    'a shape and a digest are not taken for a leak',
  );
});

/** A host that drifted, built from raw values the way the collectors do (HMAC digests and shapes). */
function hostFromRawValues(): Snapshot {
  const fileText =
    `DATABASE_URL=postgresql://app:${SECRET.fileDbPassword}@db.mesh.internal:5432/app\nAPI_TOKEN=${SECRET.fileToken}\n` +
    `REPLICA_URL=postgresql://app:${encodeURIComponent(SECRET.filePasswordToEncode)}@replica.mesh.internal:5432/app\n`;
  return new HostModel('raw-host', '2026-10-01T03:00:00Z')
    .file(ENV_FILE, fileText)
    .container({
      name: 'app',
      network: 'none',
      labels: {
        'mesh.module': 'app',
        'mesh.resource': 'app.server',
        'mesh.sources': ENV_FILE,
        'mesh.source-digests': sha256('an older file'),
      },
      env: {
        DATABASE_URL: `postgresql://app:${SECRET.heldDbPassword}@db.mesh.internal:5432/app`,
        API_TOKEN: SECRET.heldToken,
        OLD_SECRET: SECRET.droppedValue,
        REPLICA_URL: `postgresql://app:${encodeURIComponent(SECRET.filePasswordToEncode)}@replica.mesh.internal:5432/app`,
        SESSION_KEY: SECRET.heldSessionKey,
      },
      proc: { env: { API_TOKEN: SECRET.procToken } },
    })
    .container({ name: 'stray', network: 'none', env: { PASSWORD: SECRET.strayPassword } })
    .ledger([
      {
        id: 'app.server',
        type: 'container',
        target: 'app',
        sources: [ENV_FILE],
        note: SECRET.ledgerNote,
        cache: { url: `redis://:${SECRET.ledgerPassword}@cache:6379/0` },
      },
      { id: 'app.env', type: 'file', target: ENV_FILE },
    ])
    .build();
}

/** A pack that prints everything a subject holds: the env maps and the unknown ledger fields. */
const PRINT_ALL_PACK = `schema: mesh-audit/policy@1
pack: {id: print-all, name: print-all, version: "1"}
rules:
  - id: T9001
    name: print-container-env
    title: Print a container's env
    severity: note
    subject: containers
    assert: false
    message: "{name} holds {env}"
    help: Nothing to do.
    remediation: Nothing.
    tags: []
    profiles: [nightly]
  - id: T9002
    name: print-ledger-extra
    title: Print a ledger entry's unknown fields
    severity: note
    subject: ledger
    assert: false
    message: "{id} carries {extra}"
    help: Nothing to do.
    remediation: Nothing.
    tags: []
    profiles: [nightly]
`;

type Mutable = Record<string, any>; // a snapshot's JSON, edited where a forged one would differ

interface Variant {
  name: string;
  /** Writes raw values into the snapshot's JSON; absent: the snapshot as the scanner would write it. */
  plant?: (s: Mutable) => void;
  /** The JSON path the refusal names (exit 2, nothing written); absent: evaluated (exit 1). */
  refusedAt?: string;
  /** The raw values go into a snapshot of --history rather than the one evaluated: that one is not read (exit 3). */
  inHistory?: boolean;
}

const app = (s: Mutable): Mutable => (s['containers'] as Mutable[]).find((c) => c['name'] === 'app')!;
const VARIANTS: Variant[] = [
  { name: 'built from raw values (what a scan writes)' },
  {
    name: 'a raw value as a container env value',
    plant: (s) => void (app(s)['env']['API_TOKEN'] = SECRET.heldToken),
    refusedAt: '/containers/0/env/API_TOKEN',
  },
  {
    name: 'a URL with its password as a container env shape',
    plant: (s) =>
      void (app(s)['env']['DATABASE_URL']['shape'] =
        `postgresql://app:${SECRET.heldDbPassword}@db.mesh.internal:5432/app`),
    refusedAt: '/containers/0/env/DATABASE_URL/shape',
  },
  {
    name: "a token as an env file's shape",
    plant: (s) => void (s['files'][0]['env'][1]['value']['shape'] = SECRET.fileToken),
    refusedAt: '/files/0/env/1/value/shape',
  },
  {
    name: 'a token as a /proc env shape',
    plant: (s) => void (app(s)['proc']['env']['API_TOKEN']['shape'] = `token:${SECRET.procToken}`),
    refusedAt: '/containers/0/proc',
  },
  {
    name: 'a raw string in an unknown ledger field',
    plant: (s) => void (s['ledger']['entries'][0]['entry']['extra']['note'] = SECRET.ledgerNote),
    refusedAt: '/ledger/entries/0/entry/extra/note',
  },
  {
    name: 'a raw URL deep in an unknown ledger field',
    plant: (s) =>
      void (s['ledger']['entries'][0]['entry']['extra']['cache']['url'] =
        `redis://:${SECRET.ledgerPassword}@cache:6379/0`),
    refusedAt: '/ledger/entries/0/entry/extra/cache/url',
  },
  {
    name: 'a raw env value in a history snapshot',
    plant: (s) => void (app(s)['env']['API_TOKEN'] = SECRET.heldToken),
    inHistory: true,
  },
];

/** A loopback HTTP server that answers 200 and keeps every request (method, URL, body). */
async function recorder(): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push(`${req.method ?? ''} ${req.url ?? ''}\n${JSON.stringify(req.headers)}\n${body}`);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** bin/mesh-audit.js as a user runs it, without blocking this process (the recorder answers meanwhile). */
function runBin(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'), ...args], {
      cwd: PACKAGE_ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every regular file under a folder, with its text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? filesUnder(join(dir, d.name))
      : d.isFile()
        ? [{ path: join(dir, d.name), text: readFileSync(join(dir, d.name), 'utf8') }]
        : [],
  );
}

const leaksIn = (texts: { where: string; text: string }[]): string[] =>
  texts.flatMap(({ where, text }) => PIECES.filter((p) => text.includes(p)).map((p) => `${where}: ${p}`));

for (const variant of VARIANTS) {
  test(`evaluate, every format, --verbose, --prom-file, Alertmanager: no piece of a raw secret — ${variant.name}`, async () => {
    const dir = tempDir();
    const pack = join(dir, 'print-all.yaml');
    writeFileSync(pack, PRINT_ALL_PACK);
    const clean = hostFromRawValues();
    const planted = JSON.parse(JSON.stringify(clean)) as Mutable;
    variant.plant?.(planted);
    const snapshotFile = join(dir, 'snapshot.json');
    writeFileSync(snapshotFile, JSON.stringify(variant.inHistory ? clean : planted));
    const history = join(dir, 'history');
    mkdirSync(history);
    writeFileSync(
      join(history, 'raw-host-20260930T030000Z.json'),
      JSON.stringify({ ...(variant.inHistory ? planted : clean), takenAt: '2026-09-30T03:00:00Z' }),
    );
    const out = join(dir, 'out');
    const promFile = join(dir, 'textfile', 'mesh-audit.prom');
    mkdirSync(join(dir, 'textfile'));
    const alertmanager = await recorder();
    const common = ['--history', history, '--policy', DEFAULT_POLICY, '--policy', pack];
    let whole;
    try {
      whole = await runBin(
        [
          'evaluate',
          snapshotFile,
          ...common,
          '--format',
          FORMATS.join(','),
          '--out',
          out,
          '--verbose',
          '--prom-file',
          promFile,
          '--alertmanager',
          alertmanager.url,
        ],
        { DEBUG: '*', NODE_DEBUG: 'http,net', FORCE_COLOR: '0' },
      );
    } finally {
      await alertmanager.close();
    }
    const texts = [
      { where: 'stdout', text: whole.stdout },
      { where: 'stderr', text: whole.stderr },
      ...filesUnder(out).map((f) => ({ where: f.path, text: f.text })),
      ...filesUnder(join(dir, 'textfile')).map((f) => ({ where: f.path, text: f.text })),
      ...alertmanager.requests.map((text, i) => ({ where: `Alertmanager request ${i + 1}`, text })),
    ];
    // Each format alone on stdout (`--out -`), in this process (the renderers that write to stdout).
    for (const format of FORMATS) {
      const alone = await runCli(['evaluate', snapshotFile, ...common, '--format', format, '--out', '-', '--verbose']);
      texts.push(
        { where: `--format ${format} --out - (stdout)`, text: alone.stdout },
        { where: `--format ${format} --out - (stderr)`, text: alone.stderr },
      );
      assert.is(alone.code, whole.code, `--format ${format} --out -: ${alone.stderr}`);
    }
    assert.equal(leaksIn(texts), [], 'pieces of raw secrets in the output');

    // What the run did, so that the check above was not made on empty outputs.
    if (variant.refusedAt === undefined) {
      assert.is(whole.code, variant.inHistory ? 3 : 1, whole.stderr);
      if (variant.inHistory)
        assert.match(
          whole.stdout,
          `[history] ${join(history, 'raw-host-20260930T030000Z.json')}: not a valid mesh-audit/snapshot@2`,
        );
      // The env drift of the container (MA1001), the dropped key (MA1003), the stray container, the printed env and ledger fields.
      for (const shown of [
        'MA1001',
        'DATABASE_URL',
        'API_TOKEN',
        'OLD_SECRET',
        'stray',
        'T9001',
        'T9002',
        'postgresql://…@db.mesh.internal:5432/…',
        'redis://…@…:6379/…',
      ]) {
        assert.match(whole.stdout, shown);
      }
      for (const name of [
        'mesh-audit.sarif',
        'mesh-audit.json',
        'mesh-audit.jsonl',
        'mesh-audit.junit.xml',
        'mesh-audit.prom',
      ])
        assert.ok(existsSync(join(out, name)), name);
      assert.ok(existsSync(promFile), '--prom-file written');
      assert.ok(
        alertmanager.requests.some((r) => r.startsWith('POST ') && r.includes('MA1001')),
        'the findings were posted to the Alertmanager',
      );
      assert.match(whole.stderr, /evaluated 1 snapshot/);
    } else {
      assert.is(whole.code, 2, whole.stderr);
      assert.match(whole.stderr, `at ${variant.refusedAt}`);
      assert.equal(filesUnder(out), [], 'nothing written');
      assert.equal(alertmanager.requests, [], 'nothing posted');
    }
  });
}

test('the raw values the examples were built from (scripts/build-examples.ts) are in no example file', () => {
  const RAW = [
    'example-db-pass',
    'example-secret-key-0001',
    'example-runner-token-0001',
    'example-pg-pass',
    'example-pass@',
  ];
  const texts: string[] = [];
  for (const name of readdirSync(example())) {
    for (const f of filesUnder(example(name))) texts.push(f.text);
  }
  assert.ok(texts.length >= 8, `${texts.length} example files`);
  for (const raw of RAW) {
    for (const variant of [raw, Buffer.from(raw).toString('base64'), encodeURIComponent(raw)])
      assert.ok(
        texts.every((t) => !t.includes(variant)),
        `${variant} is in an example`,
      );
  }
});

test.run();
