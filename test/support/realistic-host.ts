import type { HostListener, ListeningSocket, Snapshot } from '../../src/snapshot/types.js';
import { HostModel, sha256 } from './host-model.js';

/**
 * A host shaped like the hosts mesh-audit runs on, not like the incidents' fixtures: several images
 * each with its own env and OCI labels; containers holding 15 to 40 env keys from their image and
 * their composed env file (database and cache URLs with credentials, quoted values, values with
 * spaces, `=` and `#`), 8 to 15 labels (OCI image labels, Compose labels, mesh labels), single-file
 * and folder bind mounts and named volumes, sockets on loopback, on one address and on every
 * interface (IPv4 and IPv6), published ports, stopped, restarting and created containers; a ledger
 * claiming most of it, a renamed resource whose old container is still there (097), a file rewritten
 * after its container was created (045), a container of unknown origin; the engine's networks (its defaults,
 * a project network per Compose module, one left behind by a renamed module, a stray one) and volumes (named,
 * anonymous, left behind), and the sockets listening in the host's own namespace (sshd on every interface,
 * resolvers on loopback, an exporter on one address, the host-network containers' and docker-proxy's, a kernel
 * service, one whose holder could not be read), some declared by `service` entries. Deterministic from `seed`:
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

/** A ledger claim on a network or volume: by entry `id`, the night before and/or tonight (097: it moved away). */
export interface ObjectClaim {
  id: string;
  before: boolean;
  now: boolean;
}

export interface RealisticObject {
  name: string;
  labels: Record<string, string>;
  /** Containers attached to it (a network) or mounting it (a volume), by name. */
  containers: string[];
  claim: ObjectClaim | null;
  internal?: boolean;
  driver?: string;
}

/** A process of the host itself (not in a container) and the sockets it listens on. */
export interface HostProcess {
  pid: number;
  /** Its comm, as /proc says it. */
  name: string;
  exe: string;
  sockets: ListeningSocket[];
  /** The `service` entry declaring it, or null. */
  declaredBy: { id: string; target: string; holds: number[] } | null;
}

export interface RealisticHost {
  seed: number;
  hostname: string;
  containers: RealisticContainer[];
  networks: RealisticObject[];
  volumes: RealisticObject[];
  hostProcesses: HostProcess[];
  /** Sockets no process holds (a kernel service) or whose holder could not be read (`holderUnknown`). */
  holderless: (ListeningSocket & { holderUnknown?: string })[];
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
    ...hostObjects(seed, withRuntime),
  };
}

const meshLabels = (module: string, resource: string) => ({ 'mesh.module': module, 'mesh.resource': resource });

/**
 * The networks, volumes and host sockets of a host, from a stream of their own (the containers stay as they are for
 * every seed): what Docker and Compose make for the containers, what a renamed or removed module leaves behind, and
 * the host's own services.
 */
