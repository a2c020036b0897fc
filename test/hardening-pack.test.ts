import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { containerIdFromMountinfo } from '../src/collect/self.js';
import { loadPolicies } from '../src/policy/load.js';
import { packageFile } from '../src/paths.js';
import { loadCases, type RuleCases } from '../src/evaluate/cases.js';
import { HostModel } from './support/host-model.js';
import { runCli, tempDir } from './support/cli.js';
import { multitoolErrors, multitoolGhasErrors } from './support/multitool.js';

const hardeningPack = async () => {
  const packs = await loadPolicies({ added: [], shipped: false, hardening: true });
  assert.is(packs.length, 1);
  return packs[0]!;
};
const cisOf = (tags: readonly string[]) =>
  tags.find((t) => t.startsWith('cis-docker-1.6:'))?.slice('cis-docker-1.6:'.length);

test('the hardening pack is loaded for its profile alone: a run without it lists no HD rule', async () => {
  const plain = await runCli(['rules', 'list']);
  assert.is(plain.code, 0);
  assert.not.match(plain.stdout, /\bHD\d{4}\b/);
  const listed = await runCli(['rules', 'list', '--profile', 'hardening']);
  assert.is(listed.code, 0, listed.stderr);
  const ids = [...listed.stdout.matchAll(/^(\S+)\s/gm)].map((m) => m[1]).filter((id) => id !== 'ID');
  const pack = await hardeningPack();
  assert.equal(ids, pack.rules.map((r) => r.id).sort());
  assert.ok(ids.length > 0);
  assert.ok(
    ids.every((id) => /^HD\d{4}$/.test(id!)),
    'no mesh-core rule in the hardening profile',
  );
});

test('every hardening rule names its CIS recommendation, level and assessment, and has cases: stopped containers and ledger allowances among them', async () => {
  const pack = await hardeningPack();
  const cases: Record<string, RuleCases> = Object.assign({}, ...(await loadCases(pack)).map((f) => f.cases));
  for (const rule of pack.rules) {
    const cis = cisOf(rule.tags);
    assert.ok(cis !== undefined, `${rule.id}: no cis-docker-1.6: tag`);
    assert.is(
      rule.id,
      `HD${cis.split('.')[0]}${cis.split('.')[1]!.padStart(3, '0')}`,
      `${rule.id} is not named after ${cis}`,
    );
    assert.ok(
      rule.tags.some((t) => /^cis-level-[12]$/.test(t)),
      `${rule.id}: no level`,
    );
    assert.ok(rule.tags.includes('cis-automated') || rule.tags.includes('cis-manual'), `${rule.id}: no assessment`);
    assert.equal(rule.profiles, ['hardening']);
    const mine = cases[rule.id];
    assert.ok(mine?.pass?.length && mine.fail?.length, `${rule.id}: needs passing and failing cases`);
    if (rule.subject === 'containers') {
      const stopped = (mine.fail ?? []).some((c) => (c.subject as { running?: boolean }).running === false);
      // A stopped container runs no process: 5.7 (sshd) alone cannot fail on one, and says so in a passing case.
      const stoppedPass = (mine.pass ?? []).some((c) => (c.subject as { running?: boolean }).running === false);
      assert.ok(stopped || (rule.id === 'HD5007' && stoppedPass), `${rule.id}: no case with a stopped container`);
      assert.ok(
        (mine.pass ?? []).some((c) => (c as { allow?: unknown[] }).allow?.length),
        `${rule.id}: no case of a ledger allowance`,
      );
    }
  }
  const tested = await runCli(['rules', 'test', '--profile', 'hardening']);
  assert.is(tested.code, 0, tested.stdout);
  assert.match(tested.stdout, / 0 failed\n$/);
  assert.not.match(tested.stdout, /\bMA\d{4}\b/, 'the hardening profile tests the hardening cases only');
});

