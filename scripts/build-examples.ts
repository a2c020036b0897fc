/**
 * Writes the example snapshots under examples/ from plain descriptions of each host.
 * Run: `npm run build && node dist/scripts/build-examples.js`, then `npm run golden` to refresh the
 * expected reports. The raw values below are obviously fake; the snapshots only ever hold their
 * HMAC digests (under a key made fresh for each run) and shapes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HostModel, sha256 } from '../test/support/host-model.js';
import type { Snapshot } from '../src/snapshot/types.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LEDGER = '/var/lib/mesh-host/ledger.json';

const envText = (vars: Record<string, string>): string =>
  '# composed by mesh-host; do not edit\n' +
  Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n') +
  '\n';

// --- 045: the composed env file was rewritten once the database address became known ---------------
const GITEA_ENV_BEFORE = envText({
  DATABASE_URL: 'postgresql://gitea:example-db-pass@:20000/gitea',
  GITEA__security__SECRET_KEY: 'example-secret-key-0001',
  GITEA__server__DOMAIN: 'git.example.invalid',
});
const GITEA_ENV_AFTER = envText({
  DATABASE_URL: 'postgresql://gitea:example-db-pass@db.mesh.internal:20000/gitea',
  GITEA__security__SECRET_KEY: 'example-secret-key-0001',
  GITEA__server__DOMAIN: 'git.example.invalid',
});
const APP_INI_BEFORE = '[server]\nHTTP_PORT = 2999\n';
const APP_INI_AFTER = '[server]\nHTTP_PORT = 2999\nSSH_PORT = 2222\n';
const RUNNER_ENV = envText({
  RUNNER_TOKEN: 'example-runner-token-0001',
  RUNNER_NAME: 'runner-1',
  GITEA_URL: 'http://127.0.0.1:2999/',
});

function gitea045(model: HostModel): HostModel {
  return model
    .file('/etc/mesh/gitea/db.env', GITEA_ENV_AFTER)
    .file('/etc/mesh/gitea/app.ini', APP_INI_AFTER, { inode: 52011 })
    .container({
      name: 'gitea-server',
      image: 'registry.example.invalid/gitea:1.21',
      network: 'host',
      labels: {
        'mesh.module': 'gitea',
        'mesh.resource': 'gitea.server',
        'mesh.sources': '/etc/mesh/gitea/db.env',
        'mesh.source-digests': sha256(GITEA_ENV_BEFORE),
      },
      env: {
        DATABASE_URL: 'postgresql://gitea:example-db-pass@:20000/gitea',
        GITEA__security__SECRET_KEY: 'example-secret-key-0001',
        GITEA__server__DOMAIN: 'git.example.invalid',
        PATH: '/usr/local/bin:/usr/bin:/bin',
      },
      binds: [{ source: '/etc/mesh/gitea/app.ini', destination: '/etc/gitea/app.ini' }],
      proc: {
        listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 2999 }],
        // Replaced by rename on the host: the container still sees the inode it was started with.
        bound: [{ destination: '/etc/gitea/app.ini', text: APP_INI_BEFORE, inode: 51877 }],
      },
    });
}

function runner(model: HostModel): HostModel {
  return model.file('/etc/mesh/runner/runner.env', RUNNER_ENV).container({
    name: 'gitea-runner',
    image: 'registry.example.invalid/act-runner:0.2',
    network: 'none',
    labels: {
      'mesh.module': 'runner',
      'mesh.resource': 'runner.agent',
      'mesh.sources': '/etc/mesh/runner/runner.env',
      'mesh.source-digests': sha256(RUNNER_ENV),
    },
    env: {
      RUNNER_TOKEN: 'example-runner-token-0001',
      RUNNER_NAME: 'runner-1',
      GITEA_URL: 'http://127.0.0.1:2999/',
      PATH: '/bin',
    },
  });
}

const ledger045 = (appliedAt: string) => [
  {
    id: 'gitea.server',
    type: 'container',
    module: 'gitea',
    origin: 'declared',
    target: 'gitea-server',
    holds: [2999],
    sources: ['/etc/mesh/gitea/db.env'],
    applied_at: '2026-09-13T08:00:00Z',
  },
  {
    id: 'gitea.env',
    type: 'file',
    module: 'gitea',
    origin: 'declared',
    target: '/etc/mesh/gitea/db.env',
    digest: sha256(GITEA_ENV_AFTER),
    applied_at: appliedAt,
  },
  {
    id: 'gitea.config',
    type: 'file',
    module: 'gitea',
    origin: 'declared',
    target: '/etc/mesh/gitea/app.ini',
    digest: sha256(APP_INI_AFTER),
    applied_at: appliedAt,
  },
  {
    id: 'runner.agent',
    type: 'container',
    module: 'runner',
    origin: 'declared',
    target: 'gitea-runner',
    sources: ['/etc/mesh/runner/runner.env'],
    applied_at: '2026-09-13T08:00:00Z',
  },
  {
    id: 'runner.env',
    type: 'file',
    module: 'runner',
    origin: 'declared',
    target: '/etc/mesh/runner/runner.env',
    digest: sha256(RUNNER_ENV),
    applied_at: '2026-09-13T08:00:00Z',
  },
];

function example045(): Snapshot {
  return runner(gitea045(new HostModel('app-node-1', '2026-09-14T03:00:00Z')))
    .ledger(ledger045('2026-09-13T09:30:00Z'), { path: LEDGER })
    .build();
}

// --- 097: the resource's container got an explicit name; the old one stayed ----------------------
const FORGE_ENV = envText({
  DATABASE_URL: 'postgresql://forge:example-pass@127.0.0.1:20000/forge_v2',
  FORGE_MODE: 'prod',
});
const OLD_FORGE_ENV = envText({
  DATABASE_URL: 'postgresql://forge:example-pass@127.0.0.1:20000/forge',
  FORGE_MODE: 'prod',
});
const FORGE_INI = '[server]\nROOT_URL = https://forge.example.invalid/\n';
const forgeLabels = (sources: string, text: string) => ({
  'mesh.module': 'forge',
  'mesh.resource': 'forge.server',
  'mesh.sources': sources,
  'mesh.source-digests': sha256(text),
});

/** The container under the implicit name: after the rename, the one left behind (097). */
const oldForge = (model: HostModel, port: number): HostModel =>
  model.container({
    name: 'forge-forge.server',
    image: 'registry.example.invalid/forge:1.20',
    network: 'host',
    labels: forgeLabels('/etc/mesh/forge/forge.env', OLD_FORGE_ENV),
    env: { DATABASE_URL: 'postgresql://forge:example-pass@127.0.0.1:20000/forge', FORGE_MODE: 'prod' },
    proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port }] },
  });

