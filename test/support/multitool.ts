import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { tempDir } from './cli.js';

const MULTITOOL = join(PACKAGE_ROOT, 'node_modules', '.bin', 'sarif-multitool');

/** Microsoft's SARIF Multitool: schema and SARIF1xxx/2xxx rules. Returns its error-level results. */
export function multitoolErrors(sarifFile: string): string[] {
  const log = join(tempDir(), 'validation.sarif');
  const r = spawnSync(MULTITOOL, ['validate', sarifFile, '-o', log], { encoding: 'utf8', timeout: 120_000 });
  assert.is(r.status, 0, `multitool failed to run: ${r.stdout}${r.stderr}`);
  const out = JSON.parse(readFileSync(log, 'utf8')) as {
    runs: {
      results?: { level?: string; ruleId: string; message: { text?: string } }[];
      invocations?: { toolExecutionNotifications?: { level?: string; message: { text: string } }[] }[];
    }[];
  };
  const run = out.runs[0]!;
  const errors = (run.results ?? [])
    .filter((x) => x.level === 'error')
    .map((x) => `${x.ruleId}: ${x.message.text ?? ''}`);
  const notes = (run.invocations ?? [])
    .flatMap((i) => i.toolExecutionNotifications ?? [])
    .filter((n) => n.level === 'error')
    .map((n) => n.message.text);
  return [...errors, ...notes];
}

/** GitHub's ingestion rules for the Multitool (see test/fixtures/sarif/README.md): GH1002–GH1007, and GH1001 alone. */
const GHAS_CONFIGS = ['sarif-multitool-github-rules.xml', 'sarif-multitool-github-gh1001.xml'].map((f) =>
  join(PACKAGE_ROOT, 'test', 'fixtures', 'sarif', f),
);
const MULTITOOL_NATIVE = join(PACKAGE_ROOT, 'node_modules', '@microsoft', 'sarif-multitool-linux', 'Sarif.Multitool');

/**
 * The Multitool with `--rule-kind Ghas` and GitHub's rules switched on, once per configuration: its
 * error-level results, its error notifications (a rule that crashed, ERR999), and a failed exit.
 * The native binary is called directly (the npm wrapper goes through a shell); many files are one call.
 */
export function multitoolGhasErrors(...sarifFiles: string[]): string[] {
  const problems: string[] = [];
  for (const config of GHAS_CONFIGS) {
    const log = join(tempDir(), 'validation.sarif');
    const r = spawnSync(
      MULTITOOL_NATIVE,
      ['validate', ...sarifFiles, '-o', log, '--log', 'ForceOverwrite', '--rule-kind', 'Ghas', '-c', config],
      {
        encoding: 'utf8',
        timeout: 300_000,
      },
    );
    if (r.status !== 0)
      problems.push(`${config}: exit ${r.status}: ${(r.stdout + r.stderr).trim().split('\n').slice(-5).join(' | ')}`);
    const out = JSON.parse(readFileSync(log, 'utf8')) as {
      runs: {
        results?: { level?: string; ruleId: string; message: { text?: string } }[];
        invocations?: { toolExecutionNotifications?: { level?: string; message: { text: string } }[] }[];
      }[];
    };
    for (const run of out.runs) {
      problems.push(
        ...(run.results ?? []).filter((x) => x.level === 'error').map((x) => `${x.ruleId}: ${x.message.text ?? ''}`),
      );
      problems.push(
        ...(run.invocations ?? [])
          .flatMap((i) => i.toolExecutionNotifications ?? [])
          .filter((n) => n.level === 'error')
          .map((n) => n.message.text.split('\n')[0]!),
      );
    }
  }
  return problems;
}
