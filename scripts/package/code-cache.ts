/*
 * The single executable's code cache, recorded at build time by a scan: the bundled program is run
 * once by this Node (the one the executable is made from, so V8 accepts the cache) against a stand-in
 * engine on a unix socket in a temporary folder (a socket's path must be short; a checkout's may not
 * be), with a ledger, an env file and settings of its own, its reports written there too; the folder
 * is removed after. The host's /proc is only read, as a scan reads it (its own pid namespace, the
 * process table, and pid 1's cgroup, which holds no stand-in container).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { compileProgram } from '../../src/cli/program.js';

const CONTAINERS = 12;
const IMAGE = `sha256:${'c'.repeat(64)}`;
const idOf = (i: number): string => i.toString(16).padStart(2, '0').repeat(32);

/** What a scan reads of each container, varied enough to reach every kind of fact. */
function inspectOf(i: number, envFile: string): Record<string, unknown> {
  const running = i % 3 === 0;
  return {
    Id: idOf(i),
    Name: `/warm-${i}`,
    Created: '2026-01-01T00:00:00Z',
    Image: IMAGE,
    RestartCount: 0,
    State: {
      Status: running ? 'running' : 'exited',
      Running: running,
      Pid: running ? 1 : 0,
      StartedAt: '2026-01-01T00:00:01Z',
      FinishedAt: '0001-01-01T00:00:00Z',
    },
    Config: {
      Image: 'warm:1',
      Env: ['PATH=/bin', `DATABASE_URL=postgresql://app:pw-${i}@db.example.internal:5432/app`, `TOKEN=t${i}`],
      Labels: { 'mesh.sources': envFile },
    },
    HostConfig: {
      NetworkMode: i % 2 === 0 ? 'host' : 'none',
      PortBindings: i === 1 ? { '80/tcp': [{ HostIp: '', HostPort: '8080' }] } : {},
    },
    Mounts: [{ Type: 'bind', Source: envFile, Destination: '/etc/app.env', RW: false }],
    NetworkSettings: { Ports: {} },
  };
}

function standInEngine(socket: string, envFile: string): Promise<Server> {
  const inspects = Array.from({ length: CONTAINERS }, (_, i) => inspectOf(i, envFile));
  const server = createServer((req, res) => {
    const path = (req.url ?? '').replace(/^\/v[\d.]+/, '').split('?')[0]!;
    const id = /^\/containers\/([0-9a-f]{64})\/json$/.exec(path)?.[1];
    const body =
      path === '/_ping'
        ? 'OK'
        : path === '/version'
          ? {
              Version: '20.10.24',
              ApiVersion: '1.41',
              MinAPIVersion: '1.12',
              Components: [{ Name: 'Engine', Version: '20.10.24' }],
            }
          : path === '/containers/json'
            ? inspects.map((c) => ({
                Id: c['Id'],
                Names: [c['Name']],
                State: (c['State'] as { Status: string }).Status,
              }))
            : path === `/images/${IMAGE}/json`
              ? { Id: IMAGE, Config: { Env: ['PATH=/bin'] } }
              : inspects.find((c) => c['Id'] === id);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json', 'api-version': '1.41' });
    res.end(
      body === undefined ? '{"message":"no such container"}' : typeof body === 'string' ? body : JSON.stringify(body),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve(server));
  });
}

/** Records the program's code cache in `work` (its file is returned); fails if V8 would not use it. */
export async function recordCodeCache(program: string, assets: Record<string, string>, work: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-audit-code-cache-'));
  mkdirSync(join(dir, 'etc'));
  const envFile = join(dir, 'etc', 'app.env');
  writeFileSync(envFile, 'DATABASE_URL=postgresql://app:pw@db.example.internal:5432/app\n');
  const ledger = join(dir, 'ledger.json');
  writeFileSync(
    ledger,
    JSON.stringify([
      { id: 'app.env', type: 'file', target: envFile, sources: [envFile] },
      { id: 'warm-0', type: 'container', target: 'warm-0' },
    ]),
  );
  // Its own settings: the build machine's config (/etc/mesh-audit, $MESH_AUDIT_CONFIG) and ignore file play no part.
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'maxFiles: 1000\n');
  const socket = join(dir, 'engine.sock');
  const cache = join(work, 'mesh-audit.code-cache');
  let server: Server | undefined;
  try {
    server = await standInEngine(socket, envFile);
    const run = fileURLToPath(new URL('./code-cache-run.js', import.meta.url));
    const scan = [
      'scan',
      '--docker-host',
      `unix://${socket}`,
      '--ledger',
      ledger,
      '--out',
      join(dir, 'out'),
      '--format',
      'sarif,json',
      '--hostname',
      'build',
      '--config',
      config,
      '--quiet',
      '--fail-on',
      'none',
    ];
    await promisify(execFile)(process.execPath, [run, program, cache, JSON.stringify(assets), '--', ...scan], {
      cwd: dir,
      env: { ...process.env, DOCKER_HOST: '', MESH_AUDIT_CONFIG: '' },
    }).catch((err: unknown) => {
      const e = err as { code?: unknown; stderr?: unknown };
      // Exit 3 (incomplete: the stand-in's pid 1 is not its container) is a scan that ran.
      if (e.code !== 3)
        throw new Error(`recording the code cache: the scan failed (exit ${String(e.code)}): ${String(e.stderr)}`);
    });
  } finally {
    const started = server;
    if (started !== undefined) await new Promise((resolve) => started.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
  if (compileProgram(readFileSync(program, 'utf8'), program, readFileSync(cache)).cachedDataRejected === true) {
    throw new Error(`${cache}: V8 refuses the code cache it just made`);
  }
  return cache;
}
