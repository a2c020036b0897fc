import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../src/paths.js';
import { hasAlertmanager, startAlertmanager, type AlertmanagerInstance } from './support/alertmanager.js';
import { example, tempDir } from './support/cli.js';
import { driftHostSnapshot } from './support/drift-host.js';
import { forward, startFront, type Front } from './support/http-front.js';
import { runProcess, type ProcessRun } from './support/strace.js';

// Issue 31, items 1-6 and the Alertmanager reply of item 7: every output of a run reaches its
// destination whole, or the run says which did not (exit 3). Each test runs the CLI as a user would
// (a child process) against the real Alertmanager (Debian's prometheus-alertmanager) on 127.0.0.1,
// with a small HTTP server of test/support/http-front.ts in front of it where the fault is.
// SECURITY.md, "Reliability", lists each with what mesh-audit does.
const BIN = join(PACKAGE_ROOT, 'bin', 'mesh-audit.js');
const DEMO = example('demo', 'snapshot.json');
const DEMO_HISTORY = example('demo', 'history');
const ci = process.env['CI'] === 'true';
const isRoot = process.getuid?.() === 0;
/** Needs root (mount): skipped on a developer's machine without it, a failure in CI. */
const asRoot = isRoot || ci ? test : test.skip;
/** Needs the real Alertmanager: skipped where it is not installed, a failure in CI. */
const withAm = hasAlertmanager() || ci ? test : test.skip;
/** The single executable (`npm run package`, which CI runs before the tests). */
const SEA = join(PACKAGE_ROOT, 'dist', 'package', 'mesh-audit-linux-x64');

const cli = (args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<ProcessRun> =>
  runProcess(process.execPath, [BIN, ...args], { env, timeoutMs });

let am: AlertmanagerInstance | undefined;
const fronts: Front[] = [];
test.after(async () => {
  for (const f of fronts) await f.close();
  await am?.stop();
});

/** A fresh Alertmanager for each test: what one test posted never shows in another's. */
async function freshAlertmanager(): Promise<AlertmanagerInstance> {
  await am?.stop();
  am = await startAlertmanager();
  return am;
}

async function front(handler: Parameters<typeof startFront>[0]): Promise<Front> {
  const f = await startFront(handler);
  fronts.push(f);
  return f;
}

/** Every file under `dir`, as text (the reports, the runs, the sequence): what a run left to be read. */
function allText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = lstatSync(path);
    if (info.isDirectory()) text += allText(path);
    else if (info.isFile()) text += readFileSync(path, 'utf8');
  }
  return text;
}

/** Runs `cmd args` with stdout redirected into `file` (as `> file` would), stderr captured. */
function runToFile(cmd: string, args: string[], file: string): Promise<{ code: number | null; stderr: string }> {
  const fd = openSync(file, 'w');
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: PACKAGE_ROOT, stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stderr });
    });
  });
}

asRoot(
  '1. a report on stdout that does not fit (a full tmpfs, /dev/full) is exit 3 naming stdout and what was lost: evaluate, premigrate, the single executable',
  async () => {
    const mnt = join(tempDir(), 'mnt');
    mkdirSync(mnt);
    // 16 KiB: less than any of the reports below, so the write is cut short (ENOSPC after a short write).
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k,mode=0700', 'tmpfs', mnt], { encoding: 'utf8' });
    assert.is(mounted.status, 0, `mount a tmpfs (needs root): ${mounted.stderr}`);
    try {
      const runs: [string, string, string[]][] = [
        [
          'evaluate',
          process.execPath,
          [BIN, 'evaluate', DEMO, '--history', DEMO_HISTORY, '--out', '-', '--format', 'sarif', '--fail-on', 'none'],
        ],
        [
          'premigrate',
          process.execPath,
          [
            BIN,
            'premigrate',
            '--snapshot',
            example('adopted-node', 'snapshot.json'),
            '--history',
            example('adopted-node', 'history'),
            '--out',
            '-',
            '--format',
            'json',
          ],
        ],
      ];
      if (existsSync(SEA) || ci)
        runs.push([
          'single executable',
          SEA,
          ['evaluate', DEMO, '--history', DEMO_HISTORY, '--out', '-', '--format', 'sarif', '--fail-on', 'none'],
        ]);
      for (const [what, cmd, args] of runs) {
        const file = join(mnt, 'report');
        const r = await runToFile(cmd, args, file);
        const kept = readFileSync(file).length;
        assert.is(r.code, 3, `${what}: exit 3 (${r.code}): ${r.stderr}`);
        assert.match(
          r.stderr,
          new RegExp(
            `^mesh-audit: stdout: cannot write: ENOSPC \\(no space left on device\\); ${kept} of \\d+ bytes written, the rest lost$`,
            'm',
          ),
          what,
        );
        assert.ok(kept > 0 && kept <= 16 * 1024, `${what}: ${kept} bytes kept`);
        spawnSync('rm', ['-f', file]);

        const full = await runToFile(cmd, args, '/dev/full');
        assert.is(full.code, 3, `${what} > /dev/full: exit 3 (${full.code}): ${full.stderr}`);
        assert.match(
          full.stderr,
          /^mesh-audit: stdout: cannot write: ENOSPC \(no space left on device\); 0 of \d+ bytes written, the rest lost$/m,
          what,
        );
      }
    } finally {
      spawnSync('umount', ['-l', mnt]);
    }
  },
);

