import type { CAC } from 'cac';
import { request } from 'node:http';
import { acquireSnapshot, type AcquireIo } from '../acquire.js';
import { ExitCode, MeshAuditError } from '../errors.js';
import { IncrementalAudit, reportOf, triage } from '../pipeline.js';
import { renderJson } from '../report/json.js';
import { renderProm } from '../report/prom.js';
import type { Report } from '../report/report.js';
import {
  ReadCache,
  resolveHostname,
  watchHost,
  type EngineChange,
  type HostWatchers,
  type WatchChange,
} from '../scan.js';
import { readingScopeOf } from '../scope.js';
import { describe, listen, type Answers, type Where } from '../serve/answers.js';
import { alertsToPost } from '../serve/delivery.js';
import { ServeHistory, type KeepOutcome } from '../serve/kept-history.js';
import { ComingBack } from '../serve/coming-back.js';
import { Resident } from '../serve/resident.js';
import { postAlerts } from '../alert/alertmanager.js';
import { exitCodeOfState, statusLine, type ServeStatus } from '../serve/status.js';
import { shownMessage } from '../shown.js';
import { withProblems } from '../snapshot/problems.js';
import type { Snapshot } from '../snapshot/types.js';
import { addCollectOptions, type CollectFlags } from './acquire.js';
import { parseCount } from './choices.js';
import { detail, note, type CommandContext } from './context.js';
import { prepareAuditRun, type AuditOptions, type AuditRun } from './evaluate.js';
import { addPolicyOptions, addScopeOptions, addSettingOptions } from './settings.js';

/*
 * `mesh-audit serve`: the check on every heartbeat (issue 44). It reads the host as `scan` does, then reads it again
 * whenever the engine's events, a watched folder or the socket tables say something changed (and every --resync), and
 * answers over a unix socket what the nightly job would say now. `mesh-audit status` asks it, and exits as `scan`
 * would. Nothing is written but the socket, and with --out each whole read's snapshot in that folder's history.
 */

export const DEFAULT_SOCKET = '/run/mesh-audit/serve.sock';

type ServeFlags = CollectFlags &
  AuditOptions & {
    socket?: string;
    listen?: string;
    resync?: string | number;
    listenersEvery?: string | number;
  };

/** `--listen`: a loopback address and port only (the findings say what runs where; they are not for the network). */
export function parseListen(value: unknown): Where {
  const text = String(value);
  const m = /^(127\.0\.0\.1|\[::1\]):(\d{1,5})$/.exec(text);
  const port = m === null ? NaN : Number(m[2]);
  if (m === null || port < 1 || port > 65535)
    throw new MeshAuditError(`--listen ${shownMessage(text)}: give 127.0.0.1:PORT or [::1]:PORT (loopback only)`);
  return { host: m[1] === '127.0.0.1' ? '127.0.0.1' : '::1', port };
}

const whereOf = (flags: { socket?: string; listen?: string }): Where =>
  flags.listen !== undefined ? parseListen(flags.listen) : { socket: String(flags.socket ?? DEFAULT_SOCKET) };

/** A read's progress and problems go nowhere but --verbose: what was not read is in every answer. */
const quietIo = (ctx: CommandContext): AcquireIo => ({
  now: () => ctx.now(),
  note: (t) => detail(ctx, t),
  detail: (t) => detail(ctx, t),
  problem: (t) => detail(ctx, `not read: ${shownMessage(t)}`),
  startProgress: () => ({ step: () => undefined, done: () => undefined }),
});

/**
 * One read of the host, as `scan` makes it (acquireSnapshot, then the same pipeline: auditSnapshot, reportOf, triage),
 * its report for the answer; the watches follow the files of each snapshot read. The history is the one in memory
 * (src/serve/kept-history.ts); a whole read's snapshot is kept in it (with --out), what became of it told to `kept`.
 */
