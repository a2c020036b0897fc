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
    runs: { results?: { level?: string; ruleId: string; message: { text?: string } }[]; invocations?: { toolExecutionNotifications?: { level?: string; message: { text: string } }[] }[] }[];
  };
  const run = out.runs[0]!;
  const errors = (run.results ?? []).filter((x) => x.level === 'error').map((x) => `${x.ruleId}: ${x.message.text ?? ''}`);
  const notes = (run.invocations ?? []).flatMap((i) => i.toolExecutionNotifications ?? []).filter((n) => n.level === 'error').map((n) => n.message.text);
  return [...errors, ...notes];
}