/** The container under its explicit name, created from the rewritten env file. */
const newForge = (model: HostModel, name: string, port: number): HostModel =>
  model.container({
    name,
    image: 'registry.example.invalid/forge:1.21',
    network: 'host',
    labels: forgeLabels('/etc/mesh/forge/forge.env', FORGE_ENV),
    env: { DATABASE_URL: 'postgresql://forge:example-pass@127.0.0.1:20000/forge_v2', FORGE_MODE: 'prod' },
    proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port }] },
  });

/** The forge module's ledger entries: before the rename (implicit name, old paths) or after. */
const forgeLedger = (after: boolean, target: string, holds: number[]) => {
  const appliedAt = after ? '2026-09-23T08:12:00Z' : '2026-09-23T02:00:00Z';
  return [
    {
      id: 'forge.server',
      type: 'container',
      module: 'forge',
      origin: 'declared',
      target,
      holds,
      sources: ['/etc/mesh/forge/forge.env'],
      applied_at: appliedAt,
    },
    {
      id: 'forge.env',
      type: 'file',
      module: 'forge',
      origin: 'declared',
      target: '/etc/mesh/forge/forge.env',
      digest: sha256(after ? FORGE_ENV : OLD_FORGE_ENV),
      applied_at: appliedAt,
    },
    {
      id: 'forge.config',
      type: 'file',
      module: 'forge',
      origin: 'declared',
      target: after ? '/etc/mesh/forge/conf/app.ini' : '/etc/mesh/forge/app.ini',
      digest: sha256(FORGE_INI),
      applied_at: appliedAt,
    },
  ];
};

function control097Before(): Snapshot {
  const model = new HostModel('control-node', '2026-09-23T06:00:00Z')
    .file('/etc/mesh/forge/forge.env', OLD_FORGE_ENV)
    .file('/etc/mesh/forge/app.ini', FORGE_INI);
  return oldForge(model, 2999)
    .ledger(forgeLedger(false, 'forge-forge.server', [2999, 2222]), { path: LEDGER, node: 'control-node' })
    .build();
}