function hostObjects(
  seed: number,
  containers: readonly RealisticContainer[],
): Pick<RealisticHost, 'networks' | 'volumes' | 'hostProcesses' | 'holderless'> {
  const o = generator(seed + 0x2600);
  const attached = (network: string) => containers.filter((c) => c.network === network).map((c) => c.name);
  const networks: RealisticObject[] = [
    { name: 'bridge', driver: 'bridge', labels: {}, containers: [], claim: null },
    { name: 'host', driver: 'host', labels: {}, containers: attached('host'), claim: null },
    { name: 'none', driver: 'null', labels: {}, containers: attached('none'), claim: null },
  ];
  const volumes: RealisticObject[] = [];
  const claimed = (c: RealisticContainer) => c.claimed || c.renamedFrom !== null;
  for (const c of containers) {
    if (c.name.endsWith('-old')) continue;
    const project = `mesh-${c.module}`;
    const compose: Record<string, string> = c.compose
      ? { 'com.docker.compose.project': project, 'com.docker.compose.version': '1.29.2' }
      : {};
    if (c.network.endsWith('_default') && !networks.some((n) => n.name === c.network))
      networks.push({
        name: c.network,
        driver: 'bridge',
        labels: {
          ...compose,
          ...(c.compose ? { 'com.docker.compose.network': 'default' } : {}),
          ...(c.meshLabelled ? meshLabels(c.module, `${c.module}.net`) : {}),
        },
        containers: attached(c.network),
        claim: claimed(c) && o.chance(0.8) ? { id: `${c.module}.net`, before: true, now: true } : null,
      });
    for (const v of c.volumes)
      volumes.push({
        name: v.name,
        labels: {
          ...compose,
          ...(c.compose ? { 'com.docker.compose.volume': v.name.slice(project.length + 1) } : {}),
          ...(c.meshLabelled ? meshLabels(c.module, `${c.module}.${v.name.slice(project.length + 1)}`) : {}),
        },
        containers: containers.filter((x) => x.volumes.some((y) => y.name === v.name)).map((x) => x.name),
        claim: claimed(c) && o.chance(0.8) ? { id: `${c.module}.volume.${v.name}`, before: true, now: true } : null,
      });
    // An image's VOLUME: an anonymous volume, made for the container and named by a digest.
    if (o.chance(0.3))
      volumes.push({
        name: sha256(`anonymous ${c.name}`).slice(7),
        labels: { 'com.docker.volume.anonymous': '' },
        containers: [c.name],
        claim: null,
      });
  }
  const module = o.pick(containers).module;
  // A renamed module (097): its network and volume entries moved to new names; the old ones stay.
  if (o.chance(0.4))
    networks.push(
      {
        name: `mesh-${module}_net`,
        driver: 'bridge',
        internal: true,
        labels: meshLabels(module, `${module}.backend`),
        containers: [],
        claim: { id: `${module}.backend`, before: true, now: false },
      },
      {
        name: `mesh-${module}-v2_net`,
        driver: 'bridge',
        internal: true,
        labels: meshLabels(module, `${module}.backend`),
        containers: [],
        claim: { id: `${module}.backend`, before: false, now: true },
      },
    );
  if (o.chance(0.4))
    volumes.push(
      {
        name: `mesh-${module}_state`,
        labels: meshLabels(module, `${module}.state`),
        containers: [],
        claim: { id: `${module}.state`, before: true, now: false },
      },
      {
        name: `mesh-${module}-v2_state`,
        labels: meshLabels(module, `${module}.state`),
        containers: [],
        claim: { id: `${module}.state`, before: false, now: true },
      },
    );
  // A module unassigned: its network and volume are claimed by nothing, with their mesh labels.
  if (o.chance(0.4))
    networks.push({
      name: 'mesh-legacy_default',
      driver: 'bridge',
      internal: o.chance(0.5),
      labels: meshLabels('legacy', 'legacy.net'),
      containers: [],
      claim: null,
    });
  if (o.chance(0.4))
    volumes.push({
      name: 'mesh-legacy_data',
      labels: meshLabels('legacy', 'legacy.data'),
      containers: [],
      claim: null,
    });
  // Made by hand, with no label: nothing says whose they are.
  if (o.chance(0.3)) networks.push({ name: 'scratch', driver: 'bridge', labels: {}, containers: [], claim: null });
  if (o.chance(0.3)) volumes.push({ name: 'backup-2026-09', labels: {}, containers: [], claim: null });

  const hostProcesses: HostProcess[] = [
    {
      pid: 612,
      name: 'sshd',
      exe: '/usr/sbin/sshd',
      sockets: [
        { protocol: 'tcp', address: '0.0.0.0', port: 22 },
        { protocol: 'tcp6', address: '::', port: 22 },
      ],
      declaredBy: o.chance(0.6) ? { id: 'host.sshd', target: 'sshd', holds: [22] } : null,
    },
    {
      pid: 401,
      name: 'systemd-resolve',
      exe: '/usr/lib/systemd/systemd-resolved',
      sockets: [
        { protocol: 'udp', address: '127.0.0.53', port: 53 },
        { protocol: 'tcp', address: '127.0.0.53', port: 53 },
      ],
      declaredBy: null,
    },
    {
      pid: 433,
      name: 'chronyd',
      exe: '/usr/sbin/chronyd',
      sockets: [{ protocol: 'udp', address: '127.0.0.1', port: 323 }],
      declaredBy: null,
    },
  ];
  if (o.chance(0.5))
    hostProcesses.push({
      pid: 980,
      name: 'node_exporter',
      exe: '/usr/local/bin/node_exporter',
      sockets: [{ protocol: 'tcp', address: '10.20.0.5', port: 9100 }],
      declaredBy: o.chance(0.5)
        ? { id: 'host.node-exporter', target: '/usr/local/bin/node_exporter', holds: [] }
        : null,
    });
  const holderless: RealisticHost['holderless'] = [];
  if (o.chance(0.2)) holderless.push({ protocol: 'tcp', address: '0.0.0.0', port: 2049 });
  if (o.chance(0.2))
    holderless.push({ protocol: 'tcp', address: '0.0.0.0', port: 5355, holderUnknown: 'pid 1312: permission denied' });
  return { networks, volumes, hostProcesses, holderless };
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
  const claims = (type: 'network' | 'volume', objects: readonly RealisticObject[]) => {
    for (const x of objects)
      if (x.claim !== null && (before ? x.claim.before : x.claim.now))
        entries.push({
          id: x.claim.id,
          type,
          target: x.name,
          origin: 'declared',
          ...(x.labels['mesh.module'] !== undefined ? { module: x.labels['mesh.module'] } : {}),
        });
  };
  for (const n of h.networks)
    m.network({ name: n.name, driver: n.driver, internal: n.internal, labels: n.labels, containers: n.containers });
  for (const v of h.volumes) m.volume({ name: v.name, labels: v.labels, containers: v.containers });
  claims('network', h.networks);
  claims('volume', h.volumes);
  for (const p of h.hostProcesses)
    if (p.declaredBy !== null) entries.push({ ...p.declaredBy, type: 'service', origin: 'declared' });
  m.ledger(entries, { node: h.hostname });
  const snapshot = m.build();
  return { ...snapshot, hostListeners: hostListeners(h, snapshot) };
}

