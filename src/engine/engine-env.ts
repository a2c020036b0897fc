import type { EngineKind } from '../snapshot/types.js';

/**
 * The env keys an engine writes into a container's `Config.Env` by itself, whatever its image and the
 * files it was created from say. That a container holds one of these and its image does not set it is
 * no evidence that a composed file gave it (MA1004); an earlier snapshot of the file naming it still is,
 * and so is an image that sets another value (an engine never overrides the image's own value).
 *
 * Measured live, not assumed: test/docker/engine-env.test.ts creates and starts a container with no env
 * from an image with no env on each engine, and checks `added` against what the engine wrote.
 * - Docker writes nothing into `Config.Env`: the PATH, HOSTNAME and HOME its processes see are given
 *   at start, outside the container's config.
 * - Podman (4.3 measured) writes its default `PATH` (when the image sets none), `TERM=xterm` and
 *   `container=podman` at create, and `HOME` and `HOSTNAME` when the container starts. Its
 *   `http_proxy` setting (on by default, containers.conf) also passes the proxy variables of its own
 *   environment into a container made through its own API (the podman command), though not into one
 *   made through the Docker-compatible API (`fromEngineEnvironment`, measured on a second Podman
 *   service started with them set).
 */
export interface EngineAddedEnv {
  /** Written into every container (that its image or its create options do not already set). */
  added: readonly string[];
  /** Written only when the engine's own process has them set. */
  fromEngineEnvironment: readonly string[];
}

const PROXY_KEYS = [
  'http_proxy',
  'https_proxy',
  'ftp_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'FTP_PROXY',
  'NO_PROXY',
];

export const ENGINE_ADDED_ENV: Readonly<Record<Exclude<EngineKind, 'unknown'>, EngineAddedEnv>> = {
  docker: { added: [], fromEngineEnvironment: [] },
  podman: { added: ['PATH', 'TERM', 'container', 'HOME', 'HOSTNAME'], fromEngineEnvironment: PROXY_KEYS },
};

/**
 * The keys the engine of `kind` may have added. An engine of unknown kind (one naming neither Docker nor
 * Podman, or a snapshot made before the kind was recorded) may be either: every key any known engine
 * adds, so that not knowing the engine never makes a finding (a dropped key of this list is then
 * reported only with history).
 */
export function engineAddedKeys(kind: EngineKind | undefined): ReadonlySet<string> {
  const engines = kind === 'docker' || kind === 'podman' ? [ENGINE_ADDED_ENV[kind]] : Object.values(ENGINE_ADDED_ENV);
  return new Set(engines.flatMap((e) => [...e.added, ...e.fromEngineEnvironment]));
}