function control097(model: HostModel): HostModel {
  model
    .file('/etc/mesh/forge/forge.env', FORGE_ENV)
    .file('/etc/mesh/forge/app.ini', FORGE_INI) // the former path of forge.config: still there, still read
    .file('/etc/mesh/forge/conf/app.ini', FORGE_INI);
  // 2999 is taken by the stranded container, so the new one only got 2222.
  return oldForge(newForge(model, 'gitea', 2222), 2999);
}

function example097(): Snapshot {
  return control097(new HostModel('control-node', '2026-09-23T12:00:00Z'))
    .ledger(forgeLedger(true, 'gitea', [2999, 2222]), { path: LEDGER, node: 'control-node' })
    .build();
}

// --- clean: everything the ledger says is there, as it says ---------------------------------------
function exampleClean(): Snapshot {
  return runner(new HostModel('quiet-node', '2026-09-24T03:00:00Z'))
    .file('/etc/mesh/gitea/db.env', GITEA_ENV_AFTER)
    .container({
      name: 'gitea-server',
      image: 'registry.example.invalid/gitea:1.21',
      network: 'host',
      labels: {
        'mesh.module': 'gitea',
        'mesh.resource': 'gitea.server',
        'mesh.sources': '/etc/mesh/gitea/db.env',
        'mesh.source-digests': sha256(GITEA_ENV_AFTER),
      },
      env: {
        DATABASE_URL: 'postgresql://gitea:example-db-pass@db.mesh.internal:20000/gitea',
        GITEA__security__SECRET_KEY: 'example-secret-key-0001',
        GITEA__server__DOMAIN: 'git.example.invalid',
        PATH: '/usr/local/bin:/usr/bin:/bin',
      },
      proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 2999 }] },
    })
    .ledger(
      [
        {
          id: 'gitea.server',
          type: 'container',
          module: 'gitea',
          origin: 'declared',
          target: 'gitea-server',
          holds: [2999],
          sources: ['/etc/mesh/gitea/db.env'],
          applied_at: '2026-09-24T01:00:00Z',
        },
        {
          id: 'gitea.env',
          type: 'file',
          module: 'gitea',
          origin: 'declared',
          target: '/etc/mesh/gitea/db.env',
          digest: sha256(GITEA_ENV_AFTER),
          applied_at: '2026-09-24T01:00:00Z',
        },
        ...ledger045('').filter((e) => e.id.startsWith('runner.')),
      ],
      { path: LEDGER },
    )
    .build();
}

// --- demo: both incidents on one adopted node, with what the host found there ---------------------
const PG_CONF = 'listen_addresses = 127.0.0.1\nport = 20000\n';
function demoModel(takenAt: string): HostModel {
  return new HostModel('edge-7', takenAt, ['/etc/mesh']).file('/etc/legacy/postgresql.conf', PG_CONF).container({
    name: 'legacy-postgres',
    image: 'registry.example.invalid/postgres:15',
    network: 'host',
    env: { POSTGRES_PASSWORD: 'example-pg-pass', PGDATA: '/var/lib/postgresql/data' },
    binds: [{ source: '/etc/legacy/postgresql.conf', destination: '/etc/postgresql/postgresql.conf' }],
    proc: { listening: [{ protocol: 'tcp', address: '127.0.0.1', port: 20000 }] },
  });
}
const demoFound = [
  {
    id: 'legacy.postgres',
    type: 'container',
    origin: 'found',
    target: 'legacy-postgres',
    holds: [20000],
    applied_at: '2026-09-01T00:00:00Z',
  },
  {
    id: 'legacy.postgres-conf',
    type: 'file',
    origin: 'found',
    target: '/etc/legacy/postgresql.conf',
    digest: sha256(PG_CONF),
    applied_at: '2026-09-01T00:00:00Z',
  },
];

const demoObjects = [
  { id: 'forge.net', type: 'network', module: 'forge', origin: 'declared', target: 'forge_net' },
  { id: 'forge.data', type: 'volume', module: 'forge', origin: 'declared', target: 'forge_data' },
  {
    id: 'host.sshd',
    type: 'service',
    origin: 'found',
    target: 'sshd',
    holds: [22],
    applied_at: '2026-09-01T00:00:00Z',
  },
];

