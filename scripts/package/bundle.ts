/*
 * The whole program as one CommonJS file for Node's single executable (SEA runs one CommonJS script,
 * whose require() knows only Node's own modules): the compiled code (dist/src) bundled by esbuild,
 * with src/runtime/embedded.ts replaced by the files a package folder would hold and each worker's own bundle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { DEFERRED, deferredFile } from '../../src/collect/docker-deferred.js';
import { RUNTIME_PACKAGE_FILES, RUNTIME_PACKAGE_FOLDERS } from '../../src/paths.js';

export interface BundleInput {
  root: string;
  version: string;
  commit: string;
}

/**
 * Native addons the program loads, carried in the single executable as SEA assets (by asset name, from
 * their compiled file): src/write/embedded-addon.ts loads them at run time; in the bundle, the
 * addon's own `require('….node')` is given what that module loaded (embeddedAddons below).
 */
export const ADDON_ASSETS: Record<string, string> = { 'fs_ext.node': 'node_modules/fs-ext/build/Release/fs_ext.node' };

const WORKERS = {
  hash: 'dist/src/collect/hash-worker.js',
  compose: 'dist/src/collect/compose-worker.js',
  evaluate: 'dist/src/cli/evaluate-worker.js',
} as const;

/** The main program's code, ready for `node --experimental-sea-config`. */
export async function bundleProgram(input: BundleInput): Promise<string> {
  const workers: Record<string, string> = {};
  for (const [name, entry] of Object.entries(WORKERS))
    workers[name] = await bundleOne(input, join(input.root, entry), {});
  const entry = join(input.root, 'dist', 'src', 'cli', 'single-executable.js');
  return bundleOne(input, entry, workers);
}

/** What every bundle of the program is made with: one CommonJS file for Node 20. */
function commonOptions(root: string): BuildOptions {
  return {
    // The alias below is resolved from here: the bundle is the same whatever folder runs the build.
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    keepNames: true, // error classes are told apart by name (cac's CACError)
    legalComments: 'none',
    logLevel: 'warning',
    // jsonc-parser's `main` is a UMD wrapper whose inner require() calls esbuild cannot follow: its
    // ES module build is bundled instead.
    alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  };
}

/** One entry bundled as the single executable's code is (tests bundle their own entries with it). */
export async function bundleOne(input: BundleInput, entry: string, workers: Record<string, string>): Promise<string> {
  const result = await build({
    ...commonOptions(input.root),
    write: false,
    entryPoints: [entry],
    // import.meta does not exist in CommonJS: the module's URL is the program's own path, so that
    // the URLs built from it stay valid (a worker's file, unused when its code is embedded).
    define: { 'import.meta.url': '__meshAuditModuleUrl' },
    banner: { js: 'var __meshAuditModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [
      embeddedFiles(input, workers),
      sameRequire(input.root),
      embeddedAddons(input.root),
      optionalModulesAbsent(),
      deferredModules(input.root),
    ],
  });
  return result.outputFiles[0]!.text;
}

/**
 * The CLI (dist/src/cli/main.js, which exports `main`) as one file for bin/mesh-audit.js from source,
 * to be written at `outFile` (scripts/program.ts). Nothing is embedded: files are read from the package
 * folder, workers started from their compiled files, and each module's import.meta.url is its own
 * compiled file's, so the paths built from it are the ones the compiled modules use. Native addons
 * (fs-ext) stay outside, loaded from node_modules.
 */
export async function bundleForNode(root: string, outFile: string): Promise<string> {
  const result = await build({
    ...commonOptions(root),
    write: false,
    entryPoints: [join(root, 'dist', 'src', 'cli', 'main.js')],
    external: ['fs-ext', 'cpu-features', 'supports-color', '*.node'],
    banner: {
      js: 'var __meshAuditUrlOf = (file) => require("node:url").pathToFileURL(require("node:path").join(__dirname, file)).href;',
    },
    plugins: [ownModuleUrls(root, dirname(outFile)), deferredModules(root)],
  });
  return result.outputFiles[0]!.text;
}

/** The createRequire line of a compiled module, which a bundler cannot follow (see sameRequire). */
const OWN_REQUIRE = /^const require = createRequire\(import\.meta\.url\);$/m;

function withoutOwnRequire(path: string, text: string): string {
  const contents = text.replace(OWN_REQUIRE, '');
  // Any other use would load from disk at run time, relative to the bundle rather than the module.
  if (contents.includes('createRequire('))
    throw new Error(
      `${path}: createRequire used other than as \`const require = createRequire(import.meta.url);\`, which the bundle cannot follow`,
    );
  return contents;
}

/** sameRequire, and each module's import.meta.url made its own compiled file's URL, relative to the bundle's folder. */
function ownModuleUrls(root: string, bundleDir: string): Plugin {
  return {
    name: 'own-module-urls',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(join(root, 'dist', 'src'))) return undefined;
        const contents = withoutOwnRequire(args.path, readFileSync(args.path, 'utf8')).replaceAll(
          'import.meta.url',
          `__meshAuditUrlOf(${JSON.stringify(relative(bundleDir, args.path))})`,
        );
        return { contents, loader: 'js' };
      });
    },
  };
}

