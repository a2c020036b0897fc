/*
 * serve benchmark (issue 44): `mesh-audit serve` on the realistic host (test/support/realistic-live.ts: 300
 * containers, 100 running, on a private engine), reaching the engine through the recording proxy
 * (test/support/engine-proxy.ts) so that every request a read makes is counted. In one run:
 * - `/v1/status` latency over 1,000 sequential requests on the unix socket, one connection each as
 *   `mesh-audit status` opens (goal p99 ≤ 5 ms);
 * - idle CPU over 60 s (utime + stime from /proc/PID/stat, % of one core; goal ≤ 0.5%): the listeners'
 *   poll every 10 s runs in it, the resync (15 min) does not;
 * - one container event (`docker restart -t 0` of a running container that does not listen): the engine
 *   requests of the reads it causes (inspects, all) and serve's CPU for them, side by side with a whole
 *   read (the first, and one after SIGHUP) (goal ≤ 20 ms of CPU, that container's inspect only);
 * - RSS before and after a run of events (pause / unpause of running containers, each waited out), as
 *   many as fit in the time given (goal: no growth).
 * CPU here is what the kernel charged the serve process (all its threads), in clock ticks; so an event's
 * figure is the mean over several events. No figure is a test assertion: they are reported, goal or not.
 *
 * Usage: node dist/test/bench/serve.bench.js [events] [eventSeconds]   (defaults 1000 events, at most 480 s
 * of them). MA_BENCH_PROFILE=DIR runs serve with --cpu-prof into DIR.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { engine } from '../docker/engine.js';
import { tempDir } from '../support/cli.js';
import { engineProxy, unversioned, type ProxiedRequest } from '../support/engine-proxy.js';
import { machineScopeArgs } from '../support/machine-scope.js';
import { startRealisticLiveHost } from '../support/realistic-live.js';
import { getOn } from '../support/serve-child.js';
import { BIN, median, report, round, type Figure } from './common.js';

const EVENTS = Number(process.argv[2] ?? 1000);
const EVENT_SECONDS = Number(process.argv[3] ?? 480);
const STATUS_REQUESTS = 1000;
const IDLE_MS = 60_000;
const SINGLE_EVENTS = 10;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** utime + stime of the process (all its threads), ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), counted from the state (field 3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Resident set size, MiB. */
function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return round(kb / 1024, 1);
}

function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

interface Status {
  state: string;
  lastRead: string | null;
  lastFullRead: string | null;
}

/** What a stretch of the proxy's record holds: container inspects, image inspects, reads (container lists), all. */
function countRequests(requests: readonly ProxiedRequest[]): {
  inspects: number;
  inspected: string[];
  images: number;
  reads: number;
  total: number;
} {
  const own = requests.filter((r) => unversioned(r.path) !== '/events');
  const inspected = own.flatMap((r) => /^\/containers\/([^/]+)\/json$/.exec(unversioned(r.path))?.[1] ?? []);
  return {
    inspects: inspected.length,
    inspected: [...new Set(inspected)],
    images: own.filter((r) => /^\/images\/.+\/json$/.test(unversioned(r.path))).length,
    reads: own.filter((r) => unversioned(r.path) === '/containers/json').length,
    total: own.length,
  };
}

