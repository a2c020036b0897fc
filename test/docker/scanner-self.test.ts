import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { compareHistoryNames } from '../../src/snapshot/history-order.js';
import { spawnCli, tempDir } from '../support/cli.js';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { LiveHost, type LiveReport } from './live-host.js';

/*
 * The scanner's own container, in the documented container deployment (issue 47): the image built by
 * packaging/image/build-image.sh from `npm run package`'s root file system, run twice as
 * examples/nightly/docker-run.sh runs it, nothing changed in between. Each night's container has a name of
 * its own (`mesh-audit-scan-<pid>`); it is the scanner, not something the mesh runs: named so in the
 * snapshot (host.scannerContainer) and in no finding of any pack, so a `--quiet --only-new` night is quiet.
 */
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const ROOTFS = join(PACKAGE_ROOT, 'dist', 'package', 'mesh-audit-image-rootfs.tar');
const built = existsSync(ROOTFS);
const ci = process.env['CI'] === 'true';
if (!built && !ci) process.stderr.write('scanner-self.test: dist/package not built (npm run package): skipped\n');

(ci ? test : test.skip)('the package is built (.ci/run runs `npm run package` before `npm test`)', () => {
  assert.ok(built, `${ROOTFS} is missing: run \`npm run package\``);
});
test.run();

interface KeptSnapshot {
  host: { scannerContainer?: string };
  containers: { id: string; name: string }[];
}

if (built) {
  forEachEngine('the scanner in its container', (e, it) => {
    it('two nights of docker-run.sh with nothing changed: the second prints nothing (--quiet --only-new), the scanner container is named as such in the snapshot and in no finding of any pack', () => {
      const env = { ...process.env, DOCKER_HOST: e.dockerHost };
      const image = spawnSync('sh', [join(PACKAGE_ROOT, 'packaging', 'image', 'build-image.sh'), ROOTFS, VERSION], {
        env,
        encoding: 'utf8',
        timeout: 300_000,
      });
      assert.is(image.status, 0, image.stderr);

      // A host with one declared container running as declared: nothing to report.
      const host = new LiveHost();
      const app = `ma-self-app-${process.pid}`;
      runContainer(
        e,
        app,
        ['--network', 'none', '--label', 'mesh.module=app', '--label', 'mesh.resource=app.server'],
        ['sleep', '3600'],
      );
      host.ledger([{ id: 'app.server', type: 'container', origin: 'declared', target: app }]);
      const configDir = tempDir('ma-self-etc-');
      const textfiles = tempDir('ma-self-textfile-');
      writeFileSync(
        join(configDir, 'config.yaml'),
        `ledger: ${host.ledgerPath}\nmanagedRoots:\n  - ${host.managedRoot}\n`,
      );
      const night = () =>
        spawnSync('sh', [join(PACKAGE_ROOT, 'examples', 'nightly', 'docker-run.sh'), '--hostname', 'self-img'], {
          env: {
            ...env,
            // The sockets of this machine's own host processes are not the test's (another test may hold one).
            MESH_AUDIT_EXCLUDE: `${process.env['MESH_AUDIT_EXCLUDE'] ?? ''} listener:*`.trim(),
            DOCKER_SOCKET: e.dockerHost.replace(/^unix:\/\//, ''),
            MESH_AUDIT_CONFIG_DIR: configDir,
            MESH_AUDIT_OUT: host.out,
            MESH_AUDIT_TEXTFILE_DIR: textfiles,
          },
          encoding: 'utf8',
          timeout: 300_000,
        });
      try {
        const first = night();
        assert.is(first.status, 0, `first night: ${first.stdout}${first.stderr}`);
        const second = night();
        assert.is(second.stdout, '', 'the second night prints nothing');
        assert.is(second.status, 0, second.stderr);

        // The kept snapshot names the scanner's container: the one docker-run.sh named, found by its id.
        const history = join(host.out, 'history', 'self-img');
        const kept = readdirSync(history)
          .filter((n) => n.endsWith('.json'))
          .sort(compareHistoryNames);
        const last = join(history, kept.at(-1)!);
        const snapshot = JSON.parse(readFileSync(last, 'utf8')) as KeptSnapshot;
        const self = snapshot.containers.find((c) => c.id === snapshot.host.scannerContainer);
        assert.ok(self, `host.scannerContainer ${snapshot.host.scannerContainer} is a container of the snapshot`);
        assert.match(self.name, /^mesh-audit-scan-\d+$/);

        // No pack reports it: the night's own report, and the snapshot evaluated with every profile.
        const nightly = JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport;
        for (const [what, report] of [
          ['the night', nightly],
          ...['all', 'hardening'].map((profile): [string, LiveReport] => {
            const r = spawnCli(['evaluate', last, '--profile', profile, '--format', 'json', '--out', '-']);
            // Exit 3: the host's sockets, out of scope in the night, are not read in the snapshot.
            assert.ok([0, 1, 3].includes(r.code), r.stderr);
            return [`evaluate --profile ${profile}`, JSON.parse(r.stdout) as LiveReport];
          }),
        ] as const) {
          const about = report.findings.filter(
            (f) => f.subject.id.includes(self.name) || f.message.includes(self.name),
          );
          assert.equal(
            about.map((f) => `${f.ruleId} ${f.message}`),
            [],
            `${what}: no finding about the scanner's container`,
          );
        }
      } finally {
        removeContainers(e, [app]);
      }
    });
  });
}
