import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { MAX_DEPTH } from '../../src/input/depth.js';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { LiveHost } from './live-host.js';

/*
 * A live dockerd whose daemon.json (its --config-file: test/docker/engine-harness.sh) is nested 10,000
 * deep. dockerd refuses to start on such a file, and reads it only at start and on SIGHUP: the running
 * private engine's file is rewritten to it, the scan run, and the file put back. The scan finds the file
 * as it does on a host, by the dockerd process's --config-file flag in /proc.
 */

forEachEngine('daemon.json nested too deep, live', (e, it) => {
  if (e.kind !== 'docker') {
    it('Podman: no daemon.json applies (nothing to test)', () => undefined);
    return;
  }
  const socket = e.dockerHost.replace(/^unix:\/\//, '');
  const configFile = join(dirname(socket), 'daemon.json');
  const name = `ma-depth-${e.run}`;

  it('exit 3 naming daemon.json; the report, the snapshot and every other finding written (was: internal error)', () => {
    runContainer(e, name, [...e.runOptions, '--network', 'none'], ['sleep', '600']);
    const host = new LiveHost();
    const gone = host.path('gone.ini');
    host.ledger([{ id: 'app.gone', type: 'file', origin: 'declared', target: gone }]);
    const before = readFileSync(configFile);
    const n = 10_000;
    writeFileSync(configFile, `{\n  "icc": true,\n  "x": ${'['.repeat(n)}${']'.repeat(n)}\n}\n`);
    let run: ReturnType<LiveHost['scan']>;
    try {
      run = host.scan(e.dockerHost, 'live-daemon-depth', ['--fail-on', 'none']);
    } finally {
      writeFileSync(configFile, before);
    }
    assert.is(run.code, 3, run.stderr);
    assert.not.match(run.stderr, 'internal error');
    const said = `${configFile}: not read: it nests more than ${MAX_DEPTH} levels deep (line 3, column ${8 + MAX_DEPTH - 1})`;
    assert.ok(run.stderr.includes(`mesh-audit: ${said}\n`), run.stderr);
    assert.is(run.report.summary.complete, false);
    assert.ok(
      run.report.notifications.some((n) => n.level === 'error' && n.message === said),
      JSON.stringify(run.report.notifications),
    );
    // Every other source was read: the ledger's missing file and the unclaimed container are findings.
    const found = run.report.findings.map((f) => `${f.ruleName} ${f.subject.id}`);
    assert.ok(found.includes('declared-resource-present app.gone'), found.join('\n'));
    assert.ok(
      run.report.findings.some((f) => f.subject.id === name),
      found.join('\n'),
    );
    // The snapshot is kept, with daemon.json unread.
    const folder = join(host.out, 'history', 'live-daemon-depth');
    const kept = readdirSync(folder).filter((f) => f.endsWith('.json') && f !== 'index.json');
    assert.is(kept.length, 1, kept.join(' '));
    const snapshot = JSON.parse(readFileSync(join(folder, kept[0]!), 'utf8')) as {
      daemon: { config: { available: boolean }; process: { available: boolean } };
    };
    assert.is(snapshot.daemon.config.available, false);
    assert.is(snapshot.daemon.process.available, true, 'dockerd itself was found');
  });

  it('cleanup', () => {
    removeContainers(e, [name]);
  });
});