withAm(
  '2. Alertmanager behind a 301 or a 307: not followed, exit 3 naming the redirect and where it pointed (credentials hidden); nothing stored anywhere',
  async () => {
    const real = await freshAlertmanager();
    const dir = tempDir();
    for (const status of [301, 302, 307, 308]) {
      // The new address carries credentials, as a misconfigured proxy might: they are never printed.
      const location = `${real.url.replace('http://', 'http://mesh:hunter2@')}/api/v2/alerts`;
      const redirector = await front((_req, res) => {
        res.writeHead(status, { location });
        res.end();
      });
      const out = join(dir, `out-${status}`);
      const r = await cli([
        'evaluate',
        driftHostSnapshot(dir, `r${status}`, { drift: true }),
        '--out',
        out,
        '--format',
        'json',
        '--alertmanager',
        redirector.url,
      ]);
      assert.is(r.code, 3, `${status}: ${r.stderr}`);
      assert.match(
        r.stderr,
        `mesh-audit: Alertmanager at ${redirector.url} answered the post with a redirect (HTTP ${status}) to ${real.url.replace('http://', 'http://***@')}/api/v2/alerts; not followed, no alert sent`,
      );
      assert.match(
        r.stderr,
        `not delivered: the alerts to Alertmanager at ${redirector.url}; delivered: the reports in ${out}/`,
      );
      assert.not.match(r.stderr + r.stdout, 'hunter2');
      assert.equal(
        redirector.seen.map((s) => s.method),
        ['POST'],
        'one post, no second request',
      );
      assert.equal(await real.alerts(), [], `${status}: nothing reached the Alertmanager it pointed at`);
      assert.ok(existsSync(join(out, 'mesh-audit.json')), 'the reports are still published');
    }
  },
);