function demoBefore(): Snapshot {
  const model = runner(gitea045(demoModel('2026-09-23T06:00:00Z')))
    .file('/etc/mesh/forge/forge.env', OLD_FORGE_ENV)
    .file('/etc/mesh/forge/app.ini', FORGE_INI);
  return oldForge(model, 3999)
    .ledger([...ledger045('2026-09-13T09:30:00Z'), ...forgeLedger(false, 'forge-forge.server', [3999]), ...demoFound], {
      path: LEDGER,
      node: 'edge-7',
      adopted: true,
    })
    .build();
}

function demo(): Snapshot {
  const model = runner(gitea045(demoModel('2026-09-24T03:00:00Z')))
    .file('/etc/mesh/forge/forge.env', FORGE_ENV)
    .file('/etc/mesh/forge/app.ini', FORGE_INI)
    .file('/etc/mesh/forge/conf/app.ini', FORGE_INI)
    .container({
      name: 'debug-shell',
      image: 'registry.example.invalid/busybox:1',
      network: 'none',
      env: { PATH: '/bin' },
    });
  // What else the mesh and the host keep there, all accounted for: the engine's own networks, the forge's
  // network and data volume, an anonymous volume, sshd declared as a host service, a loopback-only agent.
  const withObjects = model
    .network({ name: 'host', driver: 'host', containers: ['forge', 'forge-forge.server', 'legacy-postgres'] })
    .network({ name: 'none', driver: 'null', containers: ['debug-shell'] })
    .network({ name: 'forge_net', internal: true, labels: { 'mesh.module': 'forge', 'mesh.resource': 'forge.net' } })
    .volume({
      name: 'forge_data',
      labels: { 'mesh.module': 'forge', 'mesh.resource': 'forge.data' },
      containers: ['forge'],
    })
    .volume({
      name: '5e1d4c3b2a19088f7e6d5c4b3a2918070f1e2d3c4b5a69788796a5b4c3d2e1f0',
      containers: ['legacy-postgres'],
    })
    .hostListener({
      protocol: 'tcp',
      address: '0.0.0.0',
      port: 22,
      holder: { pid: 611, name: 'sshd', exe: '/usr/sbin/sshd', containerId: null },
    })
    .hostListener({
      protocol: 'tcp',
      address: '127.0.0.1',
      port: 9100,
      holder: { pid: 702, name: 'node_exporter', exe: '/usr/bin/node_exporter', containerId: null },
    });
  return oldForge(newForge(withObjects, 'forge', 3998), 3999)
    .ledger(
      [...ledger045('2026-09-13T09:30:00Z'), ...forgeLedger(true, 'forge', [3998]), ...demoFound, ...demoObjects],
      {
        path: LEDGER,
        node: 'edge-7',
        adopted: true,
      },
    )
    .build();
}

// --- adopted-node: every standing of the pre-migration check at least once -----------------------
const WEB_CONF = 'listen 8080\n';
const webLabels = { 'mesh.module': 'web', 'mesh.resource': 'web.server' };
const adoptedBase = (takenAt: string) =>
  new HostModel('adopted-7', takenAt, ['/etc/mesh'])
    .file('/etc/mesh/web/web.conf', WEB_CONF)
    .file('/etc/legacy/pg.conf', 'port = 20000\n')
    .container({
      name: 'web',
      network: 'host',
      labels: webLabels,
      proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 8080 }] },
    })
    .container({
      name: 'legacy-db',
      network: 'host',
      proc: { listening: [{ protocol: 'tcp', address: '127.0.0.1', port: 20000 }] },
    });
const adoptedLedger = [
  { id: 'web.server', type: 'container', module: 'web', origin: 'declared', target: 'web', holds: [8080, 8443] },
  {
    id: 'web.conf',
    type: 'file',
    module: 'web',
    origin: 'declared',
    target: '/etc/mesh/web/web.conf',
    digest: sha256(WEB_CONF),
  },
  { id: 'legacy.db', type: 'container', origin: 'found', target: 'legacy-db', holds: [20000] },
  { id: 'legacy.pg-conf', type: 'file', origin: 'found', target: '/etc/legacy/pg.conf' },
];

