import { writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import * as assert from 'uvu/assert';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { LiveHost } from './live-host.js';

// Issue 12, item 6: an env file holding bytes that are not UTF-8, and the container created from it.
// The Engine API takes JSON, so what Docker keeps for such a byte is U+FFFD. Decoding the file with
// replacement gave the same digest to both, and the drift was missed while the scan said complete:
// the file's value is now digested as its bytes.
forEachEngine('env-bytes', (e, it) => {
  const host = new LiveHost();
  const APP = `ma-bytes-app-${process.pid}`;

  it('an env value that is not valid UTF-8 differs from the U+FFFD Docker keeps for it; valid UTF-8 values still match', () => {
    const eng = e;
    const envPath = host.path('app', 'app.env');
    host.write(envPath, '');
    // APP_NAME: Latin-1 "café" (0xE9 alone is no UTF-8); CITY: UTF-8 "café"; MODE: ASCII.
    const bytes = Buffer.concat([
      Buffer.from('APP_NAME=caf'),
      Buffer.from([0xe9]),
      Buffer.from('\nCITY=caf\u00e9\nMODE=prod\n', 'utf8'),
    ]);
    writeFileSync(envPath, bytes);
    const digest = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
    runContainer(
      eng,
      APP,
      [
        '--network',
        'none',
        '-e',
        'APP_NAME=caf\uFFFD',
        '-e',
        'CITY=caf\u00e9',
        '-e',
        'MODE=prod',
        '--label',
        'mesh.module=app',
        '--label',
        'mesh.resource=app.server',
        '--label',
        `mesh.sources=${envPath}`,
        '--label',
        `mesh.source-digests=${digest}`,
      ],
      ['sleep', '3600'],
    );
    host.ledger([
      { id: 'app.server', type: 'container', origin: 'declared', target: APP, sources: [envPath] },
      { id: 'app.env', type: 'file', origin: 'declared', target: envPath, digest },
    ]);
    try {
      const { report, stderr } = host.scan(eng.dockerHost, 'live-bytes');
      assert.ok(report.summary.complete, `complete scan: ${stderr}`);
      const drift = report.findings.filter(
        (f) => f.subject.id === APP && f.ruleName === 'container-env-matches-composed-file',
      );
      assert.equal(
        drift.map((f) => f.discriminator),
        [`${envPath}#APP_NAME`],
        JSON.stringify(report.findings.map((f) => [f.ruleName, f.discriminator])),
      );
    } finally {
      removeContainers(eng, [APP]);
    }
  });
});