withAm(
  '3. basic auth and a bearer token reach the real Alertmanager (a proxy checks the header) and appear in no output; credentials on the command line are refused, never printed',
  async () => {
    const real = await freshAlertmanager();
    const dir = tempDir();
    const password = 'pw-6a1f0c2e9d';
    const token = 'tok-3b7e5d8c4a';
    let expected = '';
    const proxy = await front(async (req, res, body) => {
      if (req.headers['authorization'] !== expected) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="am"' });
        res.end('unauthorized');
        return;
      }
      await forward(real.url, req, res, body);
    });
    const passwordFile = join(dir, 'am-password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `alertmanager:\n  url: ${proxy.url}\n  username: mesh\n  passwordFile: ${passwordFile}\n`);
    const everything = (r: ProcessRun, out: string) => r.stdout + r.stderr + (existsSync(out) ? allText(out) : '');

    // Basic auth, the password from a file named in the config.
    expected = `Basic ${Buffer.from(`mesh:${password}`).toString('base64')}`;
    let out = join(dir, 'basic');
    let r = await cli([
      'evaluate',
      driftHostSnapshot(dir, 'basic', { drift: true }),
      '--config',
      config,
      '--out',
      out,
      '--format',
      'json,sarif',
      '--verbose',
    ]);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, `sent 2 alerts to Alertmanager at ${proxy.url}`);
    assert.ok(
      (await real.alerts()).some((a) => a.labels['rule_id'] === 'MA1001'),
      'the alert reached Alertmanager',
    );
    assert.not.match(everything(r, out), password);
    assert.not.match(everything(r, out), Buffer.from(`mesh:${password}`).toString('base64'));

    // A bearer token from the environment (the URL from the flag; the config gives no credentials).
    expected = `Bearer ${token}`;
    out = join(dir, 'bearer');
    r = await cli(
      [
        'evaluate',
        driftHostSnapshot(dir, 'bearer', { drift: true, stray: true }),
        '--out',
        out,
        '--format',
        'json',
        '--alertmanager',
        proxy.url,
      ],
      { MESH_AUDIT_ALERTMANAGER_BEARER_TOKEN: token },
    );
    assert.is(r.code, 1, r.stderr);
    assert.ok(
      (await real.alerts()).some((a) => a.labels['rule_id'] === 'MA2001'),
      'the alert of this run reached Alertmanager',
    );
    assert.not.match(everything(r, out), token);

    // A wrong token: refused (401), named, the token still unseen.
    r = await cli(
      [
        'evaluate',
        driftHostSnapshot(dir, 'wrong', { drift: true }),
        '--out',
        join(dir, 'wrong'),
        '--format',
        'json',
        '--alertmanager',
        proxy.url,
      ],
      { MESH_AUDIT_ALERTMANAGER_BEARER_TOKEN: 'wrong-token-91' },
    );
    assert.is(r.code, 3, r.stderr);
    assert.match(r.stderr, `Alertmanager at ${proxy.url} refused the alerts: HTTP 401 (check the credentials`);
    assert.not.match(r.stderr, 'wrong-token-91');

    // `config show` says a credential is set, never what it is.
    const inline = join(dir, 'inline.yaml');
    writeFileSync(inline, `alertmanager:\n  url: ${proxy.url}\n  username: mesh\n  password: ${password}\n`);
    const shown = await cli(['config', 'show', '--config', inline, '--format', 'json']);
    assert.is(shown.code, 0, shown.stderr);
    assert.not.match(shown.stdout, password);
    assert.match(shown.stdout, '(set, not shown)');

    // Credentials in the URL on the command line: refused before anything is read (exit 2), shown as ***.
    const posted = proxy.seen.length;
    r = await cli([
      'evaluate',
      driftHostSnapshot(dir, 'url', { drift: true }),
      '--out',
      join(dir, 'url'),
      '--format',
      'json',
      '--alertmanager',
      `http://mesh:${password}@127.0.0.1:9/`,
    ]);
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, '--alertmanager http://***@127.0.0.1:9/: credentials in the URL are refused');
    assert.not.match(r.stdout + r.stderr, password);
    assert.not.ok(existsSync(join(dir, 'url')), 'nothing written');
    assert.is(proxy.seen.length, posted);
  },
);

withAm(
  "4. overlapping runs post in run order: a slow post of the older run never lands after the newer run's; Alertmanager ends in the newer run's state",
  async () => {
    const real = await freshAlertmanager();
    const dir = tempDir();
    const out = join(dir, 'reports');
    let newerDone: () => void = () => undefined;
    const newerFinished = new Promise<void>((r) => (newerDone = r));
    let first = true;
    // The first post (the older run's) is held until the newer run has finished, or 5 s have passed
    // (a newer run that waits for the older one, as it must, cannot finish first; the post's own
    // timeout is 10 s).
    const slow = await front(async (req, res, body) => {
      if (req.method === 'POST' && first) {
        first = false;
        await Promise.race([newerFinished, new Promise((r) => setTimeout(r, 5_000))]);
      }
      await forward(real.url, req, res, body);
    });
    const args = (snapshot: string) => [
      'evaluate',
      snapshot,
      '--out',
      out,
      '--format',
      'json',
      '--baseline',
      'auto',
      '--alertmanager',
      slow.url,
    ];
    const older = cli(args(driftHostSnapshot(dir, 'older', { drift: true })));
    await slow.waitFor((s) => s.method === 'POST');
    // The older run is posting: its reports are published. The newer one finds the drift healed.
    const newer = await cli(args(driftHostSnapshot(dir, 'newer')));
    newerDone();
    const olderRun = await older;
    assert.is(olderRun.code, 1, olderRun.stderr);
    assert.is(newer.code, 0, newer.stderr);
    const latest = JSON.parse(readFileSync(join(out, 'mesh-audit.json'), 'utf8')) as { absent?: { ruleId: string }[] };
    assert.ok(
      latest.absent?.some((f) => f.ruleId === 'MA1001'),
      'the latest report says the drift is absent',
    );
    const active = (await real.alerts()).filter((a) => a.labels['rule_id'] === 'MA1001');
    assert.equal(
      active.map((a) => a.labels['host']),
      [],
      'and Alertmanager agrees: the drift alert is resolved',
    );
  },
);

