import { readFileSync } from 'node:fs';
import { runContainer, type Engine } from '../docker/engine.js';
import { envText, sha256, type LiveHost } from '../docker/live-host.js';

/** A container `runClaimedFromEnvFile` made, and the ledger entries that claim it and its file. */
export interface ClaimedContainer {
  /** The env file it was made from: `<module>/<module>.env` under the host's managed root. */
  envFile: string;
  /** `<module>.server`: the container, its env file as its source. */
  claim: Record<string, unknown>;
  /** `<module>.env`: the env file. */
  declared: Record<string, unknown>;
}

export interface ClaimedOptions {
  /** The env file's variables, written first; none: the file is there already (another container was made from it). */
  env?: Record<string, string>;
  /** `mesh.module`; the resource is `<module>.server` (default `app`). */
  module?: string;
  /** Whether the labels carry the file's digest as it is now (`mesh.source-digests`; default true). */
  digest?: boolean;
  network?: 'none' | 'host';
  /** More `docker run` options (`--init`, `-v`, …). */
  options?: string[];
  command?: string[];
  image?: string;
}

/**
 * A container as the mesh makes one: run from its env file under the host's managed root, with the mesh labels that
 * name its module, its resource, the file as its source and (unless `digest` is false) the file's digest then. The
 * ledger is the caller's to write, with these entries among its others.
 */
export function runClaimedFromEnvFile(
  e: Engine,
  host: LiveHost,
  name: string,
  {
    env,
    module = 'app',
    digest = true,
    network = 'none',
    options = [],
    command = ['sleep', '3600'],
    image,
  }: ClaimedOptions = {},
): ClaimedContainer {
  const envFile = host.path(module, `${module}.env`);
  if (env !== undefined) host.write(envFile, envText(env));
  const labels = [
    '--label',
    `mesh.module=${module}`,
    '--label',
    `mesh.resource=${module}.server`,
    '--label',
    `mesh.sources=${envFile}`,
    ...(digest ? ['--label', `mesh.source-digests=${sha256(readFileSync(envFile, 'utf8'))}`] : []),
  ];
  runContainer(e, name, ['--network', network, '--env-file', envFile, ...labels, ...options], command, image);
  return {
    envFile,
    claim: { id: `${module}.server`, type: 'container', origin: 'declared', target: name, sources: [envFile] },
    declared: { id: `${module}.env`, type: 'file', origin: 'declared', target: envFile },
  };
}
