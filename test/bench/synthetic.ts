/**
 * Synthetic, secret-safe snapshots for the benchmarks: built as plain JSON (no HostModel, for speed),
 * deterministic for a given (count, seed), and shaped so that every rule of the shipped pack
 * (policies/mesh-core/) has work to do and fires on a fraction of the subjects:
 *   MA1001 env drift, MA1002 replaced bind-mounted file, MA1003 stale source digest, MA2001 unclaimed
 *   container (with and without mesh labels, exposed or not), MA2002/MA2003 stale file/container at a
 *   moved target (needs the history snapshot), MA2004 unclaimed managed file, MA3001 absent target,
 *   MA3002 co-claimants, MA3003 ports vs holds, MA3004 file digest drift, MA3005 invalid entries,
 *   MA3006 adopted-node origins.
 * Containers are shaped like real ones (issue 27): 15 to 40 env keys (the image's five, then 10 to 35
 * from the env file), 6 to 14 labels (OCI; Compose on half of them; mesh on all but a few strays), two bind mounts and a named
 * volume, the processes /proc shows. The rest of the host is there as a scan records it (snapshot@2):
 * the images the containers run (one per module and version, shared), the daemon's settings, a
 * network per module and a volume per container (mesh-labelled and claimed, a few left behind: MA2007),
 * and the host's sockets (sshd, declared; the host-network containers' own).
 */
import type {
  Container,
  FileRecord,
  HostListener,
  ImageRecord,
  LedgerRecord,
  NetworkRecord,
  Snapshot,
  VolumeRecord,
} from '../../src/snapshot/types.js';
import type { SafeValue } from '../../src/secret/value.js';
import { DEBIAN_DAEMON_INFO } from '../support/host-model.js';

/** mulberry32: small, fast, deterministic. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hex(random: () => number, length: number): string {
  let s = '';
  while (s.length < length)
    s += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return s.slice(0, length);
}

/** The image's own env (the first keys of every container). */
const IMAGE_ENV_KEYS = ['PATH', 'LANG', 'GOSU_VERSION', 'APP_VERSION', 'APP_HOME'];
/** Keys of the composed env file, as real services take them; past these, `SETTING_<n>`. */
const FILE_ENV_KEYS = [
  'DATABASE_URL',
  'REDIS_URL',
  'AMQP_URL',
  'SMTP_URL',
  'SECRET_KEY',
  'OIDC_CLIENT_SECRET',
  'S3_ENDPOINT',
  'S3_ACCESS_KEY',
  'LOG_LEVEL',
  'TZ',
  'JAVA_OPTS',
  'FEATURE_FLAGS',
  'MAX_CONNECTIONS',
  'HTTP_PORT',
  'PUBLIC_URL',
  'ALLOWED_HOSTS',
  'WORKERS',
  'MODE',
];

export interface Synthetic {
  snapshot: Snapshot;
  /** One earlier snapshot of the same host, whose ledger had other targets for some ids (MA2002/MA2003). */
  history: Snapshot[];
}

/**
 * What a synthetic snapshot holds, in one sentence (a benchmark's fixture line in BENCHMARKS.md): counted
 * from the snapshot itself, so that it says what was measured.
 */
export function describeSynthetic({ snapshot, history }: Synthetic, seed: string): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const c = snapshot.containers;
  const envKeys = c.map((x) => Object.keys(x.env).length);
  const labels = c.map((x) => Object.keys(x.labels).length);
  const images = snapshot.images.available ? snapshot.images.images.length : 0;
  return (
    `synthetic snapshot (test/bench/synthetic.ts, ${seed}): ${n(c.length)} containers ` +
    `(${n(c.filter((x) => x.state.running).length)} running) from ${n(images)} image${images === 1 ? '' : 's'}, ` +
    `${Math.min(...envKeys)}–${Math.max(...envKeys)} env keys each, ${Math.min(...labels)}–${Math.max(...labels)} ` +
    `labels (OCI, Compose, mesh), ${n(c.reduce((sum, x) => sum + x.mounts.length, 0))} mounts; ` +
    `${n(snapshot.files.length)} file records (env files, bind-mounted files, Compose files, the managed root), ` +
    `${n(snapshot.ledger.entries.length)} ledger entries, ${n(snapshot.networks?.length ?? 0)} networks, ` +
    `${n(snapshot.volumes?.length ?? 0)} volumes, the daemon's settings and the host's sockets; ` +
    (history.length === 0
      ? 'no earlier snapshot of the host'
      : `${history.length} earlier snapshot(s) of the host (moved ledger targets)`)
  );
}

