import { spawnSync } from 'node:child_process';
import { SECRET_LABEL_PREFIX } from '../../src/secret/labels.js';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from '../support/cli.js';
import { createContainer, forEachEngine, removeContainers, runContainer } from './engine.js';
import { LiveHost, envText, sha256 } from './live-host.js';

// Unique canaries wherever a secret can sit, then every output searched for them, their base64 and
// their URL-encoded forms: reports in every format, the kept snapshot, stdout and stderr — with
// every library's debugging switched on (DEBUG=*) and Node's own http debugging.
forEachEngine('secrets', (e, it) => {
  const tag = `${process.pid}${Date.now().toString(36)}`;
  const CANARY = {
    containerEnv: `cnv-env-${tag}-Zq`,
    envFile: `cnv-file-${tag}-Wx`,
    processEnv: `cnv-proc-${tag}-Yv`,
    ledgerExtra: `cnv-ledger-${tag}-Ut`,
    ledgerBadLine: `cnv-badline-${tag}-Rs`,
    url: `cnv-url-${tag}-Pp`,
  };

  function filesUnder(dir: string): string[] {
    return readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      const s = statSync(p);
      return s.isDirectory() ? filesUnder(p) : s.isFile() ? [p] : [];
    });
  }

  it('no canary, nor its base64 or URL-encoded form, appears in any report, kept snapshot, stdout or stderr', () => {
    const eng = e;
    const host = new LiveHost();
    const name = `ma-secrets-${process.pid}`;
    const envFile = host.write(
      host.path('app', 'app.env'),
      envText({ API_TOKEN: CANARY.envFile, DATABASE_URL: `postgresql://app:${CANARY.url}@db:5432/app` }),
    );
    // The process sets a value of its own before exec: only /proc/<pid>/environ has it.
    runContainer(
      eng,
      name,
      [
        '--network',
        'none',
        '--env-file',
        envFile,
        '-e',
        `EXTRA_SECRET=${CANARY.containerEnv}`,
        '--label',
        'mesh.module=app',
        '--label',
        `mesh.sources=${envFile}`,
        '--label',
        `mesh.source-digests=${sha256('stale')}`,
      ],
      ['sh', '-c', `export PROCESS_SECRET=${CANARY.processEnv}; exec sleep 3600`],
    );
    // JSON Lines ledger: a good entry with a secret in a field the scanner does not know, and a broken line.
    host.write(
      host.ledgerPath,
      [
        JSON.stringify({
          id: 'app.server',
          type: 'container',
          target: name,
          sources: [envFile],
          note: `token ${CANARY.ledgerExtra}`,
        }),
        `{"id": "broken", "type": "file", "target": "/x", "password": "${CANARY.ledgerBadLine}"`,
        '',
      ].join('\n'),
    );
    // Change the env file so the drift rule prints both shapes of the URL.
    host.replaceByRename(
      envFile,
      envText({ API_TOKEN: CANARY.envFile, DATABASE_URL: `postgresql://app:${CANARY.url}@db2:5432/app` }),
    );
    const run = host.scan(eng.dockerHost, 'secrets-host', ['--format', 'text,json,sarif,jsonl,prom'], {
      DEBUG: '*',
      NODE_DEBUG: 'http,net',
    });
    try {
      assert.ok(
        run.report.findings.some((f) => f.ruleName === 'container-env-matches-composed-file'),
        'the scan read the container and its file',
      );
      assert.ok(
        run.report.findings.some((f) => f.ruleName === 'ledger-well-formed'),
        'the broken ledger line is a finding',
      );
      const texts: [string, string][] = [
        ['stdout', run.stdout],
        ['stderr', run.stderr],
        ...filesUnder(host.out).map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
      ];
      assert.ok(
        texts.some(([f]) => f.includes(join('history', 'secrets-host'))),
        'a snapshot was kept',
      );
      for (const raw of Object.values(CANARY)) {
        for (const variant of [
          raw,
          Buffer.from(raw).toString('base64'),
          encodeURIComponent(`app:${raw}`),
          Buffer.from(raw).toString('hex'),
        ]) {
          for (const [where, text] of texts) assert.not.ok(text.includes(variant), `${variant} found in ${where}`);
        }
      }
    } finally {
      removeContainers(eng, [name]);
    }
  });

  // Issue 25: the positions snapshot@2 reads. A secret in a container's command and entrypoint (and a registry URL
  // with credentials among its arguments), in the labels of a network, a volume and an image, in an image's env, and
  // (Docker) in daemon.json: a registry mirror's URL with credentials, the proxies; none reaches a report, the kept
  // snapshot, stdout or stderr. A container's own labels are kept as written (the mesh's and Compose's are read
  // from them) but for a credential by key or form (src/secret/labels.ts): Traefik's basic-auth users, a URL with a
  // password, an image's `…token` label the engine copies into each of its containers.
  it('no canary planted in command, entrypoint, labels of every object, image env or daemon.json reaches any output', () => {
    const eng = e;
    const host = new LiveHost();
    const NEW = {
      commandArg: `cnv-arg-${tag}-Ka`,
      entrypoint: `cnv-entry-${tag}-Kb`,
      networkLabel: `cnv-nlabel-${tag}-Kd`,
      volumeLabel: `cnv-vlabel-${tag}-Ke`,
      imageEnv: `cnv-ienv-${tag}-Kg`,
      mirrorPassword: `cnv-mirror-${tag}-Kh`,
      proxyPassword: `cnv-proxy-${tag}-Ki`,
      registryToken: `cnv-registry-${tag}-Kj`,
      imageLabel: `cnv-ilabel-${tag}-Kk`,
      basicAuth: `cnv-basicauth-${tag}-Kl`,
      urlLabel: `cnv-urllabel-${tag}-Km`,
    };
    const names = { running: `ma-secrets-args-${process.pid}`, created: `ma-secrets-entry-${process.pid}` };
    const network = `ma-secrets-net-${process.pid}`;
    const volume = `ma-secrets-vol-${process.pid}`;
    const image = `ma-secrets-image:${process.pid}`;
    // Docker only: the private dockerd's own daemon.json (its --config-file), read by the scan where dockerd says.
    const daemonJson = join(dirname(eng.dockerHost.replace(/^unix:\/\//, '')), 'daemon.json');
    const daemonBefore = eng.kind === 'docker' && existsSync(daemonJson) ? readFileSync(daemonJson, 'utf8') : null;
    try {
      // An image with a secret in a label and in its env, from the fixture's rootfs (engine-harness.sh).
      const tar = join(tempDir('ma-rootfs-', '/tmp'), 'rootfs.tar');
      const rootfs = spawnSync('bash', [join(PACKAGE_ROOT, 'test', 'docker', 'engine-harness.sh'), 'rootfs', tar], {
        encoding: 'utf8',
      });
      assert.is(rootfs.status, 0, rootfs.stderr);
      eng.docker([
        'import',
        '--change',
        'ENV PATH=/bin',
        '--change',
        `ENV REGISTRY_PASSWORD=${NEW.imageEnv}`,
        '--change',
        'LABEL build.registry-token-file=/run/secrets/registry',
        '--change',
        `LABEL build.registry-token=${NEW.imageLabel}`,
        '--change',
        'CMD ["/bin/sh"]',
        tar,
        image,
      ]);
      eng.docker(['network', 'create', '--internal', '--label', `backup.token=${NEW.networkLabel}`, network]);
      eng.docker(['volume', 'create', '--label', `backup.token=${NEW.volumeLabel}`, volume]);
      runContainer(
        eng,
        names.running,
        [
          '--network',
          'none',
          '--label',
          'api.token-file=/run/secrets/api',
          '--label',
          `traefik.http.middlewares.admin.basicauth.users=admin:${NEW.basicAuth}`,
          '--label',
          `com.example.database=postgres://app:${NEW.urlLabel}@db.example.invalid:5432/app`,
          '-v',
          `${volume}:/data`,
        ],
        ['sh', '-c', 'exec sleep 3600', 'worker', `--db-password=${NEW.commandArg}`],
        image,
      );
      createContainer(
        eng,
        names.created,
        ['--network', 'none', '--entrypoint', `/bin/sync-tool --token=${NEW.entrypoint}`],
        ['--registry', `https://robot:${NEW.registryToken}@registry.example.invalid/v2/`],
        image,
      );
      if (daemonBefore !== null) {
        const settings = JSON.parse(daemonBefore) as Record<string, unknown>;
        writeFileSync(
          daemonJson,
          JSON.stringify({
            ...settings,
            'registry-mirrors': [`https://mirror:${NEW.mirrorPassword}@mirror.example.invalid`],
            proxies: {
              'http-proxy': `http://proxy:${NEW.proxyPassword}@proxy.example.invalid:3128`,
              'https-proxy': `http://proxy:${NEW.proxyPassword}@proxy.example.invalid:3128`,
              'no-proxy': '127.0.0.1,localhost',
            },
          }),
        );
      }
      host.ledger([]);
      const run = host.scan(eng.dockerHost, 'secrets-objects', ['--format', 'text,json,sarif,jsonl,junit,prom'], {
        DEBUG: '*',
        NODE_DEBUG: 'http,net',
      });
      const texts: [string, string][] = [
        ['stdout', run.stdout],
        ['stderr', run.stderr],
        ...filesUnder(host.out).map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
      ];
      const kept = texts.find(([f]) => f.includes(join('history', 'secrets-objects')) && f.endsWith('.json'));
      assert.ok(kept, 'a snapshot was kept');
      // Not vacuous: the kept snapshot read every planted position (by its key), and none of the values.
      const snapshot = JSON.parse(kept[1]) as {
        containers: {
          name: string;
          labels: Record<string, string>;
          runtime?: { command: unknown[] | null; entrypoint: unknown[] | null };
        }[];
        networks: { name: string; labels: Record<string, unknown> }[] | null;
        volumes: { name: string; labels: Record<string, unknown> }[] | null;
        images: { available: boolean; images?: { labels?: Record<string, unknown> }[] };
        daemon: { config: { available: boolean; settings?: Record<string, unknown> | undefined } };
      };
      const read = (name: string) => snapshot.containers.find((c) => c.name === name)?.runtime;
      const labels = snapshot.containers.find((c) => c.name === names.running)?.labels ?? {};
      for (const key of [
        'traefik.http.middlewares.admin.basicauth.users',
        'com.example.database',
        'build.registry-token',
        'api.token-file',
      ])
        assert.ok(labels[key]?.startsWith(SECRET_LABEL_PREFIX), `label ${key} kept as its shape: ${labels[key]}`);
      assert.is(read(names.running)?.command?.length, 5, "the running container's command, each argument");
      assert.is(read(names.created)?.entrypoint?.length, 1, "the created container's entrypoint");
      assert.ok(snapshot.networks?.find((n) => n.name === network)?.labels['backup.token'] !== undefined, 'network');
      assert.ok(snapshot.volumes?.find((v) => v.name === volume)?.labels['backup.token'] !== undefined, 'volume');
      assert.ok(
        snapshot.images.images?.some((i) => i.labels?.['build.registry-token-file'] !== undefined),
        'the image label',
      );
      assert.ok(kept[1].includes('REGISTRY_PASSWORD'), 'the image env key');
      if (daemonBefore !== null) {
        assert.ok(snapshot.daemon.config.available, JSON.stringify(snapshot.daemon.config));
        const settings = snapshot.daemon.config.settings ?? {};
        assert.ok(settings['registry-mirrors'] !== undefined, 'daemon.json was read');
        assert.ok(settings['proxies'] !== undefined, 'daemon.json proxies were read');
      }
      for (const raw of Object.values(NEW)) {
        if (daemonBefore === null && (raw === NEW.mirrorPassword || raw === NEW.proxyPassword)) continue;
        for (const variant of [
          raw,
          Buffer.from(raw).toString('base64'),
          encodeURIComponent(`app:${raw}`),
          Buffer.from(raw).toString('hex'),
        ]) {
          for (const [where, text] of texts) assert.not.ok(text.includes(variant), `${variant} found in ${where}`);
        }
      }
    } finally {
      if (daemonBefore !== null) writeFileSync(daemonJson, daemonBefore);
      removeContainers(eng, Object.values(names));
      const quiet = (args: string[]) => {
        try {
          eng.docker(args);
        } catch {
          /* not made, or gone: the private engine goes with this process */
        }
      };
      quiet(['network', 'rm', network]);
      quiet(['volume', 'rm', '-f', volume]);
      quiet(['image', 'rm', '-f', image]);
    }
  });
});
