import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { SECRET_LABEL_PREFIX } from '../../src/secret/labels.js';
import { shapeOf } from '../../src/secret/value.js';
import { createContainer, createWithLabels, forEachEngine, removeContainers } from './engine.js';
import { LiveHost } from './live-host.js';

// Issue 46: a label of 1 MB (beyond what one argv string may hold, so written with --label-file) once
// held the scanner's event loop for minutes in the URL-credential check; the engine's requests timed
// out and the scan lost networks, volumes, the daemon and other containers (exit 3). Now the scan
// ends complete, and the label is kept as written when it holds no credential and as its shape when
// it holds one.
const MB = 1024 * 1024;

forEachEngine('large label', (e, it) => {
  it('a container with labels of 1 MB scans complete; a credential in one is kept as its shape only', () => {
    const host = new LiveHost();
    const name = `ma-large-label-${process.pid}`;
    const other = `ma-large-label-other-${process.pid}`;
    const plain = 'a'.repeat(MB); // what made the old expression re-read the value from every letter
    const secret = `${'a://x:'.repeat(MB / 8)}tail https://app:hunter2-${process.pid}@db.example.org/`;
    host.ledger([
      { id: 'app.server', type: 'container', target: name },
      { id: 'other.server', type: 'container', target: other },
    ]);
    createWithLabels(e, host.dir, name, {
      'com.example.plain': plain,
      'com.example.link': secret,
      'mesh.module': 'app',
    });
    createContainer(e, other, ['--network', 'none', '--label', 'mesh.module=other'], ['sleep', '3600']);
    try {
      const run = host.scan(e.dockerHost, 'large-label-host');
      assert.ok([0, 1].includes(run.code), `exit ${run.code}: ${run.stderr.slice(-2000)}`);
      assert.ok(run.report.summary.complete, 'nothing was left unread');
      const saved = host.snapshotThenEvaluate(e.dockerHost, 'large-label-host');
      assert.ok([0, 1].includes(saved.snapshot.code), saved.snapshot.stderr.slice(-2000));
      const snapshot = JSON.parse(readFileSync(join(host.dir, 'saved-large-label-host.json'), 'utf8')) as {
        containers: { name: string; labels: Record<string, string> }[];
      };
      const labels = snapshot.containers.find((c) => c.name === name)?.labels;
      assert.ok(labels, 'the container with the large labels is in the snapshot');
      assert.ok(
        snapshot.containers.some((c) => c.name === other),
        'and the other container too',
      );
      assert.is(labels['com.example.plain'], plain, 'no credential: kept as written');
      assert.is(labels['com.example.link'], `${SECRET_LABEL_PREFIX}${shapeOf(secret)})`);
      assert.not.ok(readFileSync(join(host.dir, 'saved-large-label-host.json'), 'utf8').includes('hunter2'));
    } finally {
      removeContainers(e, [name, other]);
    }
  });
});
