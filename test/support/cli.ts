import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definedCli } from '../../src/cli/commands.js';
import { main, parseArgs } from '../../src/cli/main.js';
import { PACKAGE_ROOT } from '../../src/paths.js';

export const FIXED_NOW = new Date('2026-10-01T00:00:00.000Z');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process with a fixed clock, capturing what it prints. */
export async function runCli(args: string[], now: Date = FIXED_NOW): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(['node', 'mesh-audit', ...args], {
    now: () => now,
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    color: false,
    interactive: false,
  });
  return { code, stdout, stderr };
}

/** Runs the real `bin/mesh-audit.js` as a user would. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): CliRun {
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'), ...args], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const madeDirs: string[] = [];
process.once('exit', () => {
  for (const dir of madeDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Deeper than Node's rmSync can go (a hostile-tree test): rm can.
      spawnSync('rm', ['-rf', dir]);
    }
  }
});

/** A private temp folder (mode 0700), removed when the test process ends. */
export function tempDir(prefix = 'mesh-audit-test-', parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  madeDirs.push(dir);
  return dir;
}
export const example = (...parts: string[]): string => join(PACKAGE_ROOT, 'examples', ...parts);

/**
 * A text summary without its out-of-scope count: the test runner leaves this machine's own listeners beyond
 * loopback out of every live scan (test/uvu-each.mjs), which the summary counts.
 */
export const withoutScopeCount = (text: string): string => text.replace(/(; |, )\d+ out of scope \([^)]*\)/g, '');

/** The environment of a run that reads no system or user config file. */
export const NO_SYSTEM_CONFIG = { MESH_AUDIT_SYSTEM_CONFIG: '/nonexistent/config.yaml', MESH_AUDIT_CONFIG: '' };

/** The options and arguments a command's action gets for this command line, read as `main` reads it. */
export async function readCommandLine(
  args: string[],
): Promise<{ options: Record<string, unknown>; args: readonly string[] }> {
  const cli = await definedCli({
    now: () => new Date(),
    stdout: () => undefined,
    stderr: () => undefined,
    color: false,
    interactive: false,
  });
  parseArgs(cli, ['node', 'mesh-audit', ...args]);
  return { options: cli.options, args: cli.args };
}

/** The option name cac gives a long flag: `--fail-on-new` and `--no-fail-on-new` are `failOnNew`. */
export const optionNameOf = (flag: string): string =>
  flag.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
