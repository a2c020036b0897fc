import type { ListeningSocket, Snapshot } from '../../src/snapshot/types.js';
import { HostModel, sha256 } from './host-model.js';

/**
 * A host shaped like the hosts mesh-audit runs on, not like the incidents' fixtures: several images
 * each with its own env and OCI labels; containers holding 15 to 40 env keys from their image and
 * their composed env file (database and cache URLs with credentials, quoted values, values with
 * spaces, `=` and `#`), 8 to 15 labels (OCI image labels, Compose labels, mesh labels), single-file
 * and folder bind mounts and named volumes, sockets on loopback, on one address and on every
 * interface (IPv4 and IPv6), published ports, stopped, restarting and created containers; a ledger
 * claiming most of it, a renamed resource whose old container is still there (097), a file rewritten
 * after its container was created (045), a container of unknown origin. Deterministic from `seed`:
 * the same seed gives the same host (and, built twice, the same facts under another HMAC key).
 *
 * `realisticHost(seed)` is the plain description; `buildRealistic` turns it into a snapshot (or the
 * snapshot of the night before, `before: true`: the ledger still at the old target, the file before
 * it was rewritten).
 */

/** mulberry32: a small, seedable generator (tests need the same host from the same seed, everywhere). */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(list: readonly T[]): T => list[int(0, list.length - 1)]!;
  const chance = (p: number): boolean => next() < p;
  const token = (length: number): string =>
    Array.from({ length }, () => pick([...'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789'])).join('');
  const shuffle = <T>(list: readonly T[]): T[] => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  return { int, pick, chance, token, shuffle };
}

interface Image {
  ref: string;
  env: Record<string, string>;
  labels: Record<string, string>;
  /** Ports the service listens on inside. */
  ports: number[];
}

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Images as their registries ship them: their own env and OCI labels. */
const IMAGES: readonly Image[] = [
  {
    ref: 'docker.io/library/postgres:16.4-bookworm',
    env: {
      PATH: `/usr/lib/postgresql/16/bin:${PATH}`,
      GOSU_VERSION: '1.17',
      LANG: 'en_US.utf8',
      PG_MAJOR: '16',
      PG_VERSION: '16.4-1.pgdg120+1',
      PGDATA: '/var/lib/postgresql/data',
    },
    labels: {},
    ports: [5432],
  },
  {
    ref: 'docker.io/library/nginx:1.27.1',
    env: {
      PATH,
      NGINX_VERSION: '1.27.1',
      NJS_VERSION: '0.8.5',
      NJS_RELEASE: '1~bookworm',
      PKG_RELEASE: '1~bookworm',
      DYNPKG_RELEASE: '2~bookworm',
    },
    labels: { maintainer: 'NGINX Docker Maintainers <docker-maint@nginx.com>' },
    ports: [80, 443],
  },
  {
    ref: 'docker.gitea.com/gitea:1.22.2',
    env: { PATH, USER: 'git', GITEA_CUSTOM: '/data/gitea' },
    labels: {
      'org.opencontainers.image.title': 'Gitea',
      'org.opencontainers.image.source': 'https://github.com/go-gitea/gitea',
      'org.opencontainers.image.version': '1.22.2',
    },
    ports: [3000, 22],
  },
  {
    ref: 'docker.io/library/redis:7.4.0-alpine',
    env: {
      PATH,
      GOSU_VERSION: '1.17',
      REDIS_VERSION: '7.4.0',
      REDIS_DOWNLOAD_URL: 'http://download.redis.io/releases/redis-7.4.0.tar.gz',
      REDIS_DOWNLOAD_SHA: '57b47c2c6682636d697dbf5d66d8d495b4e653afc9cd32b7adf9da3e433b8aaf',
    },
    labels: {},
    ports: [6379],
  },
  {
    ref: 'registry.example.invalid/platform/api:2.3.1',
    env: {
      PATH: `/usr/local/lib/nodejs/bin:${PATH}`,
      NODE_VERSION: '20.17.0',
      YARN_VERSION: '1.22.22',
      NODE_ENV: 'production',
      LANG: 'C.UTF-8',
    },
    labels: {
      'org.opencontainers.image.title': 'api',
      'org.opencontainers.image.version': '2.3.1',
      'org.opencontainers.image.revision': '8f2c1e0b9d4a7c3e6f5a1b2c3d4e5f6a7b8c9d0e',
      'org.opencontainers.image.source': 'https://git.example.invalid/platform/api',
      'org.opencontainers.image.created': '2026-08-30T12:04:51Z',
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.vendor': 'Example',
    },
    ports: [8080, 9090],
  },
  {
    ref: 'docker.io/grafana/grafana-oss:11.2.0',
    env: {
      PATH: `/usr/share/grafana/bin:${PATH}`,
      GF_PATHS_CONFIG: '/etc/grafana/grafana.ini',
      GF_PATHS_DATA: '/var/lib/grafana',
      GF_PATHS_HOME: '/usr/share/grafana',
      GF_PATHS_LOGS: '/var/log/grafana',
      GF_PATHS_PLUGINS: '/var/lib/grafana/plugins',
      GF_PATHS_PROVISIONING: '/etc/grafana/provisioning',
    },
    labels: { maintainer: 'Grafana Labs <hello@grafana.com>' },
    ports: [3000],
  },
];

