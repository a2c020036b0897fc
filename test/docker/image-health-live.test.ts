import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  forEachEngine,
  importFixtureAs,
  removeContainers,
  runContainer,
  runHealthcheckOnce,
  type Engine,
} from './engine.js';
import { fingerprintsOf, LiveHost, type LiveFinding, type LiveReport } from './live-host.js';
import { waitUntil } from '../support/wait.js';

/*
 * What a claimed container runs and whether it serves (issue 25, MA5001 and MA5002), on each real engine:
 * a tag moved to another image after a claimed container was made from it, a claimed container whose
 * healthcheck fails, one the engine restarts in a loop, one healthy, one stopped on purpose, and an
 * unclaimed one from the moved tag with a failing healthcheck. Every container runs with `--network
 * none`; the second image is the fixture's rootfs imported again with another label (never pulled).
 * Each state asserted is waited for (polled, with a generous bound), never timed.
 */
forEachEngine('images and container health', scenario);

/** How long the engine may take to settle a container (a loaded CI machine is slow, never wrong). */
const TWO_MINUTES = 120_000;

const HEALTH_FAILS = ['--health-cmd', 'false', '--health-interval', '1s', '--health-retries', '1'];
const HEALTH_PASSES = ['--health-cmd', 'true', '--health-interval', '1s', '--health-retries', '1'];
const ALONE = ['--network', 'none'];

function scenario(e: Engine, it: Test): void {
  const host = new LiveHost();
  const tag = `${e.kind}-${process.pid}`;
  const name = (what: string) => `ma-${what}-${tag}`;
  const [moved, sick, loop, well, stopped, stray] = ['moved', 'sick', 'loop', 'well', 'stopped', 'stray'].map(name);
  const ours = [moved!, sick!, loop!, well!, stopped!, stray!];
  // The tag a release is pulled under: first the fixture image, then another one.
  const release = `ma-app-${tag}:1`;
  const nextRelease = `ma-app-${tag}:2`;
  let firstId = '';
  let nextId = '';
  let scanned: LiveReport | undefined;

  const inspect = (container: string, format: string) => e.docker(['inspect', '--format', format, container]).trim();
  const health = (container: string) => inspect(container, '{{if .State.Health}}{{.State.Health.Status}}{{end}}');
  /** Waits until the engine says `container` is `status` (Podman: each poll runs its check, as its timer would). */
  const healthBecomes = (container: string, status: string) =>
    waitUntil(
      `${container} to be ${status} (now ${health(container)})`,
      () => {
        runHealthcheckOnce(e, container);
        return health(container) === status;
      },
      TWO_MINUTES,
      250,
    );
  const health5 = (report: LiveReport): LiveFinding[] =>
    report.findings.filter((f) => (f.ruleId === 'MA5001' || f.ruleId === 'MA5002') && ours.includes(f.subject.id));
  const brief = (f: LiveFinding) => `${f.ruleId} ${f.subject.id} ${f.discriminator ?? '-'} ${f.severity}`;

  it('the states to find: a tag moved, a healthcheck failing, a restart loop; one healthy, one stopped on purpose', async () => {
    e.docker(['tag', e.image, release]);
    firstId = e.docker(['image', 'inspect', '--format', '{{.Id}}', release]).trim();
    runContainer(e, moved!, ALONE, ['sleep', '3600'], release);
    runContainer(e, stray!, [...ALONE, ...HEALTH_FAILS], ['sleep', '3600'], release);
    runContainer(e, sick!, [...ALONE, ...HEALTH_FAILS], ['sleep', '3600']);
    runContainer(e, well!, [...ALONE, ...HEALTH_PASSES], ['sleep', '3600']);
    runContainer(e, loop!, [...ALONE, '--restart', 'always'], ['sh', '-c', 'exit 1']);
    // Stopped on purpose once its healthcheck failed: its last health says nothing now, and the engine
    // does not restart what was stopped by hand, whatever its policy.
    runContainer(e, stopped!, [...ALONE, '--restart', 'always', ...HEALTH_FAILS], ['sleep', '3600']);
    // The tag is pulled anew: it names another image from now on; the containers keep the first.
    nextId = importFixtureAs(e, nextRelease, ['ENV PATH=/bin', 'LABEL release=2', 'CMD ["/bin/sh"]']);
    e.docker(['tag', nextRelease, release]);
    assert.is.not(nextId, firstId, 'the second import is another image');
    assert.is(e.docker(['image', 'inspect', '--format', '{{.Id}}', release]).trim(), nextId, 'the tag moved');
    assert.is(inspect(moved!, '{{.Image}}'), firstId, 'the container still runs the first image');

    await healthBecomes(sick!, 'unhealthy');
    await healthBecomes(stray!, 'unhealthy');
    await healthBecomes(well!, 'healthy');
    await healthBecomes(stopped!, 'unhealthy');
    e.docker(['stop', '-t', '1', stopped!]);
    assert.is(inspect(stopped!, '{{.State.Status}}'), 'exited');
    // Restarted by its policy twice at least: a loop, in whichever phase the scan finds it.
    await waitUntil(
      `${loop} to be restarted twice`,
      () => Number(inspect(loop!, '{{.RestartCount}}')) >= 2,
      TWO_MINUTES,
      250,
    );
  });

  it('the scan finds each with its rule and severity; the healthy, stopped and unclaimed ones give none', () => {
    host.ledger(
      [moved, sick, loop, well, stopped].map((target) => ({
        id: `app.${target}`,
        type: 'container',
        module: 'app',
        target,
      })),
    );
    const run = host.scan(e.dockerHost, `live-health-${e.kind}`);
    scanned = run.report;
    const found = health5(run.report);
    assert.equal(
      found.map(brief).sort(),
      [`MA5001 ${moved} - warning`, `MA5002 ${loop} restarting error`, `MA5002 ${sick} unhealthy warning`].sort(),
      JSON.stringify(found, null, 1),
    );
    const one = (rule: string, id: string) => found.find((f) => f.ruleId === rule && f.subject.id === id)!;
    // The image it runs, and the one its tag names now (Podman names a short tag in its docker.io form).
    assert.match(
      one('MA5001', moved!).message,
      new RegExp(
        `^${moved} \\(running\\) runs image ${firstId}, but its tag (docker\\.io/library/)?${release} now names ${nextId}$`,
      ),
    );
    assert.is(one('MA5002', sick!).message, `${sick} (running) is unhealthy: its healthcheck fails`);
    // Docker says `restarting` between restarts, Podman `stopped`; either may be caught running again.
    assert.match(
      one('MA5002', loop!).message,
      new RegExp(`^${loop} \\((restarting|stopped|running)\\) is restarting in a loop \\(restarted \\d+ times, `),
    );
    const unchecked = run.report.notifications.filter(
      (n) => /MA500[12]/.test(n.message) && ours.some((c) => n.message.includes(c)),
    );
    assert.equal(unchecked, [], 'every rule was checked on these containers');
  });

  it('snapshot -o then evaluate gives the fingerprints the scan gave', () => {
    assert.ok(scanned);
    const saved = host.snapshotThenEvaluate(e.dockerHost, `live-health-${e.kind}`);
    assert.equal(
      fingerprintsOf({ ...saved.report, findings: health5(saved.report) }),
      fingerprintsOf({ ...scanned, findings: health5(scanned) }),
      JSON.stringify(health5(saved.report), null, 1),
    );
    assert.is(health5(saved.report).length, 3);
  });

  it('cleanup', () => {
    removeContainers(e, ours);
    e.docker(['rmi', release, nextRelease]);
  });
}
