/*
 * The single executable's entry point (scripts/package/bundle.ts bundles from here): the same CLI as
 * bin/mesh-audit.js, started without top-level await (the bundle is CommonJS).
 */
import { installSignalHandlers, main } from './main.js';

// As bin/mesh-audit.js: SIGTERM (systemd stopping the nightly unit) or SIGINT removes what the run
// had half-written, says so, and exits 143 or 130.
installSignalHandlers();
void main(process.argv).then((code) => {
  process.exitCode = code;
});
