import { spawn, type ChildProcess } from 'node:child_process';
import { findBinary } from './binary.js';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private Alertmanager for tests: Debian's `prometheus-alertmanager` (bookworm: 0.25.0-1+b4,
 * `/usr/bin/prometheus-alertmanager`; `.ci/run` must apt-get install `prometheus-alertmanager`),
 * started as a child of the test process — never the system service — with its own temp dir
 * (config + `--storage.path`), `--web.listen-address=127.0.0.1:<free port>` and clustering off
 * (`--cluster.listen-address=`), so it listens on that one loopback port and gossips with nobody.
 * Config: `route: {receiver: 'null'}`, `receivers: [{name: 'null'}]` (no integration, nothing is
 * sent anywhere); `resolve_timeout` is left at its default, 5m.
 *
 * Observed behaviour of 0.25.0 (verified by experiment; test/alertmanager-harness.test.ts asserts it):
 *
 * - `POST /api/v2/alerts` takes a JSON array of `{labels, annotations?, startsAt?, endsAt?}` and answers
 *   200 with an empty body. An alert whose endsAt is before its startsAt is refused: 400,
 *   `"start time must be before end time"`.
 * - Firing: after `[{labels:{alertname:'X',severity:'error'}, annotations:{message:'m'}, startsAt:now}]`
 *   the very next `GET /api/v2/alerts` (no delay needed; 100 of 100 tries) lists it with
 *   `status.state === 'active'`, `status.silencedBy/inhibitedBy === []`, `receivers: [{name:'null'}]`,
 *   a `fingerprint`, and `updatedAt` = time of receipt. It is never seen as 'unprocessed' here.
 * - No endsAt: Alertmanager sets `endsAt = updatedAt + resolve_timeout` (5 minutes after receipt) and
 *   the alert stays listed as active until then (or until re-posted, which pushes endsAt again).
 *   No startsAt either: startsAt = time of receipt. endsAt in the future (e.g. now+3s): listed as
 *   active with exactly that endsAt until the moment passes, then gone from the list.
 * - Resolved: posting the same labels with `endsAt` = now (or any past time; startsAt may be omitted)
 *   makes the alert DISAPPEAR from `GET /api/v2/alerts` at once. Resolved alerts are never listed
 *   by the v2 API, whatever the query: `active`, `silenced`, `inhibited`, `unprocessed` (each
 *   default true; `false` excludes alerts in that state) only filter among unresolved alerts, and
 *   `?active=false`, `?unprocessed=true`, all four true/false etc. all return `[]`. There is no
 *   state 'resolved'. `GET /api/v2/alerts/groups` and the deprecated `GET /api/v1/alerts` also
 *   show nothing. An alert that was never seen and is posted already resolved is accepted (200)
 *   and never listed. (Internally it is kept until `--alerts.gc-interval`, 30m, but unseen.)
 * - So "resolved ones end" is observable as: the alert is absent from GET /api/v2/alerts (match by
 *   labels), and, before resolution, its listed `endsAt` is the endsAt that was posted (or receipt
 *   + 5m). The counters on `GET /metrics` show it too: `alertmanager_alerts_received_total
 *   {status="resolved",version="v2"}` counts posts of alerts whose endsAt has passed,
 *   `alertmanager_alerts{state="active"}` the currently active ones.
 * - Re-firing after resolution (same labels, no endsAt) makes a new active alert with the new
 *   startsAt (the same fingerprint); the old startsAt is not kept.
 * - `GET /-/ready` answers 200 within ~0.1–0.2 s of start here; SIGTERM stops it in ~30 ms.
 */

export interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  status: { state: string; silencedBy?: string[]; inhibitedBy?: string[] };
  fingerprint?: string;
  updatedAt?: string;
  receivers?: { name: string }[];
}

/** What `POST /api/v2/alerts` takes, per alert. */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: string;
  endsAt?: string;
  generatorURL?: string;
}

export interface AlertFilter {
  active?: boolean;
  silenced?: boolean;
  inhibited?: boolean;
  unprocessed?: boolean;
}

export interface AlertmanagerInstance {
  /** http://127.0.0.1:PORT */
  url: string;
  /** SIGTERM, SIGKILL after 3 s; removes the temp dir. Safe to call twice. */
  stop(): Promise<void>;
  /** GET /api/v2/alerts (only unresolved alerts are ever listed; see the top of this file). */
  alerts(filter?: AlertFilter): Promise<AmAlert[]>;
  /** POST /api/v2/alerts; throws with the answer on anything but 200. */
  post(alerts: PostableAlert[]): Promise<void>;
  /** Alertmanager's own log so far (stdout and stderr). */
  log(): string;
}