/** A snapshot with `count` containers (and ~4 files and ~3 ledger entries per container). */
export function syntheticSnapshot(count: number, seed = 1, hostname = 'bench-host'): Synthetic {
  const random = rng(seed);
  const pick = (p: number) => random() < p;
  const digest = (): SafeValue => ({
    digest: `hmac-sha256:${hex(random, 64)}`,
    shape: `<${8 + Math.floor(random() * 24)} chars>`,
  });
  const sha = () => `sha256:${hex(random, 64)}`;
  const containers: Container[] = [];
  const files: FileRecord[] = [];
  const entries: LedgerRecord[] = [];
  const oldEntries: LedgerRecord[] = [];
  const images = new Map<string, ImageRecord>();
  const networks = new Map<string, NetworkRecord>();
  const volumes: VolumeRecord[] = [];
  const sockets: HostListener[] = [
    {
      protocol: 'tcp',
      address: '0.0.0.0',
      port: 22,
      holder: { pid: 611, name: 'sshd', exe: '/usr/sbin/sshd', containerId: null },
    },
  ];
  const meshLabels = (module: string, resource: string) => ({
    labels: { 'mesh.module': digest(), 'mesh.resource': digest() },
    identity: { 'mesh.module': module, 'mesh.resource': resource },
  });
  let line = 2;
  let inode = 100000;
  const entry = (e: LedgerRecord['entry'], valid = true): LedgerRecord => ({
    line: line++,
    valid,
    errors: valid ? [] : ['missing field: type'],
    entry: e,
  });

  for (let i = 0; i < count; i++) {
    const mod = `mod${Math.floor(i / 4)}`;
    const name = `svc-${i}`;
    const id = hex(random, 64);
    const root = `/etc/mesh/${mod}/${name}`;
    const envPath = `${root}/service.env`;
    const iniPath = `${root}/app.ini`;
    const claimed = pick(0.85);
    const labelled = claimed || pick(0.5);
    const running = pick(0.9);
    const hostNetwork = pick(0.1);

    // 15 to 40 env keys, as on real hosts: the image's own, then the env file's (the container mostly equal to it)
    // The image: one per module (its version from the module), shared by the containers that run it, with its own env.
    const tag = `registry.example.invalid/${mod}:1.${Math.floor(i / 4) % 10}`;
    let image = images.get(tag);
    if (image === undefined) {
      const imageEnv: Record<string, SafeValue> = {};
      for (const key of IMAGE_ENV_KEYS) imageEnv[key] = digest();
      image = {
        id: sha(),
        tags: [tag],
        digests: [],
        created: '2026-08-01T00:00:00Z',
        labels: { 'org.opencontainers.image.title': digest(), 'org.opencontainers.image.version': digest() },
        env: imageEnv,
        user: i % 2 === 0 ? '1000' : '',
        healthcheck: null,
      };
      images.set(tag, image);
    }
    const imageEnv = image.env;
    const env: Record<string, SafeValue> = { ...imageEnv };
    const envEntries: FileRecord['env'] = [];
    const fileKeys = 10 + Math.floor(random() * 26);
    for (let k = 0; k < fileKeys; k++) {
      const key = FILE_ENV_KEYS[k] ?? `SETTING_${k}`;
      const v = digest();
      env[key] = pick(0.003) ? digest() : v;
      envEntries.push({ key, value: v, line: k + 3 });
    }
    const envSha = sha();
    const envInode = inode++;
    files.push({
      path: envPath,
      kind: 'file',
      size: 400,
      mode: '0640',
      uid: 0,
      gid: 0,
      mtime: '2026-09-24T02:00:00Z',
      inode: envInode,
      sha256: envSha,
      env: envEntries,
    });
    const iniSha = sha();
    const iniInode = inode++;
    const iniReplaced = pick(0.05);
    files.push({
      path: iniPath,
      kind: 'file',
      size: 120,
      mode: '0644',
      uid: 0,
      gid: 0,
      mtime: '2026-09-24T02:00:00Z',
      inode: iniInode,
      sha256: iniSha,
    });
    // an unclaimed file under the managed root, sometimes
    if (pick(0.2))
      files.push({
        path: `${root}/leftover.conf`,
        kind: 'file',
        size: 10,
        mode: '0644',
        uid: 0,
        gid: 0,
        mtime: '2026-09-01T00:00:00Z',
        inode: inode++,
        sha256: sha(),
      });
    // a file at an old target (MA2002), sometimes
    const fileMoved = claimed && pick(0.03);
    if (fileMoved)
      files.push({
        path: `${root}/old.ini`,
        kind: 'file',
        size: 120,
        mode: '0644',
        uid: 0,
        gid: 0,
        mtime: '2026-08-01T00:00:00Z',
        inode: inode++,
        sha256: sha(),
      });
    const dataDir = `/srv/${name}`;
    files.push({
      path: dataDir,
      kind: 'directory',
      mode: '0755',
      uid: 0,
      gid: 0,
      mtime: '2026-09-01T00:00:00Z',
      inode: inode++,
    });

    const holds = [8000 + (i % 1000)];
    const ports: Container['ports'] = hostNetwork
      ? []
      : [
          {
            containerPort: 80,
            protocol: 'tcp',
            hostIp: pick(0.5) ? '0.0.0.0' : '127.0.0.1',
            hostPort: pick(0.95) ? holds[0]! : 9000 + (i % 1000),
          },
        ];
    // 6 to 14 labels: the image's OCI labels and a team label, Compose's when it made the container, mesh's.
    const compose = pick(0.5);
    // The Compose file its labels name, as the scan records it (its services' inline keys, no value).
    if (compose)
      files.push({
        path: `${root}/docker-compose.yml`,
        kind: 'file',
        size: 300,
        mode: '0644',
        uid: 0,
        gid: 0,
        mtime: '2026-09-24T02:00:00Z',
        inode: inode++,
        sha256: sha(),
        compose: { services: { [name]: { environment: ['TZ'] } } },
      });
    const labels: Record<string, string> = {
      'org.opencontainers.image.title': mod,
      'org.opencontainers.image.version': `1.${i % 10}`,
      'org.opencontainers.image.source': `https://git.example.invalid/${mod}`,
      ...(compose
        ? {
            'com.docker.compose.project': `mesh-${mod}`,
            'com.docker.compose.service': name,
            'com.docker.compose.container-number': '1',
            'com.docker.compose.config-hash': hex(random, 64),
            'com.docker.compose.version': '1.29.2',
            'com.docker.compose.project.config_files': `${root}/docker-compose.yml`,
          }
        : { 'org.opencontainers.image.revision': hex(random, 40), 'org.opencontainers.image.licenses': 'MIT' }),
      ...(labelled
        ? {
            'mesh.module': mod,
            'mesh.resource': `${mod}.${name}`,
            'mesh.sources': envPath,
            'mesh.source-digests': pick(0.05) ? sha() : envSha,
          }
        : {}),
      'com.example.team': 'bench',
    };
    containers.push({
      id,
      name,
      image: tag,
      imageId: image.id,
      created: '2026-09-01T10:00:00Z',
      labels,
      state: {
        status: running ? 'running' : 'exited',
        running,
        pid: running ? 10000 + i : 0,
        startedAt: '2026-09-01T10:00:01Z',
        finishedAt: running ? null : '2026-09-02T00:00:00Z',
        restartCount: 0,
      },
      env,
      imageEnv,
      networkMode: hostNetwork ? 'host' : 'bridge',
      // The settings real containers carry (from `i`, not the generator: the rest of the host stays as it was).
      runtime: {
        privileged: false,
        capAdd: i % 11 === 0 ? ['NET_ADMIN'] : [],
        capDrop: i % 3 === 0 ? ['ALL'] : [],
        securityOpt: i % 3 === 0 ? ['no-new-privileges'] : [],
        appArmorProfile: 'docker-default',
        pidMode: '',
        ipcMode: 'private',
        utsMode: '',
        usernsMode: '',
        cgroupnsMode: 'private',
        readonlyRootfs: i % 5 === 0,
        memory: i % 2 === 0 ? 512 * 1024 * 1024 : 0,
        memorySwap: 0,
        nanoCpus: i % 4 === 0 ? 1_000_000_000 : 0,
        cpuShares: 0,
        pidsLimit: i % 4 === 0 ? 256 : null,
        restartPolicy: { name: compose ? 'unless-stopped' : 'always', maxRetries: 0 },
        devices: [],
        ulimits: [],
        cgroupParent: '',
        user: i % 2 === 0 ? '1000:1000' : '',
        logDriver: 'json-file',
        networks: hostNetwork ? ['host'] : [`mesh-${mod}_default`],
        health: i % 3 === 1 ? 'healthy' : 'none',
        restarting: false,
        oomKilled: false,
        exitCode: 0,
        command: [{ digest: `hmac-sha256:${id}`, shape: '<14 chars>' }],
        entrypoint: null,
        healthcheck: i % 3 === 1,
      },
      mounts: [
        { type: 'bind', source: iniPath, destination: '/app/app.ini', rw: false },
        { type: 'bind', source: dataDir, destination: '/data', rw: true },
        { type: 'volume', source: `/var/lib/docker/volumes/${name}/_data`, destination: '/cache', rw: true, name },
      ],
      ports,
      proc: running
        ? {
            available: true,
            env,
            processes: ['tini', 'app'],
            listening: hostNetwork
              ? [{ protocol: 'tcp', address: pick(0.5) ? '0.0.0.0' : '127.0.0.1', port: holds[0]! }]
              : [],
            boundFiles: [
              {
                destination: '/app/app.ini',
                source: iniPath,
                inode: iniReplaced ? inode++ : iniInode,
                sha256: iniReplaced ? sha() : iniSha,
              },
            ],
          }
        : { available: false, reason: 'container not running' },
    });

    // Its module's network (Compose's default one, or the mesh's), its named volume, its sockets on the host.
    const networkName = `mesh-${mod}_default`;
    if (!hostNetwork) {
      let network = networks.get(networkName);
      if (network === undefined) {
        network = {
          id: hex(random, 64),
          name: networkName,
          driver: 'bridge',
          scope: 'local',
          internal: false,
          created: '2026-09-01T09:59:00Z',
          ...meshLabels(mod, `${mod}.net`),
          containers: [],
        };
        networks.set(networkName, network);
        // a network the mesh made and claims (one module in 50 left it behind: MA2005)
        if (i % 200 !== 0)
          entries.push(
            entry({ id: `${mod}.net`, type: 'network', target: networkName, origin: 'declared', module: mod }),
          );
      }
      network.containers.push(name);
    }
    volumes.push({
      name,
      driver: 'local',
      scope: 'local',
      mountpoint: `/var/lib/docker/volumes/${name}/_data`,
      created: '2026-09-01T10:00:00Z',
      ...meshLabels(mod, `${mod}.${name}.cache`),
      containers: [name],
    });
    // a volume the mesh made and claims, unless the container is unclaimed (then so is its volume: MA2007)
    if (claimed)
      entries.push(
        entry({ id: `${mod}.${name}.cache`, type: 'volume', target: name, origin: 'declared', module: mod }),
      );
    const self = containers.at(-1)!;
    if (self.proc.available)
      for (const l of self.proc.listening)
        sockets.push({
          ...l,
          holder: { pid: self.state.pid, name: 'app', exe: '/usr/local/bin/app', containerId: id },
        });

    if (claimed) {
      const cid = `${mod}.${name}`;
      entries.push(
        entry({
          id: cid,
          type: 'container',
          target: name,
          origin: 'declared',
          module: mod,
          holds,
          sources: [envPath],
          applied_at: '2026-09-13T08:00:00Z',
        }),
      );
      entries.push(
        entry({
          id: `${cid}.env`,
          type: 'file',
          target: envPath,
          origin: 'declared',
          module: mod,
          digest: pick(0.05) ? sha() : envSha,
          applied_at: '2026-09-13T08:00:00Z',
        }),
      );
      if (compose)
        entries.push(
          entry({
            id: `${cid}.compose`,
            type: 'file',
            target: `${root}/docker-compose.yml`,
            origin: 'declared',
            module: mod,
            applied_at: '2026-09-13T08:00:00Z',
          }),
        );
      entries.push(
        entry({
          id: `${cid}.ini`,
          type: 'file',
          target: iniPath,
          origin: pick(0.02) ? 'found' : 'declared',
          module: mod,
          digest: iniSha,
          applied_at: '2026-09-13T08:00:00Z',
        }),
      );
      oldEntries.push({
        line: oldEntries.length + 2,
        valid: true,
        errors: [],
        entry: {
          id: cid,
          type: 'container',
          target: pick(0.03) ? `${name}-old` : name,
          origin: 'declared',
          module: mod,
        },
      });
      oldEntries.push({
        line: oldEntries.length + 2,
        valid: true,
        errors: [],
        entry: {
          id: `${cid}.ini`,
          type: 'file',
          target: fileMoved ? `${root}/old.ini` : iniPath,
          origin: 'declared',
          module: mod,
        },
      });
      // a target that is gone (MA3001: the scan looked for it, as it does for every ledger target, and
      // recorded it missing), a second claimant (MA3002), an invalid entry (MA3005)
      if (pick(0.02)) {
        entries.push(
          entry({ id: `${cid}.gone`, type: 'file', target: `${root}/gone.conf`, origin: 'declared', module: mod }),
        );
        files.push({ path: `${root}/gone.conf`, kind: 'missing' });
      }
      if (pick(0.02))
        entries.push(entry({ id: `${cid}.twin`, type: 'container', target: name, origin: 'declared', module: mod }));
      if (pick(0.01)) entries.push(entry({ id: `${cid}.broken`, target: name }, false));
    }
  }
  // old containers left at moved names (MA2003): present, claimed by nobody now
  for (const r of oldEntries) {
    if (r.entry.type === 'container' && r.entry.target!.endsWith('-old')) {
      const base = containers.find((c) => c.name === r.entry.target!.slice(0, -4));
      if (base) containers.push({ ...base, id: hex(random, 64), name: r.entry.target!, mounts: [], ports: [] });
    }
  }
  for (const [i, f] of files.entries())
    if (f.kind === 'file' && i % 97 === 0) files[i] = { path: f.path, kind: 'missing' };

  // sshd, as the ledger declares the host's own services
  entries.push(
    entry({
      id: 'host.sshd',
      type: 'service',
      target: 'sshd',
      origin: 'found',
      holds: [22],
      applied_at: '2026-09-01T00:00:00Z',
    }),
  );
  const base = {
    schema: 'mesh-audit/snapshot@2' as const,
    images: {
      available: true as const,
      images: [...images.values()],
      tags: Object.fromEntries([...images].map(([tag, image]) => [tag, image.id])),
    },
    daemon: {
      info: { available: true as const, ...DEBIAN_DAEMON_INFO },
      config: { available: true as const, exists: true, settings: { 'log-driver': 'json-file', 'live-restore': true } },
      process: { available: true as const, running: true, args: [], flags: {} },
      paths: [],
    },
    tool: { name: 'mesh-audit', version: '0.1.0' },
    host: { hostname },
    config: {
      managedRoots: ['/etc/mesh'],
      labels: {
        module: 'mesh.module',
        resource: 'mesh.resource',
        sources: 'mesh.sources',
        sourceDigests: 'mesh.source-digests',
      },
    },
    docker: { endpoint: 'unix:///var/run/docker.sock', serverVersion: '26.1.5', apiVersion: '1.45', local: true },
    problems: [],
  };
  const snapshot: Snapshot = {
    ...base,
    takenAt: '2026-09-24T03:00:00Z',
    containers: containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    files: files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    ledger: { path: '/var/lib/mesh-host/ledger.json', available: true, node: hostname, adopted: true, entries },
    networks: [...networks.values()],
    volumes,
    hostListeners: { available: true, netns: 'net:[4026531840]', sockets },
  };
  const earlier: Snapshot = {
    ...base,
    takenAt: '2026-09-10T03:00:00Z',
    containers: [],
    files: [],
    ledger: {
      path: '/var/lib/mesh-host/ledger.json',
      available: true,
      node: hostname,
      adopted: true,
      entries: oldEntries,
    },
  };
  return { snapshot, history: [earlier] };
}
