/**
 * BENCHMARKS.md from benchmark results only (test/bench/run.mjs writes it; test/benchmarks-doc.test.ts
 * checks that it is exactly what these results give). Each section carries its result as a JSON comment
 * (`<!-- bench-result {...} -->`) with the run, date, machine and load average that produced it, so that
 * a run of some benchmarks keeps the others' sections as their own run wrote them.
 */
import type { Figure } from './common.js';

export interface BenchResult {
  name: string;
  figures: Figure[];
  /** What the figures were measured on. */
  fixture?: string;
}

export interface BenchSection {
  /** The benchmark's name: its file under test/bench/ without `.bench.ts`. */
  bench: string;
  file: string;
  seconds: string;
  /** When this benchmark started (ISO). */
  started: string;
  run: { command: string; started: string };
  machine: string;
  /** Load average (1, 5, 15 min) before → after. */
  load: string;
  result: BenchResult | null;
  failure: string | null;
  stderrTail: string;
}

const RESULT_MARK = '<!-- bench-result ';
const RESULT_END = ' -->';

/** The sections a BENCHMARKS.md carries, by benchmark name (a damaged mark is left out). */
export function parseSections(text: string): Map<string, BenchSection> {
  const sections = new Map<string, BenchSection>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(RESULT_MARK) || !line.endsWith(RESULT_END)) continue;
    try {
      const section = JSON.parse(line.slice(RESULT_MARK.length, -RESULT_END.length)) as BenchSection;
      sections.set(section.bench, section);
    } catch {
      // a damaged mark: that section is "not run" until its benchmark runs again
    }
  }
  return sections;
}

function cell(v: unknown): string {
  if (v === undefined || v === null || v === '') return '';
  if (typeof v === 'boolean') return v ? 'yes' : '**no**';
  return String(v).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The whole of BENCHMARKS.md: `benches` in order, each from its section or said not run; then `profiles`. */
export function renderBenchmarks(
  benches: readonly string[],
  sections: ReadonlyMap<string, BenchSection>,
  profiles: string | null,
): string {
  const present = benches.map((b) => sections.get(b)).filter((s): s is BenchSection => s !== undefined);
  const runs = [...new Set(present.map((s) => `${s.run.command}\` (started ${s.run.started})`))];
  const latest = [...present].sort((a, b) => a.run.started.localeCompare(b.run.started)).at(-1);
  const md: string[] = [];
  md.push('# Benchmarks', '');
  md.push(
    'Written by `npm run bench` (test/bench/run.mjs) from the benchmarks of test/bench/, never edited by hand:',
    'rerun it. Each section names the run, date, machine and load average that produced it; its figures are',
    'ratios to a reference measured beside them (interleaved or just before), named in each row.',
    '',
  );
  const notRun = benches.filter((b) => !sections.has(b));
  if (runs.length === 1)
    md.push(
      notRun.length === 0
        ? `- Run: \`${runs[0]!} — every section below comes from this one run.`
        : `- Run: \`${runs[0]!} — every section measured comes from this one run; **not run yet**: ${notRun.join(', ')}.`,
    );
  else if (runs.length > 1)
    md.push(
      `- **Sections from ${runs.length} runs**: ${runs.map((r) => `\`${r}`).join('; ')}; each section says which` +
        (notRun.length > 0 ? `; **not run yet**: ${notRun.join(', ')}.` : '.'),
    );
  if (latest) md.push(`- Machine of the latest run: ${latest.machine}`);
  md.push('');
  md.push('| benchmark | status | figures met | wall time | measured |', '|---|---|---|---|---|');
  for (const bench of benches) {
    const s = sections.get(bench);
    if (!s) {
      md.push(`| ${bench} | **not run** |  |  |  |`);
      continue;
    }
    const targeted = s.result ? s.result.figures.filter((f) => typeof f.met === 'boolean') : [];
    const met = targeted.filter((f) => f.met).length;
    md.push(
      `| ${cell(bench)} | ${s.result ? 'ok' : '**failed**'} | ${s.result ? `${met}/${targeted.length}` : ''} | ${s.seconds} s | ${s.started} |`,
    );
  }
  md.push('');
  for (const bench of benches) {
    const s = sections.get(bench);
    md.push(`## ${bench}`, '');
    if (!s) {
      md.push(`**Not run yet**: no result here; \`node test/bench/run.mjs ${bench}\` writes it.`, '');
      continue;
    }
    md.push(
      `\`${s.file}\`, ${s.seconds} s. Measured ${s.started} by \`${s.run.command}\` (run started ${s.run.started}); ` +
        `load average (1, 5, 15 min) ${s.load}; ${s.machine}.`,
      '',
    );
    // `--` cannot appear inside an HTML comment.
    md.push(`${RESULT_MARK}${JSON.stringify(s).replace(/--/g, '-\\u002d')}${RESULT_END}`, '');
    if (!s.result) {
      md.push(`**Failed**: ${cell(s.failure)}`, '', 'stderr (tail):', '', '```', s.stderrTail || '(empty)', '```', '');
      continue;
    }
    if (s.result.fixture) md.push(`Fixture: ${s.result.fixture}`, '');
    md.push('| figure | value | reference | ratio | target | met |', '|---|---|---|---|---|---|');
    const notes: string[] = [];
    for (const f of s.result.figures) {
      const ref = f.reference ? `${cell(f.reference.value)} ${cell(f.unit)} (${cell(f.reference.label)})` : '';
      md.push(
        `| ${cell(f.label)} | ${cell(f.value)} ${cell(f.unit)} | ${ref} | ${f.ratio !== undefined ? cell(f.ratio) + 'x' : ''} | ${cell(f.target)} | ${cell(f.met)} |`,
      );
      if (f.notes) notes.push(`- ${f.label}: ${f.notes}`);
    }
    md.push('');
    if (notes.length > 0) md.push('Notes:', '', ...notes, '');
  }
  if (profiles !== null) md.push(profiles.trim(), '');
  return md.join('\n');
}