const READY_TIMEOUT_MS = 20_000;
const POLL_MS = 100;
const KILL_AFTER_MS = 3_000;
const PORT_TRIES = 5;

const CONFIG = `route:
  receiver: 'null'
receivers:
  - name: 'null'
`;

/** `ALERTMANAGER_BIN`, else `/usr/bin/prometheus-alertmanager`, else on PATH; null when none. */
export function alertmanagerPath(): string | null {
  return findBinary('ALERTMANAGER_BIN', '/usr/bin/prometheus-alertmanager', [
    'prometheus-alertmanager',
    'alertmanager',
  ]);
}

export function hasAlertmanager(): boolean {
  return alertmanagerPath() !== null;
}

// Children still running when the test process exits are killed (synchronously: 'exit' allows no more).
const live = new Map<ChildProcess, string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [child, dir] of live) {
      try {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
      rmSync(dir, { recursive: true, force: true });
    }
    live.clear();
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port from listen(0)'))));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

interface Started {
  child: ChildProcess;
  exited: Promise<void>;
}

function launch(bin: string, dir: string, port: number, logFile: string): Started {
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      bin,
      [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
        '--log.level=info',
      ],
      { cwd: dir, stdio: ['ignore', fd, fd], detached: false },
    );
  } finally {
    closeSync(fd);
  }
  // A forgotten instance must not keep the test process alive; the exit hook kills it.
  child.unref();
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  return { child, exited };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.ref();
  try {
    child.kill('SIGTERM');
  } catch {
    /* already gone */
  }
  let timer: NodeJS.Timeout | undefined;
  const graceful = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), KILL_AFTER_MS))),
  ]);
  clearTimeout(timer);
  if (!graceful) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
    await exited;
  }
}

async function ready(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Starts a private Alertmanager on a free loopback port and waits until /-/ready answers 200. */
export async function startAlertmanager(): Promise<AlertmanagerInstance> {
  const bin = alertmanagerPath();
  if (!bin)
    throw new Error(
      'prometheus-alertmanager not found (apt-get install prometheus-alertmanager, or set ALERTMANAGER_BIN)',
    );
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), 'ma-alertmanager-'));
  writeFileSync(join(dir, 'alertmanager.yml'), CONFIG);
  const logFile = join(dir, 'alertmanager.log');

  let lastFailure = '';
  for (let attempt = 1; attempt <= PORT_TRIES; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const logStart = readLog(logFile).length;
    const { child, exited } = launch(bin, dir, port, logFile);
    live.set(child, dir);
    let gone = false;
    void exited.then(() => (gone = true));

    const deadline = Date.now() + READY_TIMEOUT_MS;
    let up = false;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- `gone` is set by the exit callback above
    while (!gone && Date.now() < deadline) {
      if (await ready(url)) {
        up = !gone;
        break;
      }
      await sleep(POLL_MS);
    }
    if (up) return instance(url, dir, logFile, child, exited);

    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the exit callback
    lastFailure = gone
      ? `exited (${child.exitCode ?? child.signalCode}) before it was ready`
      : `not ready within ${READY_TIMEOUT_MS / 1000} s, killed`;
    await stopChild(child, exited);
    live.delete(child);
    const log = readLog(logFile).slice(logStart);
    // The port was taken between our probe and its bind: try another one.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the exit callback
    if (gone && /address already in use/i.test(log)) {
      lastFailure += ` on port ${port}:\n${tail(log)}`;
      continue;
    }
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`prometheus-alertmanager ${lastFailure} (${url}); log tail:\n${tail(log)}`);
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`prometheus-alertmanager could not bind a free port in ${PORT_TRIES} tries; last: ${lastFailure}`);
}

function instance(
  url: string,
  dir: string,
  logFile: string,
  child: ChildProcess,
  exited: Promise<void>,
): AlertmanagerInstance {
  let stopping: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopping ??= (async () => {
        await stopChild(child, exited);
        live.delete(child);
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
    async alerts(filter = {}) {
      const query = new URLSearchParams();
      for (const key of ['active', 'silenced', 'inhibited', 'unprocessed'] as const) {
        const value = filter[key];
        if (value !== undefined) query.set(key, String(value));
      }
      const qs = query.toString();
      const res = await fetch(`${url}/api/v2/alerts${qs ? `?${qs}` : ''}`, { signal: AbortSignal.timeout(10_000) });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`GET /api/v2/alerts: ${res.status} ${body}`);
      return JSON.parse(body) as AmAlert[];
    },
    async post(alerts) {
      const res = await fetch(`${url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alerts),
        signal: AbortSignal.timeout(10_000),
      });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`POST /api/v2/alerts: ${res.status} ${body}`);
    },
    log: () => readLog(logFile),
  };
}
