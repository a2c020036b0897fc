/*
 * serve benchmark (issue 44): `mesh-audit serve` on the realistic host (test/support/realistic-live.ts: 300
 * containers, 100 running, on a private engine), reaching the engine through the recording proxy
 * (test/support/engine-proxy.ts) so that every request a read makes is counted. In one run:
 * - `/v1/status` latency over 1,000 sequential requests on the unix socket, one connection each as
 *   `mesh-audit status` opens (goal p99 ≤ 5 ms), each followed by the same request to a server with no work behind it
 *   (test/bench/fixed-answer.ts): a tail both have is the machine's at that moment, one only serve has is serve's;
 * - idle CPU over 60 s (utime + stime from /proc/PID/stat, % of one core; goal ≤ 0.5%): the listeners'
 *   poll every 10 s runs in it, the resync (15 min) does not. It starts after QUIET_MS with nothing asked: once
 *   serve stops allocating, V8's memory reducer makes three full collections to give memory back, 35-40 s after
 *   the last work (seen with --trace-gc on the realistic host: ~350 ms of CPU over the main thread and V8's four
 *   worker threads, per thread from /proc/PID/task), the cost of the work before, once, not of being idle; that
 *   quiet stretch's CPU is in the notes;
 * - one container event (`docker restart -t 0` of a running container that does not listen): the engine
 *   requests of the reads it causes (inspects, all) and serve's CPU for them, side by side with a whole
 *   read (the first, and one after SIGHUP) (goal ≤ 20 ms of CPU, that container's inspect only); net of the
 *   /v1/status requests this program polls serve with while it waits (each costs what the latency run's cost each);
 *   the notes also give it net of serve's idle rate (the idle figure's) over each event's wait, since the listeners'
 *   poll falls in about one wait in five and is not the event's. The first 10 events after the whole read are the
 *   headline; the same events go on to 50, and the last 20 are said beside it: what one costs in a serve that has
 *   met many (the first ones also pay for V8's compiling what runs at each, on its compiler threads);
 * - RSS, and the V8 heap in use after full collections, before and after 1,000 events (pause / unpause of running
 *   containers, asked of the engine's API, each waited out), sampled every 100 (goal: no growth), by a second serve
 *   scoped to a part of the host (RSS_SCOPE): at ~1 s of CPU per read of the whole host, 1,000 reads of it do not
 *   fit in a bench. The heap is asked through serve's inspector, opened only then (SIGUSR1, test/bench/common.ts):
 *   RSS alone cannot tell a leak from a collector that has not yet run, the heap after a full GC can. The heap also
 *   holds the machine code V8 makes as it optimizes what runs at each event (bounded, but it grows over the first
 *   several hundred events): a third serve, with V8's compilers off (--no-opt --no-sparkplug), runs 300 of the same
 *   events for the heap of serve's own data alone.
 * CPU here is what the kernel charged the serve process (all its threads), in clock ticks; so an event's
 * figure is the mean over several events. No figure is a test assertion: they are reported, goal or not.
 *
 * Usage: node [--experimental-websocket on Node 20] dist/test/bench/serve.bench.js [events] [eventSeconds] [containers]
 * (defaults 1000 events, at most 900 s of them, the 300-container host). MA_BENCH_PROFILE=DIR runs serve with
 * --cpu-prof into DIR.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { engine } from '../docker/engine.js';
import { tempDir } from '../support/cli.js';
import { engineProxy, unversioned, type ProxiedRequest } from '../support/engine-proxy.js';
import { machineScopeArgs } from '../support/machine-scope.js';
import { startRealisticLiveHost } from '../support/realistic-live.js';
import { getOn } from '../support/serve-child.js';
import { globMatcher } from '../../src/fs/glob.js';
import { BIN, cpuMs, median, openHeapProbe, percentile, report, ROOT, round, rssMiB, type Figure } from './common.js';

const EVENTS = Number(process.argv[2] ?? 1000);
const EVENT_SECONDS = Number(process.argv[3] ?? 900);
/**
 * The part of the host the events' serve reads: the realistic host's names are bench<pid>-h<seed>-…, seeds
 * 27–69, so this is seeds 27–39, about a third of the containers.
 */
