#!/usr/bin/env node
// uvu's own runner (node_modules/uvu/run/index.mjs), with one change: a test file that throws while
// it is imported (a broken harness, an engine that cannot be had in CI) becomes one failed test named
// after the file, and every other file still runs and reports. uvu's runner would stop at the first.
// Usage: node test/uvu-each.mjs DIR PATTERN
import { parse } from 'uvu/parse';

const [dir, pattern] = process.argv.slice(2);
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