/** One key of a composed env file: its value, and how the file writes it (as Compose reads it: the value). */
interface EnvLine {
  key: string;
  value: string;
  written: string;
}

export interface RealisticContainer {
  name: string;
  image: Image;
  module: string;
  status: 'running' | 'exited' | 'restarting' | 'created';
  network: string;
  /** Composed env file (under /etc/mesh), or null. */
  envFile: string | null;
  /** The file's lines as the container was created from them. */
  fileLines: EnvLine[];
  /** Keys the file says otherwise tonight (045): each gets a new value. */
  rewritten: string[];
  /**
   * Env given inline, not in the file: `docker run -e` (declared by the ledger entry's `env:`) or Compose's
   * `environment:` (in the Compose file its labels name).
   */
  extraEnv: Record<string, string>;
  labels: Record<string, string>;
  compose: boolean;
  meshLabelled: boolean;
  configFile: string | null;
  /** The container still sees the config file's old inode (replaced by rename). */
  pinned: boolean;
  dataDir: string | null;
  volumes: { name: string; destination: string }[];
  publish: string[];
  listening: ListeningSocket[];
  /** `/proc` not readable for this container (another pid namespace), beside the stopped ones. */
  procUnreadable: boolean;
  claimed: boolean;
  /** The ledger id moved to this container from `<name>-old`, which is still on the host. */
  renamedFrom: string | null;
  /** Its healthcheck's state (`none`: no healthcheck); a stopped one keeps the last. */
  health: 'healthy' | 'unhealthy' | 'starting' | 'none';
  /** Its last run was killed for lack of memory. */
  oomKilled: boolean;
}

export interface RealisticHost {
  seed: number;
  hostname: string;
  containers: RealisticContainer[];
  /** Files under /etc/mesh no ledger entry claims. */
  strayFiles: string[];
  /** An image reference whose tag was pulled anew after its containers were made, or null. */
  movedTag: string | null;
}

const MODULES = ['forge', 'db', 'cache', 'proxy', 'api', 'metrics', 'auth', 'queue', 'search', 'mail'] as const;