/** src/runtime/embedded.ts filled: the package files, the precompiled validators and pack, the workers. */
function embeddedFiles(input: BundleInput, workers: Record<string, string>): Plugin {
  const text = (path: string) => readFileSync(join(input.root, path), 'utf8');
  const packFiles = RUNTIME_PACKAGE_FOLDERS.flatMap((folder) =>
    readdirSync(join(input.root, folder))
      // The rule files and their cases (`rules test` runs the shipped cases from inside the executable too).
      .filter((name) => /\.ya?ml$/.test(name))
      .sort()
      .map((name) => `${folder}/${name}`),
  );
  const files = Object.fromEntries([...RUNTIME_PACKAGE_FILES, ...packFiles].map((p) => [p, text(p)]));
  return {
    name: 'embedded-files',
    setup(b) {
      b.onLoad({ filter: /[\\/]dist[\\/]src[\\/]runtime[\\/]embedded\.js$/ }, () => ({
        resolveDir: join(input.root, 'dist', 'src'),
        loader: 'js',
        contents: [
          `export const EMBEDDED = {`,
          `  version: ${JSON.stringify(input.version)},`,
          `  commit: ${JSON.stringify(input.commit)},`,
          `  files: ${JSON.stringify(files)},`,
          `  validators: require('./generated/validators.cjs'),`,
          `  bundledPack: require('./generated/bundled-pack.json'),`,
          `  workers: ${JSON.stringify(workers)},`,
          `};`,
        ].join('\n'),
      }));
    },
  };
}

/**
 * The modules that load a dependency lazily do it through `createRequire(import.meta.url)`, which a
 * bundler cannot follow: in the bundle they use the bundle's own require, so `yaml` and the others
 * are bundled (and still loaded only when first used).
 */
function sameRequire(root: string): Plugin {
  return {
    name: 'same-require',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(join(root, 'dist', 'src'))) return undefined;
        return { contents: withoutOwnRequire(args.path, readFileSync(args.path, 'utf8')), loader: 'js' };
      });
    },
  };
}

/** A listed addon's `require('….node')` (fs-ext's binding): the exports src/write/embedded-addon.ts loaded from the asset. */
function embeddedAddons(root: string): Plugin {
  const loader = join(root, 'dist', 'src', 'write', 'embedded-addon.js');
  const byFile = new Map(Object.entries(ADDON_ASSETS).map(([asset, file]) => [basename(file), asset]));
  return {
    name: 'embedded-addons',
    setup(b) {
      b.onResolve({ filter: /\.node$/ }, (args) => {
        const asset = byFile.get(basename(args.path));
        return asset === undefined ? undefined : { path: asset, namespace: 'embedded-addon' };
      });
      b.onLoad({ filter: /.*/, namespace: 'embedded-addon' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(loader)}).embeddedAddon(${JSON.stringify(args.path)});`,
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

/**
 * Modules a dependency requires inside a try/catch, with a fallback, that must not be looked for on
 * disk: a single executable's require() knows only Node's own modules, and asking it for another one
 * prints a warning on stderr (which cron mails). Native add-ons cannot be bundled as modules (those of
 * ADDON_ASSETS are carried as assets instead): those dockerode's transport may pull in (ssh2's
 * `sshcrypto.node`, `cpu-features`) are optional.
 * `supports-color` is the optional colour probe of `debug` (docker-modem's logger). Each is bundled
 * as a module that fails to load, as if not installed.
 */
const OPTIONAL_MODULES = /^(cpu-features|supports-color)$|\.node$/;

function optionalModulesAbsent(): Plugin {
  return {
    name: 'optional-modules-absent',
    setup(b) {
      b.onResolve({ filter: OPTIONAL_MODULES }, (args) => ({ path: args.path, namespace: 'absent' }));
      b.onLoad({ filter: /.*/, namespace: 'absent' }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`${args.path}: not part of the single executable`)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * The modules of dockerode's features a scan never uses (src/collect/docker-deferred.ts: gRPC and
 * protobufjs, ssh2, readable-stream, tar-fs): bundled whole, but where dockerode and docker-modem
 * require them they get the same stand-ins as outside the bundle, which run the real module's code
 * on first use. Without them a scan by the single executable ran all of that code at its first
 * connection (~0.1 s on an idle 2-CPU machine).
 */
function deferredModules(root: string): Plugin {
  const kinds = new Map(
    DEFERRED.flatMap((m) => {
      const file = deferredFile(m);
      return file === undefined ? [] : [[file, m.exports] as const];
    }),
  );
  const names = DEFERRED.map((m) =>
    basename(m.request)
      .replace(/\.js$/, '')
      .replace(/[^\w-]/g, '\\$&'),
  );
  const request = new RegExp(`(^|/)(${names.join('|')})(\\.js)?$`);
  const standIns = join(root, 'dist', 'src', 'collect', 'docker-deferred.js');
  const again = Symbol('resolving');
  return {
    name: 'deferred-modules',
    setup(b) {
      b.onResolve({ filter: request }, async (args) => {
        // The stand-in's own require of the real module, and the resolution below: left as they are.
        if (args.namespace === 'deferred' || args.pluginData === again) return undefined;
        const real = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: again,
        });
        return real.errors.length === 0 && kinds.has(real.path)
          ? { path: real.path, namespace: 'deferred' }
          : undefined;
      });
      b.onLoad({ filter: /.*/, namespace: 'deferred' }, (args) => ({
        contents: [
          `const { deferredFunction, deferredObject } = require(${JSON.stringify(standIns)});`,
          `module.exports = ${kinds.get(args.path) === 'function' ? 'deferredFunction' : 'deferredObject'}(() => require(${JSON.stringify(args.path)}));`,
        ].join('\n'),
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}