function hostReader(
  current: () => AuditRun,
  ctx: CommandContext,
  cache: ReadCache,
  history: ServeHistory,
  follow: (snapshot: Snapshot) => void,
  kept: (outcome: KeepOutcome) => void,
): { read: () => Promise<Report> } {
  // Re-evaluates only the subjects a change touched; what it gives is auditSnapshot's (a new rule list starts afresh).
  const incremental = new IncrementalAudit();
  let keptIn = -1;
  const read = async () => {
    const run = current();
    const settings = run.resolved.settings;
    const startedAt = ctx.now();
    const io = quietIo(ctx);
    const loaded = await history.forRead(await resolveHostname(settings), io);
    const acquired = await acquireSnapshot(
      {
        keep: run.keep,
        loaded,
        settings: () => Promise.resolve(settings),
        scope: readingScopeOf(run.scope, startedAt),
        cache,
      },
      io,
    );
    const use = cache.use();
    detail(
      ctx,
      `read: ${use.containersInspected} containers inspected, ${use.containersReused} unchanged; ` +
        `${use.filesRead} files read, ${use.filesReused} unchanged` +
        (use.listenersReused > 0 ? "; listeners' holders unchanged" : ''),
    );
    // A whole read is what a scan reads: its snapshot is kept as a scan's would be; a read that took from the one
    // before it keeps nothing. One is kept per whole read asked for (the first, each resync, SIGHUP, the engine lost
    // or back): while the engine is down every read reuses nothing, and keeping each would prune the good ones out.
    const renewal = cache.renewals();
    if (cache.wasWhole() && renewal !== keptIn && acquired.snapshots[0] !== undefined) {
      const outcome = await history.wholeRead(acquired.snapshots[0], loaded, settings.keep, io);
      if (outcome !== null) kept(outcome);
      if (outcome?.kind === 'kept') keptIn = renewal;
    }
    const snapshots = acquired.snapshots.map((s) => withProblems(s, acquired.history.problems));
    // Watched before the answer says anything of them.
    if (snapshots[0] !== undefined) follow(snapshots[0]);
    const evaluations = snapshots.map((s) =>
      incremental.audit(s, acquired.history.snapshots, run.selected, { scoped: { scope: run.scope, now: startedAt } }),
    );
    const now = ctx.now();
    const report = reportOf(evaluations, run.selected, {
      now,
      startedAt,
      packs: run.packs,
      docsUrl: settings.docsUrl,
      skipped: run.skipped,
    });
    return triage(report, {
      ...(run.waivers ? { waivers: run.waivers } : {}),
      ...(run.baseline ? { baseline: run.baseline } : {}),
      now,
    });
  };
  return { read };
}

/** Posts the alerts of each new answer when they changed (or are due again); a failure is an incomplete answer. */
function alertDelivery(current: () => AuditRun, renewEveryMs: number, resident: () => Resident) {
  let posted: { report: Report; postedAt: number } | null = null;
  return async (report: Report): Promise<void> => {
    const run = current();
    const target = run.alertTarget;
    if (target === undefined) return;
    const cause = `the alerts could not be delivered to Alertmanager at ${target.url.origin}`;
    const alerts = alertsToPost(report, posted, { ttlHours: run.ttlHours, now: Date.now(), renewEveryMs });
    if (alerts === null) return;
    try {
      await postAlerts(target, alerts);
      posted = { report, postedAt: Date.now() };
      resident().unflag(cause);
    } catch {
      resident().flag(cause);
    }
  };
}

/** Causes said while they hold (the folders not watched): flagged on the answer, unflagged once gone. */
function flagSet(resident: () => Resident): { set(causes: readonly string[]): void } {
  let held: readonly string[] = [];
  return {
    set(causes) {
      for (const cause of held) if (!causes.includes(cause)) resident().unflag(cause);
      for (const cause of causes) if (!held.includes(cause)) resident().flag(cause);
      held = causes;
    },
  };
}

/**
 * What a change makes the cache forget: the container an engine event names, the images, the network and volume
 * lists, or all the engine said; the slices read from the files or the host's sockets; a container's /proc when the
 * poll saw its processes move. A change that says nothing of what (none) may be anything.
 */
