import { createRequire, Module } from 'node:module';
import { dirname } from 'node:path';
import { EMBEDDED } from '../runtime/embedded.js';

/*
 * dockerode and docker-modem load, when first required, the modules of every feature they have:
 * BuildKit sessions (gRPC and protobufjs), docker-modem's own ssh transport (ssh2), hijacked
 * streams (readable-stream) and build contexts (tar-fs) — two thirds of dockerode's import time
 * (~140 of ~210 ms on an idle 2-CPU machine, `node test/bench/run.mjs startup`). A scan uses none
 * of them: it sends GET requests, and over ssh it dials through the docker CLI's ssh
 * (engine-agent.ts). Each of those modules is put in require's cache as a stand-in that loads the
 * real module on first use and hands everything to it, so dockerode and docker-modem stay whole
 * and unchanged: a feature that is used still gets its real module, only later.
 */

// Written exactly so: the bundler of the single executable follows this form (scripts/package/bundle.ts).
const require = createRequire(import.meta.url);

export interface DeferredModule {
  /** How the module is found: a package path, or a package as its user requires it. */
  request: string;
  from?: string;
  /** What the module exports: a function (or constructor), or an object of functions. */
  exports: 'function' | 'object';
}

/** What a scan never uses, by the module that pulls it in. */
export const DEFERRED: readonly DeferredModule[] = [
  // gRPC, protobufjs: BuildKit sessions of `docker build`.
  { request: 'dockerode/lib/session.js', exports: 'function' },
  // ssh2: docker-modem's own ssh agent, used only for `protocol: 'ssh'`, which is never passed to it.
  { request: 'docker-modem/lib/ssh.js', exports: 'function' },
  // readable-stream: the duplex of hijacked connections (attach, exec with stdin).
  { request: 'docker-modem/lib/http_duplex.js', exports: 'function' },
  // tar-fs: build contexts and archives.
  { request: 'tar-fs', from: 'dockerode/lib/util.js', exports: 'object' },
];

let installed = false;

/** The file a deferred module is loaded from, or undefined when node_modules is laid out otherwise. */
export function deferredFile(m: DeferredModule): string | undefined {
  try {
    return m.from === undefined
      ? require.resolve(m.request)
      : require.resolve(m.request, { paths: [dirname(require.resolve(m.from))] });
  } catch {
    return undefined;
  }
}

/**
 * Puts the stand-ins in require's cache, before dockerode is first loaded. Not in the single
 * executable: there dockerode is part of the one bundled script, and the bundler puts the same
 * stand-ins in the modules' place (scripts/package/bundle.ts).
 */
export function deferUnusedDockerodeModules(): void {
  if (installed || EMBEDDED !== undefined) return;
  installed = true;
  for (const m of DEFERRED) {
    const filename = deferredFile(m);
    // Laid out otherwise, or loaded already: as it comes.
    if (filename === undefined || require.cache[filename] !== undefined) continue;
    let real: unknown;
    const load = (): unknown => {
      if (real === undefined) {
        // The stand-in leaves the cache: the real module is loaded, and cached, as it would have been.
        // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- require's cache is keyed by file name
        delete require.cache[filename];
        real = require(filename);
      }
      return real;
    };
    const standIn = m.exports === 'function' ? deferredFunction(load) : deferredObject(load);
    const cached = new Module(filename);
    cached.filename = filename;
    cached.loaded = true;
    cached.exports = standIn;
    require.cache[filename] = cached;
  }
}

/** A function that loads the real one when called (or constructed) and passes everything on. */
export function deferredFunction(load: () => unknown): unknown {
  type Real = (...args: unknown[]) => unknown;
  return new Proxy(function deferred() {}, {
    apply: (_, thisArg, args: unknown[]): unknown => Reflect.apply(load() as Real, thisArg, args),
    construct: (_, args: unknown[]): object => Reflect.construct(load() as Real, args) as object,
  });
}

/** An object whose every property is the real module's, read when first asked for. */
export function deferredObject(load: () => unknown): unknown {
  return new Proxy({}, { get: (_, key): unknown => Reflect.get(load() as object, key) as unknown });
}