async function main(): Promise<void> {
  const e = engine();
  if (!e) throw new Error('no Docker engine: install docker.io and busybox-static');
  const host = await startRealisticLiveHost(e);
  const proxy = await engineProxy(host.dockerHost);
  let child: ChildProcess | undefined;
  try {
    const socket = join(tempDir('ma-bench-serve-', '/tmp'), 'serve.sock');
    const profileDir = process.env['MA_BENCH_PROFILE'];
    // The engine settles after starting 100 containers before serve reads it.
    await sleep(10_000);
    const args = [
      ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
      BIN,
      'serve',
      '--socket',
      socket,
      '--docker-host',
      proxy.dockerHost,
      '--ledger',
      host.ledger,
      '--managed-root',
      host.managedRoot,
      '--hostname',
      host.hostname,
      ...machineScopeArgs(),
    ];
    proxy.clearRecord();
    const spawnedAt = Date.now();
    const serve = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: process.env });
    child = serve;
    let stderr = '';
    serve.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-20_000)));
    const pid = serve.pid!;
    const status = async (): Promise<Status | null> => {
      const a = await getOn(socket, '/v1/status');
      return a.code === 200 ? (JSON.parse(a.body) as Status) : null;
    };
    const until = async (what: string, check: (s: Status) => boolean, ms: number, everyMs = 50): Promise<Status> => {
      const end = Date.now() + ms;
      for (;;) {
        const s = await status();
        if (s && check(s)) return s;
        if (serve.exitCode !== null || Date.now() > end)
          throw new Error(`${what}: not within ${ms} ms (last ${JSON.stringify(s)}); serve's stderr: ${stderr}`);
        await sleep(everyMs);
      }
    };
    /** Waits for a read that ended after `after`, then until no read has ended for `quietMs` (an event's reads). */
    const settle = async (
      what: string,
      after: string,
      quietMs = 1000,
      ended: (s: Status) => string | null = (x) => x.lastRead,
    ): Promise<Status> => {
      let s = await until(what, (x) => (ended(x) ?? '') > after, 60_000);
      for (let last = s.lastRead, since = Date.now(); Date.now() - since < quietMs; ) {
        await sleep(100);
        s = (await status()) ?? s;
        if (s.lastRead !== last) {
          last = s.lastRead;
          since = Date.now();
        }
      }
      return s;
    };

    // The first read: from the spawn (Node's start included) to its answer.
    const first = await until('the first read', (s) => s.lastRead !== null, 300_000, 100);
    const firstWallMs = Date.now() - spawnedAt;
    const firstCpu = cpuMs(pid);
    const firstRequests = countRequests(proxy.requests);
    process.stderr.write(
      `first read: ${firstCpu} ms CPU, ${firstWallMs} ms, ${JSON.stringify({ ...firstRequests, inspected: firstRequests.inspected.length })}\n`,
    );
    // The read a folder watched anew asks for (src/collect/host-watch.ts), then quiet.
    for (let last = first.lastRead, since = Date.now(); Date.now() - since < 3000; ) {
      await sleep(100);
      const now = (await status())?.lastRead ?? last;
      if (now !== last) [last, since] = [now, Date.now()];
    }

    // A whole read asked for by SIGHUP (the config, packs and the whole host read again under a new key).
    let mark = proxy.requests.length;
    let cpu0 = cpuMs(pid);
    let at = new Date().toISOString();
    serve.kill('SIGHUP');
    const hup = await settle('the whole read after SIGHUP', at, 1000, (x) => x.lastFullRead);
    const hupCpu = cpuMs(pid) - cpu0;
    const hupRequests = countRequests(proxy.requests.slice(mark));
    process.stderr.write(
      `SIGHUP read: ${hupCpu} ms CPU, ${JSON.stringify({ ...hupRequests, inspected: hupRequests.inspected.length })}\n`,
    );
    if (hup.lastFullRead === null || hup.lastFullRead <= at)
      throw new Error(`SIGHUP did not make a whole read: ${JSON.stringify(hup)}`);

    // /v1/status latency, sequential, a new connection each.
    const latencies: number[] = [];
    const rssBeforeStatus = rssMiB(pid);
    for (let i = 0; i < STATUS_REQUESTS; i++) {
      const t = process.hrtime.bigint();
      const a = await getOn(socket, '/v1/status');
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (a.code !== 200) throw new Error(`/v1/status answered ${a.code}`);
    }
    const rssAfterStatus = rssMiB(pid);

    // Idle: nothing asked, nothing changed, for 60 s.
    await sleep(2000);
    mark = proxy.requests.length;
    const idleReadBefore = (await status())!.lastRead;
    cpu0 = cpuMs(pid);
    const idleStart = process.hrtime.bigint();
    await sleep(IDLE_MS);
    const idleCpu = cpuMs(pid) - cpu0;
    const idleWall = Number(process.hrtime.bigint() - idleStart) / 1e6;
    const idleRequests = countRequests(proxy.requests.slice(mark));
    const idleReadAfter = (await status())!.lastRead;
    process.stderr.write(
      `idle: ${idleCpu} ms CPU in ${idleWall} ms; latency p50 ${percentile(latencies, 50)} p99 ${percentile(latencies, 99)}\n`,
    );

    // Running containers that do not listen (httpd listens; the others run sleep): their restart is one
    // container's events only, not a socket table change too.
    const quiet = e
      .docker(['ps', '--format', '{{.Names}}\t{{.Command}}'])
      .trim()
      .split('\n')
      .map((l) => l.split('\t'))
      .filter(([, cmd]) => !(cmd ?? '').includes('httpd'))
      .map(([name]) => name!)
      .sort();
    if (quiet.length < 4) throw new Error(`too few running containers that do not listen: ${quiet.join(', ')}`);

    // One container event at a time, each waited out: its reads' requests and CPU.
    const single: {
      cpu: number;
      inspects: number;
      images: number;
      reads: number;
      total: number;
      only: boolean;
    }[] = [];
    for (let i = 0; i < SINGLE_EVENTS; i++) {
      const name = quiet[i % quiet.length]!;
      const id = e.docker(['inspect', '--format', '{{.Id}}', name]).trim();
      await sleep(500);
      mark = proxy.requests.length;
      cpu0 = cpuMs(pid);
      at = new Date().toISOString();
      e.docker(['restart', '-t', '0', name]);
      await settle(`the read after restarting ${name}`, at);
      const c = countRequests(proxy.requests.slice(mark));
      single.push({
        cpu: cpuMs(pid) - cpu0,
        inspects: c.inspects,
        images: c.images,
        reads: c.reads,
        total: c.total,
        only: c.inspected.length === 1 && c.inspected[0] === id,
      });
      process.stderr.write(`event ${i + 1}: ${JSON.stringify(single[single.length - 1])}\n`);
    }

    // Many events, each waited out (pause, unpause, …), RSS sampled along the way.
    await sleep(2000);
    const rssBefore = rssMiB(pid);
    const samples: { events: number; rss: number }[] = [{ events: 0, rss: rssBefore }];
    mark = proxy.requests.length;
    const eventsStart = Date.now();
    let events = 0;
    let stopped = '';
    try {
      for (; events < EVENTS && Date.now() - eventsStart < EVENT_SECONDS * 1000; events++) {
        const name = quiet[Math.floor(events / 2) % quiet.length]!;
        at = new Date().toISOString();
        e.docker([events % 2 === 0 ? 'pause' : 'unpause', name]);
        await until(`the read after event ${events + 1}`, (s) => (s.lastRead ?? '') > at, 60_000, 20);
        if ((events + 1) % 50 === 0) {
          samples.push({ events: events + 1, rss: rssMiB(pid) });
          process.stderr.write(`events: ${events + 1}, RSS ${rssMiB(pid)} MiB\n`);
        }
      }
    } catch (error) {
      // Said with the figures: the RSS is then after the events that did end.
      stopped = `; stopped after ${events} events: ${String(error).slice(0, 300)}`;
    }
    // Leave every container as it was (an odd count leaves one paused).
    if (events % 2 === 1 && !stopped) e.docker(['unpause', quiet[Math.floor((events - 1) / 2) % quiet.length]!]);
    const eventsSeconds = (Date.now() - eventsStart) / 1000;
    const bulk = countRequests(proxy.requests.slice(mark));
    await sleep(5000);
    const rssAfter = rssMiB(pid);
    samples.push({ events, rss: rssAfter });

    const figures: Figure[] = [];
    const p50 = round(percentile(latencies, 50));
    const p99 = round(percentile(latencies, 99));
    figures.push({
      label: `/v1/status latency p50, ${STATUS_REQUESTS} sequential requests on the unix socket (a connection each)`,
      value: p50,
      unit: 'ms',
      notes: `min ${round(Math.min(...latencies))} ms, max ${round(Math.max(...latencies))} ms; RSS ${rssBeforeStatus} → ${rssAfterStatus} MiB over them`,
    });
    figures.push({
      label: `/v1/status latency p99, ${STATUS_REQUESTS} sequential requests`,
      value: p99,
      unit: 'ms',
      target: '≤ 5 ms',
      met: p99 <= 5,
    });
    const idlePercent = round((idleCpu / idleWall) * 100, 3);
    figures.push({
      label: `idle CPU over ${round(idleWall / 1000, 1)} s (utime + stime, % of one core)`,
      value: idlePercent,
      unit: '%',
      target: '≤ 0.5%',
      met: idlePercent <= 0.5,
      notes:
        `${idleCpu} ms of CPU; the listeners' poll every 10 s included; ${idleRequests.total} engine requests ` +
        `meanwhile, reads ${idleReadAfter === idleReadBefore ? 'none' : `ended (lastRead ${idleReadBefore} → ${idleReadAfter})`}`,
    });
    const eventCpu = round(single.reduce((a, s) => a + s.cpu, 0) / single.length, 1);
    const inspects = single.map((s) => s.inspects);
    const totals = single.map((s) => s.total);
    figures.push({
      label: `one container event (docker restart -t 0 of a running container): serve's CPU for the reads it causes, mean of ${SINGLE_EVENTS}`,
      value: eventCpu,
      unit: 'ms',
      reference: { label: 'a whole read (after SIGHUP)', value: round(hupCpu) },
      ratio: round(eventCpu / hupCpu, 3),
      target: '≤ 20 ms',
      met: eventCpu <= 20,
      notes:
        `per event ms: ${single.map((s) => s.cpu).join(', ')} (clock ticks of 10 ms); the first read ` +
        `${firstCpu} ms of CPU in ${firstWallMs} ms from the spawn (Node's start included); ` +
        `reads per event (container lists): ${single.map((s) => s.reads).join(', ')}; the ` +
        `status polls every 100 ms while waiting are counted in`,
    });
    figures.push({
      label: 'one container event: container inspects (median of the events)',
      value: median(inspects),
      unit: 'requests',
      reference: { label: 'a whole read (after SIGHUP)', value: hupRequests.inspects },
      ratio: round(median(inspects) / hupRequests.inspects, 3),
      target: "that container's only",
      met: single.every((s) => s.only),
      notes:
        `per event: ${inspects.join(', ')}; only the restarted container inspected in ${single.filter((s) => s.only).length} ` +
        `of ${single.length}; image inspects ${single.map((s) => s.images).join(', ')} (whole read ${hupRequests.images}); ` +
        `first read ${firstRequests.inspects} container inspects, ${firstRequests.images} image inspects`,
    });
    figures.push({
      label: 'one container event: all engine requests (median of the events, /events aside)',
      value: median(totals),
      unit: 'requests',
      reference: { label: 'a whole read (after SIGHUP)', value: hupRequests.total },
      ratio: round(median(totals) / hupRequests.total, 3),
      notes: `per event: ${totals.join(', ')}; first read ${firstRequests.total} requests`,
    });
    const growth = round(rssAfter - rssBefore, 1);
    figures.push({
      label: `RSS after ${events} container events (pause/unpause, each waited out), MiB`,
      value: rssAfter,
      unit: 'MiB',
      reference: { label: 'before them', value: rssBefore },
      ratio: round(rssAfter / rssBefore, 3),
      target: 'no growth',
      met: growth <= 0,
      notes:
        `${growth >= 0 ? '+' : ''}${growth} MiB; samples (events: MiB) ${samples.map((s) => `${s.events}: ${s.rss}`).join(', ')}; ` +
        `${round(eventsSeconds, 0)} s, ${bulk.reads} reads, ${bulk.inspects} container inspects` +
        (events < EVENTS && !stopped ? `; ${EVENTS} events asked, ${events} fit in ${EVENT_SECONDS} s` : '') +
        stopped,
    });
    const version = e.docker(['version', '--format', '{{.Server.Version}}']).trim();
    report(
      'serve',
      figures,
      `${host.describe()}. serve through a recording proxy of the engine's socket, the listeners polled every 10 s ` +
        `(default), --resync 15 (default); first answer ${first.state}; engine ${version}.`,
    );
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
    if (profileDir) process.stderr.write(`profiles: ${readdirSync(profileDir).join(', ')}\n`);
  } finally {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await proxy.close();
    await host.remove();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
