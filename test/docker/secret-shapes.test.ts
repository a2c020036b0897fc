import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { forEachEngine, removeContainers, runContainer } from './engine.js';
import { LiveHost, envText } from './live-host.js';

// Issue 15 on a real engine: a container created from an env file holding a secret in every position
// of a URL (userinfo, a bare host token, host before a port, port, path, query, fragment, IPv6
// brackets) and in an opaque `token:` value; the file is then rewritten with every value changed.
// The drift is reported key by key, with the shapes where they differ, and no 8-character piece of any
// secret is in stdout, stderr, a report in any format or the kept snapshot.
forEachEngine('secret-shapes', (e, it) => {
  const token = (): string => randomBytes(15).toString('base64url');
  const digits = (): string => String(randomInt(100_000, 999_999)) + String(randomInt(100_000, 999_999));

  function filesUnder(dir: string): string[] {
    return readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      const s = statSync(p);
      return s.isDirectory() ? filesUnder(p) : s.isFile() ? [p] : [];
    });
  }

  interface Drift {
    held: string;
    composed: string;
    heldShape: string;
    composedShape: string;
  }

  it('every position of a drifted URL: the key and its shapes are reported, no piece of a secret is in any output', () => {
    const eng = e;
    const secrets: string[] = [];
    const s = (make: () => string = token): string => {
      const value = make();
      secrets.push(value);
      return value;
    };
    const drifts: Record<string, Drift> = {
      USERINFO_URL: {
        held: `postgresql://app:${s()}@db.mesh.internal:5432/app`,
        composed: `postgresql://app:${s()}@db2.mesh.internal:5432/app`,
        heldShape: 'postgresql://…@db.mesh.internal:5432/…',
        composedShape: 'postgresql://…@db2.mesh.internal:5432/…',
      },
      USER_URL: {
        held: `postgresql://${s()}@127.0.0.1:5432/app`,
        composed: `postgresql://${s()}@127.0.0.1:5432/app`,
        heldShape: 'postgresql://…@127.0.0.1:5432/…',
        composedShape: 'postgresql://…@127.0.0.1:5432/…',
      },
      BARE_HOST: {
        held: `redis://${s()}`,
        composed: `redis://${s()}`,
        heldShape: 'redis://…',
        composedShape: 'redis://…',
      },
      HOST_BEFORE_PORT: {
        held: `postgresql://${s()}:5432/db`,
        composed: `postgresql://${s()}:5433/db`,
        heldShape: 'postgresql://…:5432/…',
        composedShape: 'postgresql://…:5433/…',
      },
      PORT: {
        held: `redis://db.mesh.internal:${s(digits)}`,
        composed: 'redis://db.mesh.internal:6379',
        heldShape: 'redis://db.mesh.internal:…',
        composedShape: 'redis://db.mesh.internal:6379',
      },
      PATH_SEGMENT: {
        held: `https://hooks.example.org/v1/${s()}/x`,
        composed: `https://hooks.example.org/v1/${s()}/x`,
        heldShape: 'https://hooks.example.org/…',
        composedShape: 'https://hooks.example.org/…',
      },
      QUERY: {
        held: `https://api.example.org/?token=${s()}`,
        composed: `https://api.example.org/#${s()}`,
        heldShape: 'https://api.example.org/?…',
        composedShape: 'https://api.example.org/#…',
      },
      FRAGMENT: {
        held: `https://api.example.org/cb#${s()}`,
        composed: `https://api.example.org/cb#${s()}`,
        heldShape: 'https://api.example.org/…#…',
        composedShape: 'https://api.example.org/…#…',
      },
      IPV6_BRACKETS: {
        held: `http://[${s()}]:80/`,
        composed: 'http://[::1]:80/',
        heldShape: 'http://…:80/',
        composedShape: 'http://[::1]:80/',
      },
      OPAQUE_TOKEN: {
        held: `token:${s()}`,
        composed: `token:${s()}x`,
        heldShape: '<26 chars>',
        composedShape: '<27 chars>',
      },
    };
    const host = new LiveHost();
    const name = `ma-shapes-${process.pid}`;
    const envFile = host.write(
      host.path('app', 'app.env'),
      envText(Object.fromEntries(Object.entries(drifts).map(([k, d]) => [k, d.held]))),
    );
    runContainer(
      eng,
      name,
      [
        '--network',
        'none',
        '--env-file',
        envFile,
        '--label',
        'mesh.module=app',
        '--label',
        'mesh.resource=app.server',
        '--label',
        `mesh.sources=${envFile}`,
      ],
      ['sleep', '3600'],
    );
    host.ledger([
      { id: 'app.server', type: 'container', origin: 'declared', target: name, sources: [envFile] },
      { id: 'app.env', type: 'file', origin: 'declared', target: envFile },
    ]);
    host.replaceByRename(envFile, envText(Object.fromEntries(Object.entries(drifts).map(([k, d]) => [k, d.composed]))));
    const run = host.scan(eng.dockerHost, 'shapes-host', ['--format', 'text,json,sarif,jsonl,prom']);
    try {
      assert.ok(run.report.summary.complete, `the scan read everything: ${JSON.stringify(run.report.notifications)}`);
      const drift = run.report.findings.filter((f) => f.ruleName === 'container-env-matches-composed-file');
      assert.equal(
        drift.map((f) => f.discriminator!.split('#').pop()).sort(),
        Object.keys(drifts).sort(),
        'one finding per drifted key',
      );
      for (const [key, d] of Object.entries(drifts)) {
        const finding = drift.find((f) => f.discriminator!.endsWith(`#${key}`))!;
        const same = d.heldShape === d.composedShape ? ' (same shape, different value)' : '';
        assert.is(
          finding.message,
          `${name} holds ${key}=${d.heldShape} but ${envFile} now says ${key}=${d.composedShape}${same}`,
        );
        assert.match(run.stdout, `${key}=${d.heldShape}`);
      }
      const texts: [string, string][] = [
        ['stdout', run.stdout],
        ['stderr', run.stderr],
        ...filesUnder(host.out).map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
      ];
      for (const format of ['mesh-audit.json', 'mesh-audit.sarif', 'mesh-audit.jsonl', 'mesh-audit.prom'])
        assert.ok(
          texts.some(([f]) => f.endsWith(format)),
          `${format} written`,
        );
      assert.ok(
        texts.some(([f]) => f.includes(join('history', 'shapes-host'))),
        'a snapshot was kept',
      );
      assert.is(secrets.length, 18);
      for (const secret of secrets) {
        for (let i = 0; i + 8 <= secret.length; i++) {
          const piece = secret.slice(i, i + 8);
          for (const [where, text] of texts)
            assert.not.ok(text.includes(piece), `'${piece}' of a secret found in ${where}`);
        }
      }
    } finally {
      removeContainers(eng, [name]);
    }
  });
});