withAm(
  '5. a failing --prom-file does not stop the others: the reports are published and said, the alerts posted, exit 3 naming the prom file',
  async () => {
    const real = await freshAlertmanager();
    const dir = tempDir();
    const out = join(dir, 'reports');
    const prom = join(dir, 'missing', 'mesh-audit.prom');
    const r = await cli([
      'evaluate',
      driftHostSnapshot(dir, 'prom', { drift: true }),
      '--out',
      out,
      '--format',
      'json,sarif',
      '--prom-file',
      prom,
      '--alertmanager',
      real.url,
    ]);
    assert.is(r.code, 3, r.stderr);
    assert.match(r.stderr, `mesh-audit: --prom-file ${prom}: cannot use folder ${join(dir, 'missing')} (ENOENT)`);
    assert.match(r.stderr, `wrote ${out}/mesh-audit.json`);
    assert.match(r.stderr, `wrote ${out}/mesh-audit.sarif`);
    assert.match(r.stderr, `sent 2 alerts to Alertmanager at ${real.url}`);
    assert.match(
      r.stderr,
      `mesh-audit: not delivered: --prom-file ${prom}; delivered: the reports in ${out}/, the alerts to Alertmanager at ${real.url}`,
    );
    assert.ok(
      (await real.alerts()).some((a) => a.labels['rule_id'] === 'MA1001'),
      'the alerts were posted',
    );
  },
);

test('6. SIGTERM after the reports are published, while the alerts are posted: the line says what was published and that the alerts were not answered', async () => {
  const dir = tempDir();
  const out = join(dir, 'reports');
  // Holds every post without an answer: the run is stopped while it waits for Alertmanager.
  const hold = await front(() => undefined);
  const child = spawn(
    process.execPath,
    [
      BIN,
      'evaluate',
      driftHostSnapshot(dir, 'term', { drift: true }),
      '--out',
      out,
      '--format',
      'json',
      '--alertmanager',
      hold.url,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await Promise.race([hold.waitFor((s) => s.method === 'POST'), closed]);
  child.kill('SIGTERM');
  const code = await closed;
  clearTimeout(guard);
  assert.is(code, 143, stderr);
  assert.match(
    stderr,
    `mesh-audit: stopped by SIGTERM; published: the reports in ${out}/; not delivered: the alerts to Alertmanager at ${hold.url} (under way, not answered)`,
  );
  assert.ok(existsSync(join(out, 'mesh-audit.json')), 'the published reports stand');
});

withAm(
  '7. a 1 GB reply from "Alertmanager" is not read: the run stays under 200 MB of memory and ends with a named error; a silent one ends at the timeout',
  async () => {
    const dir = tempDir();
    const chunk = Buffer.alloc(1 << 20, 'x');
    let sent = 0;
    // 1 GB, chunked (no Content-Length to refuse it by): only reading it shows how big it is.
    const huge = await front((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const more = (): void => {
        while (sent < 1024 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => (sent = 1024));
      more();
    });
    // /usr/bin/time (Debian's `time`) reports the child's maximum resident set, in KiB.
    const r = await runProcess(
      '/usr/bin/time',
      [
        '-f',
        'maxrss-kib=%M',
        process.execPath,
        BIN,
        'evaluate',
        driftHostSnapshot(dir, 'huge', { drift: true }),
        '--out',
        join(dir, 'out'),
        '--format',
        'json',
        '--alertmanager',
        huge.url,
      ],
      { timeoutMs: 120_000 },
    );
    const maxRssKib = Number(/maxrss-kib=(\d+)/.exec(r.stderr)?.[1] ?? NaN);
    assert.ok(Number.isFinite(maxRssKib), `/usr/bin/time reported the max RSS: ${r.stderr}`);
    assert.is(r.code, 3, r.stderr);
    assert.match(
      r.stderr,
      `mesh-audit: Alertmanager at ${huge.url} answered with more than 64 KiB (HTTP 200); not read further`,
    );
    assert.ok(maxRssKib < 200 * 1024, `max RSS ${Math.round(maxRssKib / 1024)} MB, under 200 MB`);

    // An Alertmanager that never answers: the post ends at alertmanager.timeoutSeconds, named.
    const silent = await front(() => undefined);
    const config = join(dir, 'silent.yaml');
    writeFileSync(config, `alertmanager:\n  url: ${silent.url}\n  timeoutSeconds: 1\n`);
    const quiet = await cli([
      'evaluate',
      driftHostSnapshot(dir, 'silent', { drift: true }),
      '--config',
      config,
      '--out',
      join(dir, 'silent'),
      '--format',
      'json',
    ]);
    assert.is(quiet.code, 3, quiet.stderr);
    assert.match(
      quiet.stderr,
      `mesh-audit: Alertmanager at ${silent.url} did not answer within 1 s; the alerts may not have been taken`,
    );
  },
);

test.run();