test('the parity table of docs/hardening.md agrees with the pack: every rule once under its CIS id, every CIS id of sections 2, 3, 5 and 4.1/4.6 once', async () => {
  const guide = readFileSync(packageFile('docs', 'hardening.md'), 'utf8');
  const section = guide.slice(guide.indexOf('**Parity with docker-bench-security**'));
  const rows = [...section.matchAll(/^\| (\d+\.\d+) \| ([12]?) ?\| (automated|manual) \| ([^|]+) \|/gm)].map((m) => ({
    cis: m[1]!,
    level: m[2]!,
    assessment: m[3]!,
    rule: m[4]!.trim(),
  }));
  const pack = await hardeningPack();
  const seen = new Map<string, number>();
  for (const row of rows) seen.set(row.cis, (seen.get(row.cis) ?? 0) + 1);
  assert.equal(
    [...seen].filter(([, n]) => n > 1),
    [],
    'a CIS id listed twice',
  );
  for (const rule of pack.rules) {
    const row = rows.find((r) => r.rule.startsWith(`[${rule.id}]`));
    assert.ok(row, `${rule.id} is not in the parity table`);
    assert.is(row.cis, cisOf(rule.tags), `${rule.id}: the table says ${row.cis}`);
    assert.ok(rule.tags.includes(`cis-level-${row.level}`), `${rule.id}: level`);
    assert.ok(rule.tags.includes(`cis-${row.assessment}`), `${rule.id}: assessment`);
  }
  for (const row of rows.filter((r) => r.rule.startsWith('[HD')))
    assert.ok(
      pack.rules.some((r) => row.rule.startsWith(`[${r.id}]`)),
      `the table names ${row.rule}, which the pack lacks`,
    );
  // Every recommendation of the sections the pack covers is in the table: a rule, not yet, or not automatable with why.
  const expected = [
    ...Array.from({ length: 18 }, (_, i) => `2.${i + 1}`),
    ...Array.from({ length: 24 }, (_, i) => `3.${i + 1}`),
    ...Array.from({ length: 32 }, (_, i) => `5.${i + 1}`),
    '4.1',
    '4.6',
  ];
  for (const cis of expected) assert.ok(seen.has(cis), `CIS ${cis} is missing from the parity table`);
});

test("the scanner's own container is told by the engine id in its own mountinfo (Docker and Podman), never otherwise", () => {
  const id = 'a'.repeat(64);
  const docker =
    `36 35 0:1 / / rw - overlay overlay rw\n` +
    `41 36 254:1 /var/lib/docker/containers/${id}/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/vda1 rw\n` +
    `42 36 254:1 /var/lib/docker/containers/${id}/hostname /etc/hostname rw,relatime - ext4 /dev/vda1 rw\n`;
  assert.is(containerIdFromMountinfo(docker), id);
  const podman = `50 40 0:44 /containers/storage/overlay-containers/${id}/userdata/hosts /etc/hosts rw - tmpfs tmpfs rw\n`;
  assert.is(containerIdFromMountinfo(podman), id);
  // Podman's folder is named after its storage driver: vfs where overlay is not to be had.
  const vfs = `51 40 254:1 /var/lib/containers/storage/vfs-containers/${id}/userdata/hostname /etc/hostname rw - ext4 /dev/vda1 rw\n`;
  assert.is(containerIdFromMountinfo(vfs), id);
  // On the host: no such mounts; a container's folder bound elsewhere proves nothing.
  assert.is(containerIdFromMountinfo('22 1 254:1 / / rw - ext4 /dev/vda1 rw\n'), null);
  assert.is(
    containerIdFromMountinfo(`60 36 254:1 /var/lib/docker/containers/${id}/hostname /mnt/x rw - ext4 /dev/vda1 rw\n`),
    null,
  );
});

