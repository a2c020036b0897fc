import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { auditSnapshots } from '../../src/pipeline.js';
import { DEFAULT_POLICY, loadPack } from '../../src/policy/load.js';
import { renderJson } from '../../src/report/json.js';
import { renderJsonl } from '../../src/report/jsonl.js';
import { renderProm } from '../../src/report/prom.js';
import { renderSarif } from '../../src/report/sarif.js';
import { renderText } from '../../src/report/text.js';
import { HostModel } from '../support/host-model.js';
import { buildRealistic, realisticHost } from '../support/realistic-host.js';

/*
 * Secrets planted at random in every position of generated values — userinfo, a bare host, host and
 * port, a port, path segments, query, fragment, IPv6 brackets, opaque schemes (`token:`), plain text —
 * held by a container and, differently, by the env file it was composed from, and in a ledger field
 * the scanner does not know. The host is evaluated by the shipped pack and rendered by every real
 * reporter (text, JSON, JSON Lines, SARIF, Prometheus), and the snapshot kept as history is written
 * too: no 8-character piece of any secret appears in any of them.
 */

const RUNS = { numRuns: 150, seed: 0x5ec2e7 } as const;
const rules = (await loadPack(DEFAULT_POLICY)).rules;
const NOW = new Date('2026-10-01T00:00:00Z');

/** A credential: 12 to 40 characters of a token alphabet, not one character repeated. */
const secret = fc
  .string({
    unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~+=-'),
    minLength: 12,
    maxLength: 40,
  })
  .filter((s) => new Set(s).size >= 6);
const scheme = fc.constantFrom('postgresql', 'redis', 'https', 'mysql', 'token', 'amqp', 'x-custom+tls');
const host = fc.constantFrom('db.mesh.internal', '127.0.0.1', '[::1]', '', 'localhost', 'db');

/** Where a secret goes in a value. */
const POSITIONS: Record<string, (s: string, scheme: string, host: string) => string> = {
  user: (s, sc, h) => `${sc}://${s}@${h}:5432/app`,
  password: (s, sc, h) => `${sc}://app:${s}@${h}:5432/app`,
  passwordWithAt: (s, sc, h) => `${sc}://app:${s.slice(0, 6)}@${s.slice(6)}@${h}/app`,
  passwordWithSlash: (s, sc, h) => `${sc}://app:${s.slice(0, 6)}/${s.slice(6)}@${h}/app`,
  bareHost: (s, sc) => `${sc}://${s}`,
  hostWithPort: (s, sc) => `${sc}://${s}:5432/db`,
  hostWithPath: (s, sc) => `${sc}://${s}/x`,
  dottedHost: (s, sc) => `${sc}://${s}.${s.slice(0, 3)}.internal:1`,
  ipv6Bracket: (s, sc) => `${sc}://[${s}]:80/`,
  port: (s, sc, h) => `${sc}://${h}:${s}/db`,
  path: (s, sc, h) => `${sc}://${h}/api/${s}/v1`,
  query: (s, sc, h) => `${sc}://${h}/?token=${s}&x=1`,
  queryNoPath: (s, sc, h) => `${sc}://${h}?${s}`,
  fragment: (s, sc, h) => `${sc}://${h}/#${s}`,
  opaque: (s, sc) => `${sc}:${s}`,
  userColonPassword: (s) => `admin:${s}`,
  plain: (s) => s,
  schemeOnly: (s, sc) => `${sc}://${s}@`,
};
const position = fc.constantFrom(...Object.keys(POSITIONS));
const planted = fc
  .record({ position, secret, scheme, host })
  .map((p) => ({ ...p, value: POSITIONS[p.position]!(p.secret, p.scheme, p.host) }));

/** Every 8-character piece of a text. */
const pieces = (s: string): string[] => Array.from({ length: s.length - 7 }, (_, i) => s.slice(i, i + 8));

