import { compareText } from '../text/compare.js';
import type { SafeValueMaker } from '../secret/value.js';
import type { DaemonInfo, ImageRecord } from '../snapshot/types.js';
import type { EngineVersion, ImageSummary } from './docker-api.js';
import { envFromList, hasHealthcheck, type ImageInspect } from './inspect.js';
import { normalImageId } from '../snapshot/image-id.js';

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** An image in use as the snapshot holds it: labels, env and the healthcheck's command secret-safe. */
export function imageRecordOf(inspect: ImageInspect, safe: SafeValueMaker): ImageRecord {
  const config = inspect.Config ?? {};
  const check = config.Healthcheck;
  return {
    id: normalImageId(inspect.Id),
    tags: (inspect.RepoTags ?? []).filter((t) => t !== '<none>:<none>').sort(compareText),
    digests: (inspect.RepoDigests ?? []).filter((d) => !d.startsWith('<none>')).sort(compareText),
    created: text(inspect.Created),
    labels: Object.fromEntries(
      Object.entries(config.Labels ?? {})
        .sort(([a], [b]) => compareText(a, b))
        .map(([key, value]) => [key, safe(String(value))]),
    ),
    env: envFromList(config.Env, safe),
    user: text(config.User),
    healthcheck: hasHealthcheck(check)
      ? {
          test: (check?.Test ?? []).map((part) => safe(String(part))),
          interval: count(check?.Interval),
          timeout: count(check?.Timeout),
          retries: count(check?.Retries),
          startPeriod: count(check?.StartPeriod),
        }
      : null,
  };
}

/** Every tag the engine lists, to the id of the image it names now. */
export function tagsOf(list: readonly ImageSummary[]): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const image of list) {
    for (const tag of image.RepoTags ?? []) {
      if (typeof tag === 'string' && tag !== '<none>:<none>') tags[tag] = normalImageId(image.Id);
    }
  }
  return Object.fromEntries(Object.entries(tags).sort(([a], [b]) => compareText(a, b)));
}

/** `GET /info`, with `/version`'s answer: what a hardening rule reads of the daemon. */
export function daemonInfoOf(info: Record<string, unknown>, version: EngineVersion): DaemonInfo {
  const swarm = info['Swarm'];
  const strings = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
  return {
    serverVersion: text(info['ServerVersion']) || version.Version,
    apiVersion: version.ApiVersion,
    os: text(info['OperatingSystem']) || text(version.Os),
    kernelVersion: text(info['KernelVersion']) || text(version.KernelVersion),
    securityOptions: strings(info['SecurityOptions']),
    loggingDriver: text(info['LoggingDriver']),
    cgroupDriver: text(info['CgroupDriver']),
    cgroupVersion: text(info['CgroupVersion']),
    storageDriver: text(info['Driver']),
    liveRestore: info['LiveRestoreEnabled'] === true,
    swarmState:
      typeof swarm === 'object' && swarm !== null ? text((swarm as Record<string, unknown>)['LocalNodeState']) : '',
    experimental: info['ExperimentalBuild'] === true,
  };
}