/**
 * The sockets of the host's own network namespace, as /proc shows them: the host's processes, the running
 * host-network containers' (held by a process in the container's cgroup), docker-proxy's for each port a running
 * container publishes, and those with no process.
 */
function hostListeners(h: RealisticHost, snapshot: Snapshot): NonNullable<Snapshot['hostListeners']> {
  const sockets: HostListener[] = [];
  for (const p of h.hostProcesses)
    for (const s of p.sockets)
      sockets.push({ ...s, holder: { pid: p.pid, name: p.name, exe: p.exe, containerId: null } });
  for (const c of snapshot.containers) {
    const described = h.containers.find((x) => x.name === c.name)!;
    if (c.state.status !== 'running') continue;
    if (c.networkMode === 'host')
      for (const s of described.listening)
        sockets.push({
          ...s,
          holder: { pid: c.state.pid, name: described.module, exe: `/usr/bin/${described.module}`, containerId: c.id },
        });
    for (const p of c.ports)
      sockets.push({
        protocol: 'tcp',
        address: p.hostIp === '' ? '0.0.0.0' : p.hostIp,
        port: p.hostPort,
        holder: { pid: 9000 + p.hostPort, name: 'docker-proxy', exe: '/usr/bin/docker-proxy', containerId: null },
      });
  }
  for (const s of h.holderless) sockets.push({ ...s, holder: null });
  // One socket per protocol, address and port: a second process binding it fails (the first one holds it).
  const seen = new Set<string>();
  const bound = sockets.filter((s) => {
    const key = `${s.protocol} ${s.address} ${s.port}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  return { available: true, netns: 'net:[4026531840]', sockets: bound };
}