/** File keys of the kinds real services take, and how each is written. */
function fileLinesFor(g: ReturnType<typeof generator>, module: string, count: number): EnvLine[] {
  const secret = () => g.token(g.int(16, 32));
  const candidates: (() => EnvLine)[] = [
    () => ({
      key: 'DATABASE_URL',
      value: `postgresql://${module}:${secret()}@db.mesh.internal:${g.pick([5432, 20000])}/${module}`,
      written: '',
    }),
    () => ({ key: 'REDIS_URL', value: `redis://:${secret()}@127.0.0.1:6379/${g.int(0, 3)}`, written: '' }),
    () => ({ key: 'AMQP_URL', value: `amqp://${module}:${secret()}@queue.mesh.internal:5672/%2F`, written: '' }),
    () => ({
      key: 'SMTP_URL',
      value: `smtps://${module}%40example.invalid:${secret()}@mail.example.invalid:465`,
      written: '',
    }),
    () => ({ key: 'SECRET_KEY', value: secret(), written: '' }),
    () => ({ key: 'OIDC_CLIENT_SECRET', value: secret(), written: '' }),
    () => ({ key: 'S3_ENDPOINT', value: 'https://s3.example.invalid', written: '' }),
    () => ({ key: 'S3_ACCESS_KEY', value: g.token(20), written: '' }),
    () => ({ key: 'LOG_LEVEL', value: g.pick(['info', 'debug', 'warn']), written: '' }),
    () => ({ key: 'TZ', value: 'Europe/Berlin', written: '' }),
    () => ({ key: 'GREETING', value: 'Welcome to the forge', written: 'quoted' }),
    () => ({ key: 'JAVA_OPTS', value: '-Xmx512m -Xms128m -Dfile.encoding=UTF-8', written: 'quoted' }),
    () => ({ key: 'FEATURE_FLAGS', value: 'search,webhooks beta', written: 'quoted' }),
    () => ({ key: 'BANNER', value: 'it works', written: 'single' }),
    () => ({ key: 'QUERY', value: 'a=b&c=d', written: '' }),
    () => ({ key: 'COLOR', value: '#00ff00', written: 'quoted' }),
    () => ({ key: 'EMPTY_DEFAULT', value: '', written: '' }),
    () => ({ key: 'MAX_CONNECTIONS', value: String(g.int(10, 500)), written: '' }),
    () => ({ key: 'HTTP_PORT', value: String(g.pick([3000, 8080, 8443])), written: '' }),
    () => ({ key: 'PUBLIC_URL', value: `https://${module}.example.invalid/`, written: '' }),
    () => ({ key: 'ALLOWED_HOSTS', value: `${module}.example.invalid,localhost`, written: '' }),
  ];
  const lines: EnvLine[] = [];
  for (const make of g.shuffle(candidates)) {
    if (lines.length >= count) break;
    lines.push(make());
  }
  for (let i = lines.length; i < count; i++)
    lines.push({ key: `${module.toUpperCase()}_SETTING_${i}`, value: g.token(g.int(1, 12)), written: '' });
  return lines.map((l) => ({
    ...l,
    written: l.written === 'quoted' ? `"${l.value}"` : l.written === 'single' ? `'${l.value}'` : l.value,
  }));
}

/**
 * The Compose file a Compose-made container of the model was made from (its labels name it): its service reads the
 * env file (`env_file:`) and gives the container's own keys inline (`environment:`, in the map form or the list form,
 * as real files do both). What docker-compose 1.29 reads; values included, as written (the scanner keeps only keys).
 */
