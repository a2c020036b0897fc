/*
 * The single executable's entry point (scripts/package/bundle.ts bundles from here): the same CLI as
 * bin/mesh-audit.js, started without top-level await (the bundle is CommonJS).
 */
import { main } from './main.js';

void main(process.argv).then((code) => {
  process.exitCode = code;
});
