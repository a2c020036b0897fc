import * as assert from 'uvu/assert';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnCli, withoutScopeCount, type CliRun } from '../support/cli.js';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { LiveHost, type LiveReport } from './live-host.js';

// Issue 28, item 5, on a real engine: the nightly command as cron runs it. `--quiet` on a clean,
// complete host prints nothing at all (cron sends no mail); `--only-new` against the previous run
// prints only what is new; an incomplete run still says so.
forEachEngine('quiet-live', (e, it) => {
  const host = new LiveHost();
  const tag = process.pid;
  const names = { web: `ma-q-web-${tag}`, first: `ma-q-adhoc-a-${tag}`, second: `ma-q-adhoc-b-${tag}` };
  const conf = host.write(host.path('web', 'web.conf'), 'listen 8080\n');
  mkdirSync(host.out, { recursive: true, mode: 0o750 });

  const scan = (extra: string[], ledger = host.ledgerPath): CliRun & { report: LiveReport } => {
    const run = spawnCli([
      'scan',
      '--docker-host',
      e.dockerHost,
      '--ledger',
      ledger,
      '--managed-root',
      host.managedRoot,
      '--hostname',
      'quiet-live',
      '--out',
      host.out,
      '--format',
      'text,json',
      ...extra,
    ]);
    return { ...run, report: JSON.parse(readFileSync(join(host.out, 'mesh-audit.json'), 'utf8')) as LiveReport };
  };

  it('scan --quiet on a clean, complete host prints nothing on stdout or stderr', () => {
    runContainer(
      e,
      names.web,
      ['--network', 'none', '--label', 'mesh.module=web', '--label', 'mesh.resource=web.server'],
      ['sleep', '3600'],
    );
    host.ledger([
      { id: 'web.server', type: 'container', module: 'web', origin: 'declared', target: names.web },
      { id: 'web.conf', type: 'file', module: 'web', origin: 'declared', target: conf },
    ]);
    const r = scan(['--quiet', '--baseline', 'auto']);
    assert.ok(r.report.summary.complete, r.stderr);
    assert.equal(r.report.findings, [], 'the host is clean');
    assert.equal([r.code, r.stdout, r.stderr], [0, '', '']);
    // The same run without --quiet is not silent: the summary and "no findings".
    const loud = scan([]);
    assert.match(withoutScopeCount(loud.stdout), '0 findings (0 errors, 0 warnings, 0 notes) on 1 host');
    assert.match(loud.stdout, 'no findings');
  });

  it('--quiet --only-new against the previous run (a baseline holding one finding) prints only the new finding', () => {
    try {
      runContainer(e, names.first, ['--network', 'none'], ['sleep', '3600']);
      const one = scan(['--quiet', '--baseline', 'auto']);
      assert.ok(one.report.summary.complete, one.stderr);
      assert.equal(
        one.report.findings.map((f) => [f.ruleName, f.subject.id]),
        [['no-unclaimed-container', names.first]],
      );
      assert.match(one.stdout, names.first, 'a standing finding is printed under --quiet');
      assert.is(one.stderr, '');

      runContainer(e, names.second, ['--network', 'none'], ['sleep', '3600']);
      const two = scan(['--quiet', '--only-new', '--baseline', 'auto']);
      assert.ok(two.report.summary.complete, two.stderr);
      assert.equal(
        two.report.findings.map((f) => f.subject.id).sort(),
        [names.first, names.second].sort(),
        'the report keeps every finding',
      );
      assert.match(two.stdout, `container ${names.second}  [new]`);
      assert.not.match(two.stdout, names.first, 'the finding the baseline holds is not printed');
      assert.match(
        withoutScopeCount(two.stdout.split('\n')[0]!),
        '2 findings (0 errors, 0 warnings, 2 notes; 1 new, 0 gone) on 1 host; showing the new ones only',
      );
      assert.is(two.stderr, '');

      // The next night nothing is new: nothing is printed at all.
      const three = scan(['--quiet', '--only-new', '--baseline', 'auto']);
      assert.ok(three.report.summary.complete, three.stderr);
      assert.is(three.report.findings.length, 2);
      assert.equal([three.code, three.stdout, three.stderr], [0, '', '']);
    } finally {
      removeContainers(e, [names.first, names.second]);
    }
  });

  it('an incomplete run under --quiet --only-new still says so, on stdout and stderr, and exits 3', () => {
    try {
      const r = scan(['--quiet', '--only-new', '--baseline', 'auto'], join(host.dir, 'no-such-ledger.json'));
      assert.is(r.code, 3, r.stdout + r.stderr);
      assert.is(r.report.summary.complete, false);
      assert.match(r.stdout, /INCOMPLETE: \d+ things? not checked/);
      assert.match(r.stdout, 'Not checked (');
      assert.match(r.stdout, 'no-such-ledger.json');
      assert.match(r.stderr, 'no-such-ledger.json', 'the problem is told on stderr as it is read');
    } finally {
      removeContainers(e, [names.web]);
    }
  });
});