function forget(cache: ReadCache, change: EngineChange | WatchChange | undefined): void {
  if (change === undefined) {
    cache.forgetEngine();
    cache.sourceChanged('files');
    return;
  }
  if (change.type === 'container') cache.forgetContainer(change.id);
  else if (change.type === 'image') cache.forgetImages();
  else if (change.type === 'listed') cache.forgetListed();
  else if (change.type === 'files' || change.type === 'listeners') cache.sourceChanged(change.type);
  else if (change.type === 'processes') cache.forgetProc(change.id);
  // The daemon's events, and any event not understood, may concern anything of the engine's.
  else cache.forgetEngine();
}

/** What the watches tell: the cache forgets what changed (all of it when knowledge was lost), the resident reads. */
function watchersOf(
  cache: ReadCache,
  resident: Resident,
  unwatched: ReturnType<typeof flagSet>,
  nowMs: () => number,
): HostWatchers {
  // A container that went down holds the read back until it is up again (one read for a restart, not two).
  const comingBack = new ComingBack(RESTART_HOLD_MS);
  return {
    changed: (change) => {
      forget(cache, change);
      const now = nowMs();
      if (change?.type === 'container' && change.going !== undefined) comingBack.told(change.id, change.going, now);
      resident.changed(comingBack.until(now));
    },
    lost: (cause) => {
      cache.renew();
      cache.eventsLost();
      comingBack.forget();
      resident.holding(cause);
    },
    heard: () => cache.eventsHeard(),
    back: (cause) => {
      cache.renew();
      resident.recovered(cause);
    },
    unwatched: (causes) => unwatched.set(causes),
  };
}

/**
 * serve's history (src/serve/kept-history.ts): kept in `--out DIR` when that flag is given on serve's command line, and
 * only then. The config file's `out` is the nightly scan's, and the packaged unit gives serve a read-only view of it
 * (examples/serve/mesh-audit-serve.service): it does not make serve write.
 */
function historyOf(flags: ServeFlags): { out: string | undefined; history: ServeHistory } {
  // The flag itself, not the merged setting (AuditOptions.out): that one has the config's value or a default.
  const given: unknown = (flags as { out?: unknown }).out;
  const out = given === undefined ? undefined : String(given);
  if (out === '-' || out === '')
    throw new MeshAuditError(`serve --out ${shownMessage(out)}: give the folder whose history keeps each whole read`);
  const history = new ServeHistory({
    ...(out !== undefined ? { out } : {}),
    ...(flags.history !== undefined ? { named: String(flags.history) } : {}),
  });
  return { out, history };
}

/**
 * What became of a whole read's snapshot, told: a keep that failed makes the answer incomplete, naming why, until one
 * succeeds; a folder held by another run (a nightly scan) is a keep skipped, said, and the answer stays what it is.
 */
function toldKept(outcome: KeepOutcome, out: string, ctx: CommandContext, notKept: ReturnType<typeof flagSet>): void {
  if (outcome.kind === 'kept') notKept.set([]);
  else if (outcome.kind === 'failed') notKept.set([outcome.cause]);
  else
    note(
      ctx,
      `mesh-audit serve: ${shownMessage(out)} is held by another mesh-audit run (${outcome.holder}): this whole ` +
        "read's snapshot not kept; the next whole read keeps its own",
    );
}

/** Resolves with the signal that stops serve; `hup` is called on each SIGHUP meanwhile. */
function stopSignal(hup: () => void): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>((resolve) => {
    // Stopping is the job of this command, not the one-shot runs' handler (src/cli/signals.ts): SIGTERM is a clean end.
    process.removeAllListeners('SIGTERM');
    process.removeAllListeners('SIGINT');
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
    process.on('SIGHUP', hup);
  });
}

