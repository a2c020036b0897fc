/**
 * Loaded with `node --import` into a command a benchmark runs: writes the process's peak resident set
 * (KB, from getrusage) to the file named by MA_RSS_PROBE when it exits. Nothing else.
 */
import { writeFileSync } from 'node:fs';

const out = process.env['MA_RSS_PROBE'];
if (out) process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