const RSS_SCOPE = ['name:*-h2*', 'name:*-h3*'];
/** The host's size (300: the issue's; fewer only to try the bench out). */
const CONTAINERS = Number(process.argv[4] ?? 300);
const STATUS_REQUESTS = 1000;
const IDLE_MS = 60_000;
const QUIET_MS = 90_000;
const SINGLE_EVENTS = 10;
/**
 * The same events go on, unmeasured but for their requests, up to this many in all; the last SETTLED_EVENTS of them
 * are measured again: a resident serve has met many events, and V8 by then has compiled most of what runs at each (the
 * first ones pay more for that, on its compiler threads; some optimizing goes on after: test/bench/PROFILES.md).
 */
const SETTLED_AFTER = 30;
const SETTLED_EVENTS = 20;
/** Events on the serve run with V8's compilers off (its heap without compiled code). */
const INTERPRETED_EVENTS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Status {
  state: string;
  lastRead: string | null;
  lastFullRead: string | null;
}

/**
 * What a stretch of the proxy's record holds: container inspects, image inspects, reads (each pings the engine once; a
 * read after an event asks for no container list while the events are heard), all.
 */
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
    reads: own.filter((r) => unversioned(r.path) === '/_ping').length,
    total: own.length,
  };
}

/** A serve child and the waits on its answers. */
interface Serving {
  child: ChildProcess;
  pid: number;
  stderr(): string;
  status(): Promise<Status | null>;
  /** How many /v1/status requests this program has made of it (the waits below poll it). */
  asked(): number;
  /** Polls /v1/status every `everyMs` until `check` holds (an error naming `what` past `ms`). */
  until(what: string, check: (s: Status) => boolean, ms: number, everyMs?: number): Promise<Status>;
  /** Waits for a read that ended after `after`, then until no read has ended for `quietMs` (an event's reads). */
  settle(what: string, after: string, quietMs?: number, ended?: (s: Status) => string | null): Promise<Status>;
}

/**
 * `node ARGS` (mesh-audit serve answering on `socket`). `--inspect-port=127.0.0.1:0` opens nothing: the inspector
 * listens only once SIGUSR1 asks (openHeapProbe, for the heap figures; the figures before it are measured without).
 */
function spawnServe(socket: string, args: string[]): Serving {
  const child = spawn(process.execPath, ['--inspect-port=127.0.0.1:0', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: process.env,
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-20_000)));
  let asked = 0;
  const status = async (): Promise<Status | null> => {
    asked++;
    const a = await getOn(socket, '/v1/status');
    return a.code === 200 ? (JSON.parse(a.body) as Status) : null;
  };
  const until = async (what: string, check: (s: Status) => boolean, ms: number, everyMs = 50): Promise<Status> => {
    const end = Date.now() + ms;
    for (;;) {
      const s = await status();
      if (s && check(s)) return s;
      if (child.exitCode !== null || Date.now() > end)
        throw new Error(`${what}: not within ${ms} ms (last ${JSON.stringify(s)}); serve's stderr: ${stderr}`);
      await sleep(everyMs);
    }
  };
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
  return { child, pid: child.pid!, stderr: () => stderr, status, asked: () => asked, until, settle };
}

/** test/bench/fixed-answer.ts on a socket of its own, once it answers. */
async function startFixedAnswer(): Promise<{ child: ChildProcess; socket: string }> {
  const socket = join(tempDir('ma-bench-floor-', '/tmp'), 'floor.sock');
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'test', 'bench', 'fixed-answer.js'), socket], {
    stdio: 'ignore',
  });
  for (let tries = 0; (await getOn(socket, '/v1/status')).code !== 200; tries++) {
    if (tries > 100 || child.exitCode !== null) throw new Error('the reference server did not answer');
    await sleep(50);
  }
  return { child, socket };
}