/** The answers, read from the resident's current report at each request. */
const answersOf = (resident: Resident): Answers => ({
  status: () => resident.statusAnswer(),
  findings: () => {
    const r = resident.current();
    return r === null ? null : renderJson(r);
  },
  metrics: () => {
    const r = resident.current();
    return r === null ? null : renderProm(r);
  },
});

/**
 * When serve reads after a change: once no change came for SETTLE_MS; a container that went down (died, stopped) holds
 * the read back until it starts again or RESTART_HOLD_MS pass (src/serve/coming-back.ts); no change waits longer than
 * MAX_SETTLE_MS, however many follow it. docs/serve.md says so.
 */
const SETTLE_MS = 250;
const RESTART_HOLD_MS = 1000;
const MAX_SETTLE_MS = 2000;

/** Each engine request ends within the engine timeout (an error is an answer too): a read twice as long is stuck. */
const overdueMsOf = (run: AuditRun): number => 2 * run.resolved.settings.dockerTimeoutSeconds * 1000;

/** The run as `scan` prepares it; a baseline is a report file (serve reads no earlier report from a folder). */
async function prepareServeRun(flags: ServeFlags, ctx: CommandContext): Promise<AuditRun> {
  const run = await prepareAuditRun(flags, ctx);
  if (run.options.baseline === 'auto')
    throw new MeshAuditError(
      'serve --baseline auto: serve reads no earlier report from a folder; name the report file',
    );
  return run;
}

async function serve(flags: ServeFlags, ctx: CommandContext): Promise<number> {
  const where = whereOf(flags);
  const resyncMs = parseCount('--resync', flags.resync, 15) * 60_000;
  const listenersMs = parseCount('--listeners-every', flags.listenersEvery, 10) * 1000;
  let run = await prepareServeRun(flags, ctx);
  const { out, history } = historyOf(flags);
  const notKept = flagSet(() => resident);
  // What one read keeps for the next: only what the engine's events and the files' lstat say is unchanged.
  const cache = new ReadCache();
  // A folder watched for the first time may have changed while it was read, unheard: one more read.
  const reader = hostReader(
    () => run,
    ctx,
    cache,
    history,
    (snapshot) => {
      if (watches.follow(snapshot)) watchers.changed({ type: 'files' });
    },
    (outcome) => toldKept(outcome, out ?? '', ctx, notKept),
  );
  const stop = new AbortController();
  const deliver = alertDelivery(
    () => run,
    resyncMs,
    () => resident,
  );
  const unwatched = flagSet(() => resident);
  const resident: Resident = new Resident({
    read: reader.read,
    failOn: run.failOn,
    now: () => ctx.now(),
    settleMs: SETTLE_MS,
    maxSettleMs: MAX_SETTLE_MS,
    overdueMs: overdueMsOf(run),
    whole: () => cache.wasWhole(),
    onReport: async (report) => {
      await deliver(report);
      const s = resident.status();
      detail(ctx, `read: ${s.state}, ${s.counts.error} errors, ${s.counts.warning} warnings, ${s.counts.note} notes`);
    },
    onReadFailure: (e) => ctx.stderr(`mesh-audit serve: a read failed: ${shownMessage(String(e))}\n`),
  });
  const watchers = watchersOf(cache, resident, unwatched, () => ctx.now().getTime());
  const watches = watchHost(run.resolved.settings, watchers, {
    signal: stop.signal,
    listenersEveryMs: listenersMs,
    retryMs: 1000,
    cache,
  });
  const server = await listen(where, answersOf(resident));
  note(ctx, `mesh-audit serve: answering on ${describe(where)}`);
  // The resync is a whole read, as a scan's, under a new key.
  const resync = setInterval(() => {
    cache.renew();
    resident.changed();
  }, resyncMs);
  void resident.readNow();
  // SIGHUP: the config, packs, waivers and baseline read again (a mistake in them keeps the ones in use, and says so),
  // then the host. Where the watches look (the engine, --root) is what serve started with.
  const reload = async () => {
    try {
      run = await prepareAuditRun(flags, ctx);
      resident.setFailOn(run.failOn);
      cache.renew();
      note(ctx, 'mesh-audit serve: config and packs read again (SIGHUP)');
    } catch (e) {
      ctx.stderr(`mesh-audit serve: SIGHUP: kept the config in use: ${shownMessage(String(e))}\n`);
    }
    resident.changed();
  };
  const signal = await stopSignal(() => void reload());
  clearInterval(resync);
  stop.abort();
  await resident.stop();
  await cache.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  note(ctx, `mesh-audit serve: stopped by ${signal}`);
  return ExitCode.Ok;
}

