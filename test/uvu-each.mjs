#!/usr/bin/env node
// uvu's own runner (node_modules/uvu/run/index.mjs), with one change: a test file that throws while
// it is imported (a broken harness, an engine that cannot be had in CI) becomes one failed test named
// after the file, and every other file still runs and reports. uvu's runner would stop at the first.
// Usage: node test/uvu-each.mjs DIR PATTERN
import { parse } from 'uvu/parse';

const [dir, pattern] = process.argv.slice(2);
// Every test file that starts a process or makes a folder registers its own clean-up on 'exit', and they
// all run in this one process: more than Node's default 10 is expected here, not a leak.
process.setMaxListeners(100);

// This machine's own sockets listening beyond loopback before any test runs (sshd on 0.0.0.0:22, a web server
// on [::]:80, a sandbox's init whose holder no one can read) would be in every live scan's findings, as they
// should on a real host: the tests judge only what they made, and leave these out of scope as an operator
// would (MESH_AUDIT_EXCLUDE, inherited by every CLI they run; test/support/machine-scope.ts).
const { machineScope } = await import(new URL('../dist/test/support/machine-scope.js', import.meta.url).href);
const foreign = machineScope();
if (foreign.length > 0) {
  process.env.MESH_AUDIT_EXCLUDE = [process.env.MESH_AUDIT_EXCLUDE ?? '', ...foreign].join(' ').trim();
  process.stderr.write(`tests: this machine's own listeners beyond loopback left out of scope: ${foreign.join(' ')}\n`);
}
const { suites } = await parse(dir, pattern, { cwd: process.cwd() });
globalThis.UVU_DEFER = 1;
const uvu = await import('uvu');
let idx = 0;
for (const suite of suites) {
  globalThis.UVU_INDEX = idx++;
  globalThis.UVU_QUEUE.push([suite.name]);
  try {
    await import('file:///' + suite.file);
  } catch (err) {
    const loaded = uvu.suite(`${suite.name} could not be loaded`);
    loaded('imports without throwing', () => {
      throw err;
    });
    loaded.run();
  }
}
await uvu.exec(false);