/** Pauses or unpauses a container through the engine's API (the test's own request, not serve's: no proxy). */
function engineAsk(dockerHost: string, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: dockerHost.replace(/^unix:\/\//, ''), path, method: 'POST' }, (res) => {
      res.resume();
      res.on('end', () =>
        (res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`POST ${path}: HTTP ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const e = engine();
  if (!e) throw new Error('no Docker engine: install docker.io and busybox-static');
  const host = await startRealisticLiveHost(e, { containers: CONTAINERS, running: Math.ceil(CONTAINERS / 3) });
  const proxy = await engineProxy(host.dockerHost);
  let child: ChildProcess | undefined;
  try {
    const socket = join(tempDir('ma-bench-serve-', '/tmp'), 'serve.sock');
    const profileDir = process.env['MA_BENCH_PROFILE'];
    // The engine settles after starting 100 containers before serve reads it.
    await sleep(10_000);
    const runServe = (socketPath: string, extra: string[], nodeFlags: string[] = []) =>
      spawnServe(socketPath, [
        ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
        ...nodeFlags,
        BIN,
        'serve',
        '--socket',
        socketPath,
        '--docker-host',
        proxy.dockerHost,
        '--ledger',
        host.ledger,
        '--managed-root',
        host.managedRoot,
        '--hostname',
        host.hostname,
        ...machineScopeArgs(),
        ...extra,
      ]);
    proxy.clearRecord();
    const spawnedAt = Date.now();
    const serve = runServe(socket, []);
    child = serve.child;
    const { pid, status, until, settle, asked } = serve;

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

    const reference = await startFixedAnswer();
    // A whole read asked for by SIGHUP (the config, packs and the whole host read again under a new key).
    let mark = proxy.requests.length;
    let cpu0 = cpuMs(pid);
    let polls0 = asked();
    let at = new Date().toISOString();
    serve.child.kill('SIGHUP');
    const hup = await settle('the whole read after SIGHUP', at, 1000, (x) => x.lastFullRead);
    const hupCpuGross = cpuMs(pid) - cpu0;
    const hupPolls = asked() - polls0;
    const hupRequests = countRequests(proxy.requests.slice(mark));
    process.stderr.write(
      `SIGHUP read: ${hupCpuGross} ms CPU (${hupPolls} status polls), ${JSON.stringify({ ...hupRequests, inspected: hupRequests.inspected.length })}\n`,
    );
    if (hup.lastFullRead === null || hup.lastFullRead <= at)
      throw new Error(`SIGHUP did not make a whole read: ${JSON.stringify(hup)}`);

    // /v1/status latency, sequential, a new connection each; each request followed by the same request to a server
    // with no work behind it (test/bench/fixed-answer.ts), started before the SIGHUP: the machine's floor, moment by
    // moment.
    const latencies: number[] = [];
    const floor: number[] = [];
    const timedGet = async (on: string): Promise<number> => {
      const t = process.hrtime.bigint();
      const a = await getOn(on, '/v1/status');
      if (a.code !== 200) throw new Error(`/v1/status on ${on} answered ${a.code}`);
      return Number(process.hrtime.bigint() - t) / 1e6;
    };
    const rssBeforeStatus = rssMiB(pid);
    const statusCpu0 = cpuMs(pid);
    for (let i = 0; i < STATUS_REQUESTS; i++) {
      latencies.push(await timedGet(socket));
      floor.push(await timedGet(reference.socket));
    }
    // What one status request costs serve: the waits below poll it, and their polls are not the event's reads.
    const statusCpuEach = (cpuMs(pid) - statusCpu0) / STATUS_REQUESTS;
    const netOfPolls = (cpu: number, polls: number) => Math.max(0, cpu - polls * statusCpuEach);
    const hupCpu = netOfPolls(hupCpuGross, hupPolls);
    const rssAfterStatus = rssMiB(pid);
    reference.child.kill('SIGTERM');

    // Idle: nothing asked, nothing changed, for 60 s, once the collector is done with what came before.
    const quietCpu0 = cpuMs(pid);
    await sleep(QUIET_MS);
    const quietCpu = cpuMs(pid) - quietCpu0;
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
      gross: number;
      polls: number;
      wallMs: number;
      inspects: number;
      images: number;
      reads: number;
      total: number;
      only: boolean;
    }[] = [];
    const settled: typeof single = [];
    /** Of the events after the first SINGLE_EVENTS: how many, and in how many only the restarted container was inspected. */
    const later = { events: 0, only: 0 };
    for (let i = 0; i < SETTLED_AFTER + SETTLED_EVENTS; i++) {
      const name = quiet[i % quiet.length]!;
      const id = e.docker(['inspect', '--format', '{{.Id}}', name]).trim();
      await sleep(500);
      mark = proxy.requests.length;
      cpu0 = cpuMs(pid);
      polls0 = asked();
      at = new Date().toISOString();
      const eventStart = process.hrtime.bigint();
      e.docker(['restart', '-t', '0', name]);
      await settle(`the read after restarting ${name}`, at);
      const c = countRequests(proxy.requests.slice(mark));
      const gross = cpuMs(pid) - cpu0;
      const wallMs = Number(process.hrtime.bigint() - eventStart) / 1e6;
      const polls = asked() - polls0;
      const only = c.inspected.length === 1 && c.inspected[0] === id;
      if (i >= SINGLE_EVENTS) [later.events, later.only] = [later.events + 1, later.only + (only ? 1 : 0)];
      const into = i < SINGLE_EVENTS ? single : i >= SETTLED_AFTER ? settled : null;
      if (into === null) continue;
      into.push({
        cpu: round(netOfPolls(gross, polls), 1),
        gross,
        polls,
        wallMs: round(wallMs),
        inspects: c.inspects,
        images: c.images,
        reads: c.reads,
        total: c.total,
        only,
      });
      process.stderr.write(`event ${i + 1}: ${JSON.stringify(into[into.length - 1])}\n`);
    }

    // The whole host's serve is done: the events below are a serve of their own, on a part of the host.
    serve.child.kill('SIGTERM');
    await new Promise((r) => serve.child.once('exit', r));

    // RSS and the heap over EVENTS events (pause, unpause, each waited out), by a serve scoped to a part of the host
    // (--include RSS_SCOPE): a read of the whole host costs ~1 s of CPU here (the event figure above), so 1,000
    // of them would not fit in the bench's time. What a read keeps for the next (src/collect/read-cache.ts) is kept
    // the same way for each container in scope; the rest is listed at each read, not read.
    const inPart = quiet.filter((name) =>
      RSS_SCOPE.some((selector) => globMatcher(selector.slice('name:'.length))(name)),
    );
    if (inPart.length < 2) throw new Error(`too few running containers that do not listen in ${RSS_SCOPE.join(', ')}`);
    /** `count` events on the part's serve (run with `nodeFlags`), sampled every 100: RSS, and the heap after full GC. */
    const churn = async (count: number, nodeFlags: string[] = []) => {
      const partSocket = join(tempDir('ma-bench-serve-', '/tmp'), 'serve.sock');
      const part = runServe(
        partSocket,
        RSS_SCOPE.flatMap((selector) => ['--include', selector]),
        nodeFlags,
      );
      child = part.child;
      await part.until('the first read of the part', (s) => s.lastRead !== null, 300_000, 100);
      await sleep(3000);
      const heap = await openHeapProbe(part.child, () => part.stderr());
      /** RSS as it is, then the heap in use after full collections (which may give pages back: RSS after them too). */
      const sample = async (events: number) => {
        const rss = rssMiB(part.pid);
        const heapMiB = await heap.usedAfterGc();
        return { events, rss, heap: heapMiB, rssAfterGc: rssMiB(part.pid) };
      };
      const samples = [await sample(0)];
      const from = proxy.requests.length;
      const eventsStart = Date.now();
      let events = 0;
      let stopped = '';
      try {
        for (; events < count && Date.now() - eventsStart < EVENT_SECONDS * 1000; events++) {
          const name = inPart[Math.floor(events / 2) % inPart.length]!;
          const asked = new Date().toISOString();
          await engineAsk(host.dockerHost, `/containers/${name}/${events % 2 === 0 ? 'pause' : 'unpause'}`);
          await part.until(`the read after event ${events + 1}`, (s) => (s.lastRead ?? '') > asked, 60_000, 20);
          if ((events + 1) % 100 === 0 && events + 1 < count) {
            samples.push(await sample(events + 1));
            process.stderr.write(`events: ${JSON.stringify(samples[samples.length - 1])}\n`);
          }
        }
      } catch (error) {
        // Said with the figures: the RSS is then after the events that did end.
        stopped = `; stopped after ${events} events: ${String(error).slice(0, 300)}`;
      }
      // Leave every container as it was (an odd count leaves one paused).
      if (events % 2 === 1 && !stopped)
        await engineAsk(
          host.dockerHost,
          `/containers/${inPart[Math.floor((events - 1) / 2) % inPart.length]!}/unpause`,
        );
      const eventsSeconds = (Date.now() - eventsStart) / 1000;
      const bulk = countRequests(proxy.requests.slice(from));
      await sleep(5000);
      // The last sample after the events' reads are over, as the first was before them: RSS as it is, then the GC.
      samples.push(await sample(events));
      heap.close();
      part.child.kill('SIGTERM');
      await new Promise((r) => part.child.once('exit', r));
      return { samples, events, eventsSeconds, bulk, stopped };
    };
    const churned = await churn(EVENTS);
    const { samples, events, eventsSeconds, bulk, stopped } = churned;
    // The same with V8's compilers off: what the heap holds of serve's own data, without the machine code V8 makes of
    // the functions that run at each event as it optimizes them (~1.5 MiB over the first several hundred events,
    // bounded: no code is made at run time). Fewer events: the interpreter alone is slower.
    const interpreted = await churn(Math.min(EVENTS, INTERPRETED_EVENTS), ['--no-opt', '--no-sparkplug']);
    const rssAfter = samples[samples.length - 1]!.rss;
    const rssBefore = samples[0]!.rss;
    const heapBefore = samples[0]!.heap;
    const heapAfter = samples[samples.length - 1]!.heap;

    const figures: Figure[] = [];
    const p50 = round(percentile(latencies, 50));
    const p99 = round(percentile(latencies, 99));
    figures.push({
      label: `/v1/status latency p50, ${STATUS_REQUESTS} sequential requests on the unix socket (a connection each)`,
      value: p50,
      unit: 'ms',
      reference: { label: 'a server with no work behind it, interleaved', value: round(percentile(floor, 50)) },
      ratio: round(percentile(latencies, 50) / percentile(floor, 50), 2),
      notes:
        `min ${round(Math.min(...latencies))} ms, max ${round(Math.max(...latencies))} ms; RSS ${rssBeforeStatus} → ` +
        `${rssAfterStatus} MiB over them; each request followed by the same to test/bench/fixed-answer.ts (a fixed ` +
        `body, nothing else to do: the machine's floor at that moment): its min ${round(Math.min(...floor))} ms, ` +
        `max ${round(Math.max(...floor))} ms`,
    });
    const floorP99 = round(percentile(floor, 99));
    figures.push({
      label: `/v1/status latency p99, ${STATUS_REQUESTS} sequential requests`,
      value: p99,
      unit: 'ms',
      reference: { label: 'a server with no work behind it, interleaved', value: floorP99 },
      ratio: round(percentile(latencies, 99) / percentile(floor, 99), 2),
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
        `${idleCpu} ms of CPU; the listeners' poll every 10 s included; measured after ${QUIET_MS / 1000} s with ` +
        `nothing asked, in which serve took ${quietCpu} ms (V8's memory reducer giving back the memory of the work ` +
        `before, ${QUIET_MS / 10_000} polls); ${idleRequests.total} engine requests ` +
        `meanwhile, reads ${idleReadAfter === idleReadBefore ? 'none' : `ended (lastRead ${idleReadBefore} → ${idleReadAfter})`}`,
    });
    const eventCpu = round(single.reduce((a, s) => a + s.cpu, 0) / single.length, 1);
    // What serve spends with nothing to do (the listeners' poll, mostly) over as long as each event was waited for:
    // part of what was charged during an event, not caused by it.
    const idleRate = idleCpu / idleWall;
    const netOfIdle = single.map((s) => round(Math.max(0, s.cpu - idleRate * s.wallMs), 1));
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
        `per event ms, net of this program's /v1/status polls while it waits: ${single.map((s) => s.cpu).join(', ')}; ` +
        `as charged (clock ticks of 10 ms): ${single.map((s) => s.gross).join(', ')}, with ` +
        `${single.map((s) => s.polls).join(', ')} polls at ${round(statusCpuEach, 2)} ms each (the CPU of the ` +
        `${STATUS_REQUESTS} status requests above, each); the whole read ${hupCpuGross} ms as charged, ${hupPolls} ` +
        `polls; the first read ${firstCpu} ms of CPU in ${firstWallMs} ms from the spawn (Node's start included); ` +
        `reads per event (engine pings): ${single.map((s) => s.reads).join(', ')}; each event waited for ` +
        `${single.map((s) => s.wallMs).join(', ')} ms (restart to settled): net also of serve's idle rate over that ` +
        `time (${round(idleRate * 1000, 2)} ms per s, the idle figure's), ${netOfIdle.join(', ')}, mean ` +
        `${round(netOfIdle.reduce((a, b) => a + b, 0) / netOfIdle.length, 1)} ms`,
    });
    const settledCpu = round(settled.reduce((a, s) => a + s.cpu, 0) / settled.length, 1);
    const settledNetOfIdle = settled.map((s) => round(Math.max(0, s.cpu - idleRate * s.wallMs), 1));
    figures.push({
      label: `the same event after ${SETTLED_AFTER} of them (a serve that has met many): serve's CPU, mean of ${SETTLED_EVENTS}`,
      value: settledCpu,
      unit: 'ms',
      reference: { label: `the first ${SINGLE_EVENTS} events (above)`, value: eventCpu },
      ratio: round(settledCpu / eventCpu, 2),
      target: '≤ 20 ms',
      met: settledCpu <= 20,
      notes:
        `events ${SETTLED_AFTER + 1}–${SETTLED_AFTER + SETTLED_EVENTS} of the same restarts, each waited out as above; per ` +
        `event ms, net of the /v1/status polls: ${settled.map((s) => s.cpu).join(', ')}; as charged: ` +
        `${settled.map((s) => s.gross).join(', ')}; net also of serve's idle rate over each event's wait: ` +
        `${settledNetOfIdle.join(', ')}, mean ${round(settledNetOfIdle.reduce((a, b) => a + b, 0) / settledNetOfIdle.length, 1)} ms`,
    });
    figures.push({
      label: 'one container event: container inspects (median of the events)',
      value: median(inspects),
      unit: 'requests',
      reference: { label: 'a whole read (after SIGHUP)', value: hupRequests.inspects },
      ratio: round(median(inspects) / hupRequests.inspects, 3),
      target: "that container's only",
      met: single.every((s) => s.only) && later.only === later.events,
      notes:
        `per event: ${inspects.join(', ')}; only the restarted container inspected in ${single.filter((s) => s.only).length} ` +
        `of ${single.length} (and in ${later.only} of the ${later.events} events after them); image inspects ${single.map((s) => s.images).join(', ')} (whole read ${hupRequests.images}); ` +
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
    const said = (x: number) => `${x >= 0 ? '+' : ''}${round(x, 2)}`;
    const partOf = `serve ${RSS_SCOPE.map((x) => `--include '${x}'`).join(' ')} (a part of the host: ${inPart.length} running containers to pause in it)`;
    const sampledText = (list: typeof samples) =>
      list.map((x) => `${x.events}: ${x.rss} / ${x.heap} / ${x.rssAfterGc}`).join(', ');
    const sampled = sampledText(samples);
    figures.push({
      label: `RSS after ${events} container events (pause/unpause, each waited out), ${partOf}, MiB`,
      value: rssAfter,
      unit: 'MiB',
      reference: { label: 'before them', value: rssBefore },
      ratio: round(rssAfter / rssBefore, 3),
      target: 'no growth',
      met: growth <= 0,
      notes:
        `${said(growth)} MiB; samples (events: RSS / heap in use after full GC / RSS after that GC, MiB) ${sampled}; ` +
        `${round(eventsSeconds, 0)} s, ${bulk.reads} reads, ${bulk.inspects} container inspects; ` +
        `the events asked of the engine's API by this program` +
        (events < EVENTS && !stopped ? `; ${EVENTS} events asked, ${events} fit in ${EVENT_SECONDS} s` : '') +
        stopped,
    });
    figures.push({
      label: `V8 heap in use after full GC (inspector: HeapProfiler.collectGarbage), after the same ${events} events, MiB`,
      value: heapAfter,
      unit: 'MiB',
      reference: { label: 'before them', value: heapBefore },
      ratio: round(heapAfter / heapBefore, 3),
      target: 'no growth',
      met: heapAfter - heapBefore <= 0,
      notes:
        `${said(heapAfter - heapBefore)} MiB; what the process holds, without what the collector has not yet freed, ` +
        "V8's machine code for the functions it optimizes included (the next figure is without it)",
    });
    const iSamples = interpreted.samples;
    const iBefore = iSamples[0]!.heap;
    const iAfter = iSamples[iSamples.length - 1]!.heap;
    figures.push({
      label:
        `V8 heap in use after full GC, V8's compilers off (node --no-opt --no-sparkplug), after ` +
        `${interpreted.events} events, the same part of the host, MiB`,
      value: iAfter,
      unit: 'MiB',
      reference: { label: 'before them', value: iBefore },
      ratio: round(iAfter / iBefore, 3),
      target: 'no growth',
      met: iAfter - iBefore <= 0,
      notes:
        `${said(iAfter - iBefore)} MiB; samples (events: RSS / heap in use after full GC / RSS after that GC, MiB) ` +
        `${sampledText(iSamples)}; ` +
        `${round(interpreted.eventsSeconds, 0)} s, ${interpreted.bulk.reads} reads; serve's own data: what a leak ` +
        'would grow, without the compiled code the figure above includes' +
        interpreted.stopped,
    });
    const version = e.docker(['version', '--format', '{{.Server.Version}}']).trim();
    report(
      'serve',
      figures,
      `${host.describe()}. serve through a recording proxy of the engine's socket, the listeners polled every 10 s ` +
        `(default), --resync 15 (default); first answer ${first.state}; engine ${version}.`,
    );
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