function outputsOf(held: string[], composed: string[], ledgerNote: string): Record<string, string> {
  const key = (i: number) => `K${i}`;
  const envFile = composed.map((v, i) => `${key(i)}='${v}'`).join('\n') + '\n';
  const model = new HostModel('shapes-host', NOW.toISOString())
    .file('/etc/mesh/app/app.env', envFile)
    .container({
      name: 'app',
      labels: { 'mesh.module': 'app', 'mesh.sources': '/etc/mesh/app/app.env' },
      env: Object.fromEntries(held.map((v, i) => [key(i), v])),
    })
    .ledger([
      { id: 'app.server', type: 'container', target: 'app', sources: ['/etc/mesh/app/app.env'], note: ledgerNote },
    ]);
  const snapshot = model.build();
  const report = auditSnapshots([snapshot], [], rules, { now: NOW });
  return {
    text: renderText(report, { color: false }),
    json: renderJson(report),
    jsonl: renderJsonl(report),
    sarif: renderSarif(report),
    prom: renderProm(report),
    snapshot: JSON.stringify(snapshot),
  };
}

test('no 8-character piece of a planted secret reaches any report format or the kept snapshot', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(planted, planted), { minLength: 1, maxLength: 4 }), planted, (pairs, note) => {
      const held = pairs.map(([h]) => h.value);
      const composed = pairs.map(([, c]) => c.value);
      const outputs = outputsOf(held, composed, note.value);
      // The drift is reported, key by key: the messages are where the shapes are printed.
      const json = JSON.parse(outputs['json']!) as { findings: { ruleId: string; message: string }[] };
      const driftMessages = json.findings.filter((f) => f.ruleId === 'MA1001').map((f) => f.message);
      assert.is(
        driftMessages.length,
        pairs.filter(([h, c]) => h.value !== c.value).length,
        'one drift finding per key whose value changed',
      );
      const secrets = [...pairs.flatMap(([h, c]) => [h.secret, c.secret]), note.secret];
      for (const s of secrets) {
        for (const piece of pieces(s)) {
          for (const [format, text] of Object.entries(outputs)) {
            if (text.includes(piece)) throw new Error(`'${piece}' of a secret is in the ${format} output`);
          }
        }
      }
    }),
    RUNS,
  );
});

test('hosts shaped like real ones (test/support/realistic-host.ts): no 8-character piece of their credentials reaches any format or the kept snapshot', () => {
  let checked = 0;
  let drifted = 0;
  for (let seed = 0; seed < 12; seed++) {
    const host = realisticHost(seed);
    // Whole secret values, and the password in a URL's userinfo (its host and port are printed, on purpose).
    const secrets = host.containers.flatMap((c) =>
      c.fileLines.flatMap((l) =>
        ['SECRET_KEY', 'OIDC_CLIENT_SECRET', 'S3_ACCESS_KEY'].includes(l.key)
          ? [l.value]
          : [...l.value.matchAll(/:([^:@/]{8,})@/g)].map((m) => m[1]!),
      ),
    );
    const snapshot = buildRealistic(host, NOW.toISOString());
    const report = auditSnapshots([snapshot], [buildRealistic(host, '2026-09-30T00:00:00Z', { before: true })], rules, {
      now: NOW,
    });
    drifted += report.evaluations.flatMap((e) => e.findings).filter((f) => f.ruleId === 'MA1001').length;
    const outputs = {
      text: renderText(report, { color: false }),
      json: renderJson(report),
      jsonl: renderJsonl(report),
      sarif: renderSarif(report),
      prom: renderProm(report),
      snapshot: JSON.stringify(snapshot),
    };
    for (const secretValue of secrets) {
      for (const piece of pieces(secretValue)) {
        for (const [format, text] of Object.entries(outputs)) {
          if (text.includes(piece))
            throw new Error(`seed ${seed}: '${piece}' of a credential is in the ${format} output`);
        }
      }
      checked++;
    }
  }
  // Not vacuous: credentials were planted and some drifted (their messages print the values' shapes).
  assert.ok(checked > 30 && drifted > 0, JSON.stringify({ checked, drifted }));
});

test.run();
