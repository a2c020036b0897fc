import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { forEachEngine, removeContainers, runContainer, type Engine } from './engine.js';
import { LiveHost, type LiveReport } from './live-host.js';
import { waitUntil } from '../support/wait.js';

/*
 * A declared container its restart policy gave up on (issue 47, MA5003), on each real engine: claimed
 * containers, each `--network none`: one `--restart on-failure:2` that fails with exit 3 until the engine
 * stops restarting it, one `on-failure:2` stopped by hand, one `always` stopped by hand, a one-shot job that
 * exited 0 under `on-failure:2`, and one with no policy. Each state is waited for (polled), never timed.
 */
forEachEngine('a declared container left down', scenario);

/** How long the engine may take to settle a container (a loaded CI machine is slow, never wrong). */
const TWO_MINUTES = 120_000;

const ALONE = ['--network', 'none'];

function scenario(e: Engine, it: Test): void {
  const host = new LiveHost();
  const tag = `${e.kind}-${process.pid}`;
  const name = (what: string) => `ma-${what}-${tag}`;
  const [gaveUp, byHand, always, job, plain] = ['gave-up', 'by-hand', 'always', 'job', 'plain'].map(name);
  const ours = [gaveUp!, byHand!, always!, job!, plain!];
  const inspect = (container: string, format: string) => e.docker(['inspect', '--format', format, container]).trim();
  const state = (container: string) => inspect(container, '{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}}');

  it('the states: a policy that gave up after failures, two containers stopped by hand, a job done, one with no policy', async () => {
    runContainer(e, gaveUp!, [...ALONE, '--restart', 'on-failure:2'], ['sh', '-c', 'exit 3']);
    runContainer(e, byHand!, [...ALONE, '--restart', 'on-failure:2'], ['sleep', '3600']);
    runContainer(e, always!, [...ALONE, '--restart', 'always'], ['sleep', '3600']);
    runContainer(e, job!, [...ALONE, '--restart', 'on-failure:2'], ['sh', '-c', 'exit 0']);
    runContainer(e, plain!, ALONE, ['sh', '-c', 'exit 0']);
    e.docker(['stop', '-t', '1', byHand!]);
    e.docker(['stop', '-t', '1', always!]);
    // Docker says exited once it gave up; Podman says stopped until it cleaned the container up, then exited.
    await waitUntil(
      `${gaveUp} to be given up on (now ${state(gaveUp!)})`,
      () => state(gaveUp!) === 'exited 3 2',
      TWO_MINUTES,
      250,
    );
    for (const c of [job!, plain!])
      await waitUntil(`${c} to exit (now ${state(c)})`, () => state(c) === 'exited 0 0', TWO_MINUTES, 250);
    assert.match(state(byHand!), /^exited (137|143) 0$/);
    assert.match(state(always!), /^exited (137|143) 0$/);
  });

  it('the scan finds the one given up on, with its exit code and restart count; none for the others', () => {
    host.ledger(ours.map((target) => ({ id: `app.${target}`, type: 'container', module: 'app', target })));
    const run = host.scan(e.dockerHost, `live-gave-up-${e.kind}`);
    const report: LiveReport = run.report;
    const found = report.findings.filter((f) => ours.includes(f.subject.id) && f.ruleId.startsWith('MA5'));
    assert.equal(
      found.map((f) => `${f.ruleId} ${f.subject.id} ${f.severity} ${f.message}`),
      [
        `MA5003 ${gaveUp} error ${gaveUp} (exited) is down: it failed with exit code 3, and its restart policy on-failure:2 gave up after 2 restarts`,
      ],
    );
    const unchecked = report.notifications.filter(
      (n) => n.message.includes('MA5003') && ours.some((c) => n.message.includes(c)),
    );
    assert.equal(unchecked, [], 'MA5003 was checked on these containers');
  });

  it('cleanup', () => {
    removeContainers(e, ours);
  });
}
