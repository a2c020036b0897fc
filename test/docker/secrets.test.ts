import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
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
});