export function composeFileText(c: RealisticContainer, network: string): string {
  const own = Object.entries(c.extraEnv);
  const listForm = c.module.length % 2 === 0;
  return [
    'version: "2.4"',
    'services:',
    `  ${c.module}:`,
    `    image: ${JSON.stringify(c.image.ref)}`,
    `    network_mode: ${network}`,
    ...(c.envFile !== null ? [`    env_file: [${JSON.stringify(c.envFile.split('/').at(-1)!)}]`] : []),
    ...(own.length === 0
      ? []
      : listForm
        ? ['    environment:', ...own.map(([k, v]) => `      - ${k}=${v}`)]
        : ['    environment:', ...own.map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`)]),
    '    restart: unless-stopped',
    '',
  ].join('\n');
}

const fileText = (lines: readonly EnvLine[], header: string, eol: string): string =>
  `# ${header}\n# written by mesh-host; do not edit${eol}\n` + lines.map((l) => `${l.key}=${l.written}${eol}`).join('');

export function realisticHost(seed: number): RealisticHost {
  const g = generator(seed);
  const count = g.int(4, 9);
  const modules = g.shuffle(MODULES).slice(0, count);
  const containers: RealisticContainer[] = modules.map((module, i): RealisticContainer => {
    const image = g.pick(IMAGES);
    const status =
      i === 0
        ? 'running'
        : g.pick(['running', 'running', 'running', 'running', 'exited', 'restarting', 'created'] as const);
    const network = g.pick(['host', 'host', 'none', `${module}_default`]);
    const compose = g.chance(0.5);
    const meshLabelled = g.chance(0.85);
    const totalEnv = g.int(15, 40);
    const imageKeys = Object.keys(image.env).length;
    const extraCount = g.int(0, 2);
    const fileLines = fileLinesFor(g, module, Math.max(1, totalEnv - imageKeys - extraCount));
    const envFile = `/etc/mesh/${module}/${module}.env`;
    const rewritten = g.chance(0.25) ? [g.pick(fileLines).key] : [];
    const extraEnv: Record<string, string> = {};
    for (let k = 0; k < extraCount; k++)
      extraEnv[g.pick(['GOMAXPROCS', 'UMASK', 'INSTANCE_ID'])] = String(g.int(1, 64));
    const project = `mesh-${module}`;
    const labels: Record<string, string> = {
      ...image.labels,
      ...(image.labels['org.opencontainers.image.title'] === undefined
        ? {
            'org.opencontainers.image.title': image.ref.split('/').at(-1)!.split(':')[0]!,
            'org.opencontainers.image.version': image.ref.split(':').at(-1)!,
            'org.opencontainers.image.source': `https://github.com/docker-library/${module}`,
          }
        : {}),
      ...(compose
        ? {
            'com.docker.compose.project': project,
            'com.docker.compose.service': module,
            'com.docker.compose.container-number': '1',
            'com.docker.compose.oneoff': 'False',
            'com.docker.compose.config-hash': sha256(`${module}/${seed}`).slice(7),
            'com.docker.compose.version': '1.29.2',
            'com.docker.compose.project.config_files': `/etc/mesh/${module}/docker-compose.yml`,
            'com.docker.compose.project.working_dir': `/etc/mesh/${module}`,
          }
        : { 'org.opencontainers.image.created': '2026-08-30T12:04:51Z', 'org.opencontainers.image.licenses': 'MIT' }),
      ...(meshLabelled
        ? {
            'mesh.module': module,
            'mesh.resource': `${module}.server`,
            'mesh.sources': envFile,
            'mesh.source-digests': '' /* set at build */,
          }
        : {}),
      'traefik.enable': String(g.chance(0.5)),
      [`traefik.http.routers.${module}.rule`]: `Host(\`${module}.example.invalid\`)`,
      'com.centurylinklabs.watchtower.enable': 'false',
    };
    // At most 15, as on real hosts: the image's less useful OCI labels go first.
    for (const key of [
      'org.opencontainers.image.licenses',
      'org.opencontainers.image.vendor',
      'org.opencontainers.image.created',
      'maintainer',
      'com.docker.compose.oneoff',
      'traefik.enable',
    ]) {
      if (Object.keys(labels).length > 15) delete labels[key];
    }
    const port = () => g.pick(image.ports) + g.int(0, 1) * 10000;
    const listening: ListeningSocket[] = [];
    const reach = g.pick(['loopback', 'loopback', 'all', 'address', 'mixed'] as const);
    for (let k = 0; k < g.int(1, 3); k++) {
      const p = port();
      if (reach === 'loopback')
        listening.push({ protocol: g.pick(['tcp', 'tcp6'] as const), address: g.pick(['127.0.0.1', '::1']), port: p });
      else if (reach === 'all')
        listening.push(
          g.chance(0.5)
            ? { protocol: 'tcp', address: '0.0.0.0', port: p }
            : { protocol: 'tcp6', address: '::', port: p },
        );
      else if (reach === 'address')
        listening.push(
          { protocol: 'tcp', address: '127.0.0.1', port: p },
          { protocol: 'tcp', address: '10.20.0.5', port: p + 1 },
        );
      else
        listening.push(
          { protocol: 'tcp', address: '127.0.0.1', port: p },
          { protocol: 'udp', address: '0.0.0.0', port: p + 2 },
        );
    }
    const publish = network.endsWith('_default')
      ? [g.pick(['127.0.0.1', '0.0.0.0', '']) + `:${18000 + i}:${image.ports[0]}/tcp`]
      : [];
    const stateful =
      image.ref.includes('postgres') ||
      image.ref.includes('gitea') ||
      image.ref.includes('grafana') ||
      image.ref.includes('redis');
    return {
      // Set below, from a stream of their own.
      health: 'none',
      oomKilled: false,
      name: compose ? `${project}_${module}_1` : module,
      image,
      module,
      status,
      network,
      envFile,
      fileLines,
      rewritten,
      extraEnv,
      labels,
      compose,
      meshLabelled,
      configFile: g.chance(0.6) ? `/etc/mesh/${module}/${module}.conf` : null,
      pinned: g.chance(0.2),
      dataDir: g.chance(0.5) ? `/srv/${module}` : null,
      volumes: stateful
        ? [
            { name: `${project}_data`, destination: '/var/lib/data' },
            ...(g.chance(0.3) ? [{ name: `${project}_logs`, destination: '/var/log/app' }] : []),
          ]
        : [],
      publish,
      listening,
      procUnreadable: g.chance(0.1),
      // The first container is claimed; an unclaimed one is a 097 leftover (mesh labels) or of unknown origin.
      claimed: i === 0 || g.chance(0.7),
      renamedFrom: null,
    };
  });
  // A renamed resource: the ledger moved from `<name>-old` to `<name>`, and the old container stays.
  if (g.chance(0.6)) {
    const moved = containers.find((c) => c.claimed);
    if (moved) {
      moved.renamedFrom = `${moved.name}-old`;
      containers.push({
        ...moved,
        name: `${moved.name}-old`,
        claimed: false,
        renamedFrom: null,
        status: g.pick(['running', 'exited'] as const),
        volumes: [],
      });
    }
  }
  // Health, OOM kills and a moved tag from a stream of their own: the rest of the host stays as it was
  // for every seed (tests and benchmarks name seeds).
  const t = generator(seed + 0x2500);
  const withRuntime = containers.map((c) => ({
    ...c,
    health: t.pick(['healthy', 'healthy', 'none', 'unhealthy', 'starting'] as const),
    oomKilled: c.status === 'exited' && t.chance(0.3),
  }));
  return {
    seed,
    hostname: `node-${seed % 1000}`,
    containers: withRuntime,
    strayFiles: g.chance(0.5) ? ['/etc/mesh/leftover.ini'] : [],
    movedTag: t.chance(0.5) ? t.pick(withRuntime).image.ref : null,
  };
}

/** The snapshot of a realistic host (`before`: the night before — old ledger targets, files as they were). */
export function buildRealistic(h: RealisticHost, takenAt: string, options: { before?: boolean } = {}): Snapshot {
  const before = options.before ?? false;
  const m = new HostModel(h.hostname, takenAt);
  const entries: Record<string, unknown>[] = [];
  const seenFiles = new Set<string>();
  for (const c of h.containers) {
    const createdLines = c.fileLines;
    const nowLines = before
      ? createdLines
      : createdLines.map((l) =>
          c.rewritten.includes(l.key) ? { ...l, value: `${l.value}-v2`, written: `${l.value}-v2` } : l,
        );
    const eol = c.compose ? '\r\n' : '\n';
    const createdText = fileText(createdLines, c.module, eol);
    if (c.envFile !== null && !seenFiles.has(c.envFile)) {
      seenFiles.add(c.envFile);
      m.file(c.envFile, fileText(nowLines, c.module, eol), { mode: '0600' });
      entries.push({
        id: `${c.module}.env`,
        type: 'file',
        target: c.envFile,
        origin: 'declared',
        module: c.module,
        digest: sha256(fileText(nowLines, c.module, eol)),
      });
    }
    // A Compose-made container's Compose file, where its labels say (the mesh writes it and records it).
    const composeFile = c.compose ? c.labels['com.docker.compose.project.config_files'] : undefined;
    if (composeFile !== undefined && !seenFiles.has(composeFile)) {
      seenFiles.add(composeFile);
      m.file(composeFile, composeFileText(c, c.network.endsWith('_default') ? 'bridge' : c.network), {
        compose: true,
      });
      entries.push({
        id: `${c.module}.compose`,
        type: 'file',
        target: composeFile,
        origin: 'declared',
        module: c.module,
      });
    }
    if (c.configFile !== null && !seenFiles.has(c.configFile)) {
      seenFiles.add(c.configFile);
      m.file(c.configFile, `[server]\nname = ${c.module}\n`, { env: false });
      entries.push({
        id: `${c.module}.config`,
        type: 'file',
        target: c.configFile,
        origin: 'declared',
        module: c.module,
      });
    }
    if (c.dataDir !== null && !seenFiles.has(c.dataDir)) {
      seenFiles.add(c.dataDir);
      m.record({
        path: c.dataDir,
        kind: 'directory',
        mode: '0750',
        uid: 999,
        gid: 999,
        mtime: takenAt,
        inode: 70000 + seenFiles.size,
      });
    }
    const env: Record<string, string> = {
      ...c.image.env,
      ...Object.fromEntries(createdLines.map((l) => [l.key, l.value])),
      ...c.extraEnv,
    };
    const labels = { ...c.labels };
    if (c.meshLabelled) labels['mesh.source-digests'] = sha256(createdText);
    const hasProcess = c.status === 'running';
    m.container({
      name: c.name,
      image: c.image.ref,
      imageEnv: c.image.env,
      status: c.status,
      state: {
        OOMKilled: c.oomKilled,
        ExitCode: c.status === 'exited' ? (c.oomKilled ? 137 : 0) : 0,
        ...(c.health !== 'none' ? { Health: { Status: c.health } } : {}),
      },
      ...(c.health !== 'none'
        ? { config: { Healthcheck: { Test: ['CMD-SHELL', `wget -q -O- http://127.0.0.1/${c.module}/health`] } } }
        : {}),
      network: c.network,
      env,
      labels,
      binds: [
        ...(c.configFile !== null ? [{ source: c.configFile, destination: `/etc/${c.module}/${c.module}.conf` }] : []),
        ...(c.dataDir !== null ? [{ source: c.dataDir, destination: '/data', rw: true }] : []),
      ],
      volumes: c.volumes,
      publish: c.publish,
      ...(c.procUnreadable && hasProcess
        ? { proc: 'pid 4000 is not running here (exited, or another pid namespace?)' }
        : {
            proc: {
              listening: c.listening,
              ...(c.pinned && c.configFile !== null
                ? { bound: [{ destination: `/etc/${c.module}/${c.module}.conf`, text: '[server]\n', inode: 49 }] }
                : {}),
            },
          }),
    });
    const id = `${c.module}.server`;
    if (c.claimed) {
      const target = before && c.renamedFrom !== null ? c.renamedFrom : c.name;
      // What it really opens: its sockets on the host network, else its published ports.
      const opens =
        c.network === 'host' ? c.listening.map((l) => l.port) : c.publish.map((p) => Number(p.split(':')[1]));
      entries.push({
        id,
        type: 'container',
        target,
        origin: 'declared',
        module: c.module,
        holds: [...new Set(opens)].sort((a, b) => a - b),
        sources: c.envFile !== null ? [c.envFile] : [],
        // What `docker run -e` gave it: the keys the mesh gives inline (Compose's are in its Compose file).
        ...(!c.compose && Object.keys(c.extraEnv).length > 0 ? { env: Object.keys(c.extraEnv).sort() } : {}),
      });
    }
  }
  for (const path of h.strayFiles) m.file(path, 'stale = true\n', { env: false });
  if (!before && h.movedTag !== null) m.moveTag(h.movedTag, `${h.movedTag} rebuilt`);
  m.ledger(entries, { node: h.hostname });
  return m.build();
}