/** A host with one container breaking each shipped container rule, plus the scanner's own container and an allowed one. */
function hardeningHost(): { snapshot: string; ledger: string } {
  const dir = tempDir();
  const model = new HostModel('n1', '2026-09-22T00:00:00Z')
    .container({ name: 'on-host-net', network: 'host' })
    .container({ name: 'published-wide', network: 'bridge', publish: ['0.0.0.0:8080:80/tcp'] })
    .container({ name: 'stopped-host-net', network: 'host', running: false })
    .container({ name: 'allowed-host-net', network: 'host' })
    .container({ name: 'mesh-audit', id: 'c'.repeat(64), network: 'host' })
    // The daemon's paths looked at (a local engine): the socket as a Debian host has it, nothing else there.
    .daemon({
      paths: [
        {
          role: 'docker_socket',
          path: '/run/docker.sock',
          exists: true,
          kind: 'socket',
          mode: '0660',
          uid: 0,
          gid: 998,
          user: 'root',
          group: 'docker',
        },
      ],
    })
    .ledger([
      {
        id: 'dns.server',
        type: 'container',
        target: 'allowed-host-net',
        allow: [{ rule: 'HD5010', reason: 'serves port 53 on the host network' }],
      },
    ]);
  const built = model.build();
  built.host.scannerContainer = 'c'.repeat(64);
  built.docker!.kind = 'docker';
  const snapshot = join(dir, 'snapshot.json');
  writeFileSync(snapshot, JSON.stringify(built));
  return { snapshot, ledger: built.ledger.path };
}

test('a hardening run: stopped containers reported, the scanner itself not, an allowed one suppressed; SARIF carries the CIS recommendation and passes the Multitool with GitHub rules; JUnit has one case per rule and container', async () => {
  const { snapshot } = hardeningHost();
  const out = tempDir();
  const r = await runCli([
    'evaluate',
    snapshot,
    '--profile',
    'hardening',
    '--out',
    out,
    '--format',
    'json,sarif,junit',
    '--fail-on',
    'warning',
  ]);
  assert.is(r.code, 1, r.stderr);
  const report = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as {
    findings: { ruleId: string; subject: { id: string }; message: string; suppressed?: { allowedBy?: string } }[];
  };
  // The network rules this host is made to break (its containers break others too: no limits, root, …).
  const network = new Set(['HD5008', 'HD5010', 'HD5014']);
  const standing = report.findings
    .filter((f) => f.suppressed === undefined && network.has(f.ruleId))
    .map((f) => `${f.ruleId} ${f.subject.id}`);
  assert.equal(standing.sort(), ['HD5010 on-host-net', 'HD5010 stopped-host-net', 'HD5014 published-wide']);
  const allowed = report.findings.filter((f) => f.suppressed !== undefined);
  assert.equal(
    allowed.map((f) => `${f.ruleId} ${f.subject.id} ${f.suppressed!.allowedBy ?? ''}`),
    ['HD5010 allowed-host-net dns.server (/var/lib/mesh-host/ledger.json:2)'],
  );
  assert.ok(
    report.findings.every((f) => f.subject.id !== 'mesh-audit'),
    "the scanner's own container is not reported",
  );
  assert.match(report.findings.find((f) => f.subject.id === 'stopped-host-net')!.message, /\(exited\)/);

  const sarifFile = join(out, 'mesh-audit.sarif');
  const sarif = JSON.parse(readFileSync(sarifFile, 'utf8')) as {
    runs: { tool: { driver: { rules: { id: string; properties: { cis?: unknown; tags: string[] } }[] } } }[];
  };
  const descriptor = sarif.runs[0]!.tool.driver.rules.find((d) => d.id === 'HD5010')!;
  assert.equal(descriptor.properties.cis, {
    benchmark: 'cis-docker-1.6',
    id: '5.10',
    level: 1,
    assessment: 'automated',
  });
  assert.ok(descriptor.properties.tags.includes('cis-docker-1.6:5.10'));
  assert.equal(multitoolErrors(sarifFile), []);
  assert.equal(multitoolGhasErrors(sarifFile), []);

  const junit = readFileSync(join(out, 'mesh-audit.junit.xml'), 'utf8');
  const cases = [...junit.matchAll(/<testcase classname="([^"]+)" name="([^"]+)"/g)].map(
    (m) => `${m[1]!.split(' ')[0]!} ${m[2]!}`,
  );
  for (const rule of ['HD5008', 'HD5010', 'HD5014'])
    for (const name of ['on-host-net', 'published-wide', 'stopped-host-net', 'allowed-host-net'])
      assert.is(cases.filter((c) => c === `${rule} container ${name}`).length, 1, `JUnit: ${rule} ${name}`);
  assert.ok(!cases.some((c) => c.endsWith(' mesh-audit')), "the scanner's own container is no test case");
});

test.run();
