import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { packageFile } from '../src/paths.js';
import { parseSections, renderBenchmarks } from './bench/render.js';

/*
 * BENCHMARKS.md is written by `npm run bench` and never by hand (issue 27). Nothing here times anything:
 * the figures are whatever the run measured; these tests check where they come from.
 */
const benches = readdirSync(packageFile('test', 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace(/\.bench\.ts$/, ''))
  .sort();
const text = readFileSync(packageFile('BENCHMARKS.md'), 'utf8');
const profiles = packageFile('test', 'bench', 'PROFILES.md');

test('BENCHMARKS.md has one section per benchmark of test/bench/, in order, and no other (fix: npm run bench)', () => {
  assert.ok(benches.length > 0);
  const headed = [...text.split('# What the profiles said')[0]!.matchAll(/^## (\S+)$/gm)].map((m) => m[1]);
  assert.equal(headed, benches);
  // A measured section is one of these benchmarks (one not run yet is said so in its section and the table).
  for (const bench of parseSections(text).keys()) assert.ok(benches.includes(bench), bench);
});

test('BENCHMARKS.md is exactly what its runs produced: its results rendered again give the same file', () => {
  const sections = parseSections(text);
  assert.fixture(
    text,
    renderBenchmarks(benches, sections, existsSync(profiles) ? readFileSync(profiles, 'utf8') : null),
    'BENCHMARKS.md differs from its own results (edited by hand, or PROFILES.md changed since): rerun npm run bench ' +
      '(or, after PROFILES.md alone changed, node test/bench/run.mjs --render)',
  );
});

test('each section names the run, the date, the machine and the reference of every ratio', () => {
  for (const s of parseSections(text).values()) {
    assert.ok(s.run.command.length > 0 && !Number.isNaN(Date.parse(s.started)), s.bench);
    assert.match(s.machine, /CPUs/, s.bench);
    for (const f of s.result?.figures ?? [])
      if (f.ratio !== undefined) assert.ok(f.reference && f.reference.label.length > 0, `${s.bench}: ${f.label}`);
  }
});

test('each measured section says what it was measured on (its fixture)', () => {
  for (const s of parseSections(text).values())
    if (s.result) assert.ok((s.result.fixture ?? '').length > 40, `${s.bench}: no fixture line`);
});

test('a section is kept as its run wrote it when another benchmark runs alone', () => {
  const sections = parseSections(text);
  const [first] = sections.values();
  assert.ok(first, 'at least one measured section');
  const again = parseSections(renderBenchmarks(benches, new Map([[first.bench, first]]), null));
  assert.equal(again.get(first.bench), first);
  const others = renderBenchmarks(benches, new Map([[first.bench, first]]), null);
  for (const b of benches.filter((b) => b !== first.bench)) assert.match(others, `| ${b} | **not run** |`);
});

test.run();