/** GET one path of a running serve; the body, or an error naming where nobody answered. */
export function ask(where: Where, path: string, timeoutMs: number): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = 'socket' in where ? { socketPath: where.socket } : { host: where.host, port: where.port };
    const req = request({ ...target, path, method: 'GET', timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        if (body.length > 64 * 1024 * 1024) req.destroy(new Error('answer too large'));
      });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) =>
      reject(new MeshAuditError(`no serve answers on ${describe(where)}: ${e.code ?? e.message}`, ExitCode.Incomplete)),
    );
    req.end();
  });
}

async function status(flags: { socket?: string; listen?: string; timeout?: string | number }, ctx: CommandContext) {
  const where = whereOf(flags);
  const answer = await ask(where, '/v1/status', parseCount('--timeout', flags.timeout, 10) * 1000);
  let parsed: ServeStatus;
  try {
    parsed = JSON.parse(answer.body) as ServeStatus;
    if (typeof parsed.state !== 'string') throw new Error('no state');
  } catch {
    throw new MeshAuditError(`${describe(where)} did not answer a status (HTTP ${answer.code})`, ExitCode.Incomplete);
  }
  ctx.stdout(`${statusLine(parsed, parsed.host ?? describe(where))}\n`);
  return exitCodeOfState(parsed.state);
}

export function registerServe(cli: CAC, ctx: CommandContext): void {
  addSettingOptions(
    addScopeOptions(
      addPolicyOptions(
        addCollectOptions(
          cli.command(
            'serve',
            'Stay resident: read the host, keep the answer current from its events, answer on a socket',
          ),
        ),
      ),
    ),
    ['failOn', 'profile', 'baseline', 'waivers', 'alertmanager', 'alertTtl', 'keep'],
  )
    .option('--socket <path>', `Unix socket to answer on, mode 0660, group mesh-audit (default: ${DEFAULT_SOCKET})`)
    .option('--listen <address>', 'Answer on loopback TCP instead: 127.0.0.1:PORT or [::1]:PORT')
    .option('--resync <minutes>', 'Read the whole host again this often, whatever the events say (default 15)')
    .option('--listeners-every <seconds>', 'Look at the socket tables this often: sockets have no events (default 10)')
    .option('--history <dir>', "Earlier snapshots, for former targets (a scan's --out folder; default: --out's)")
    .option(
      '--out <dir>',
      "Keep each whole read's snapshot in this folder's history, as scan --out does (taking its lock only to keep)",
    )
    .example('sudo mesh-audit serve --managed-root /etc/mesh --history /var/lib/mesh-audit')
    .example('sudo mesh-audit serve --managed-root /etc/mesh --out /var/lib/mesh-audit')
    .action((flags: ServeFlags) => serve(flags, ctx));
  cli
    .command('status', "Ask a running serve for the host's state; exit 0, 1 or 3 as scan would")
    .option('--socket <path>', `The serve's unix socket (default: ${DEFAULT_SOCKET})`)
    .option('--listen <address>', 'Ask a serve answering on loopback TCP: 127.0.0.1:PORT or [::1]:PORT')
    .option('--timeout <seconds>', 'How long to wait for the answer (default 10)')
    .example('mesh-audit status --socket /run/mesh-audit/serve.sock')
    .action((flags: { socket?: string; listen?: string; timeout?: string }) => status(flags, ctx));
}