function adoptedBefore(): Snapshot {
  return adoptedBase('2026-10-01T03:00:00Z')
    .file('/etc/mesh/web/old.conf', WEB_CONF)
    .container({
      name: 'web-web.server',
      network: 'host',
      labels: webLabels,
      proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 8443 }] },
    })
    .ledger(
      [
        {
          id: 'web.server',
          type: 'container',
          module: 'web',
          origin: 'declared',
          target: 'web-web.server',
          holds: [8080, 8443],
        },
        { id: 'web.conf', type: 'file', module: 'web', origin: 'declared', target: '/etc/mesh/web/old.conf' },
        ...adoptedLedger.slice(2),
      ],
      { path: LEDGER, node: 'adopted-7', adopted: true },
    )
    .build();
}

function adoptedNode(): Snapshot {
  return adoptedBase('2026-10-02T03:00:00Z')
    .file('/etc/mesh/web/old.conf', WEB_CONF) // stale: web.conf moved away from it
    .file('/etc/mesh/notes.txt', 'written by hand\n') // unknown origin, unrecorded
    .container({
      name: 'web-web.server',
      network: 'host',
      labels: webLabels,
      proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 8443 }] },
    })
    .container({
      name: 'metrics-agent',
      network: 'none',
      labels: { 'mesh.module': 'metrics', 'mesh.resource': 'metrics.agent' },
    })
    .container({ name: 'adhoc-debug', network: 'none', image: 'registry.example.invalid/busybox:1' })
    .container({ name: 'proxy', network: 'none', labels: { 'mesh.module': 'edge' } })
    .ledger(
      [
        ...adoptedLedger,
        { id: 'cache.server', type: 'container', module: 'cache', origin: 'declared', target: 'cache' },
        { id: 'proxy.server', type: 'container', module: 'proxy', origin: 'declared', target: 'proxy' },
        { id: 'edge.proxy', type: 'container', module: 'edge', origin: 'declared', target: 'proxy' },
      ],
      { path: LEDGER, node: 'adopted-7', adopted: true },
    )
    .build();
}

/** The same node after its operator resolved every blocking standing. */
function adoptedResolved(): Snapshot {
  return adoptedBase('2026-10-03T03:00:00Z')
    .file('/etc/mesh/notes.txt', 'written by hand\n')
    .container({
      name: 'web-alt',
      network: 'host',
      labels: webLabels,
      proc: { listening: [{ protocol: 'tcp', address: '0.0.0.0', port: 8443 }] },
    })
    .container({
      name: 'metrics-agent',
      network: 'none',
      labels: { 'mesh.module': 'metrics', 'mesh.resource': 'metrics.agent' },
    })
    .container({ name: 'adhoc-debug', network: 'none', image: 'registry.example.invalid/busybox:1' })
    .container({ name: 'proxy', network: 'none', labels: { 'mesh.module': 'edge' } })
    .ledger(
      [
        ...adoptedLedger,
        { id: 'web.alt', type: 'container', module: 'web', origin: 'declared', target: 'web-alt', holds: [8443] },
        { id: 'metrics.agent', type: 'container', module: 'metrics', origin: 'declared', target: 'metrics-agent' },
        { id: 'found.adhoc-debug', type: 'container', origin: 'found', target: 'adhoc-debug' },
        { id: 'found.notes', type: 'file', origin: 'found', target: '/etc/mesh/notes.txt' },
        { id: 'edge.proxy', type: 'container', module: 'edge', origin: 'declared', target: 'proxy' },
      ].map((e) => (e.id === 'web.server' ? { ...e, holds: [8080] } : e)),
      { path: LEDGER, node: 'adopted-7', adopted: true },
    )
    .build();
}

function write(path: string, snapshot: Snapshot): void {
  const file = join(ROOT, 'examples', path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(snapshot, null, 2) + '\n');
  console.log(`wrote examples/${path}`);
}

write('045/snapshot.json', example045());
write('097/snapshot.json', example097());
write('097/history/2026-09-23T06-00-00Z.json', control097Before());
write('clean/snapshot.json', exampleClean());
write('demo/snapshot.json', demo());
write('demo/history/2026-09-23T06-00-00Z.json', demoBefore());
write('adopted-node/snapshot.json', adoptedNode());
write('adopted-node/history/2026-10-01T03-00-00Z.json', adoptedBefore());
write('adopted-node/resolved/snapshot.json', adoptedResolved());
