import { mkdirSync, renameSync, writeFileSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { spawnCli, tempDir, type CliRun } from '../support/cli.js';

/** A host tree for live tests under a private temp folder: composed files, a ledger, an output folder. */
export class LiveHost {
  readonly dir = tempDir('ma-live-', '/tmp');
  readonly out = join(this.dir, 'reports');
  readonly ledgerPath = join(this.dir, 'ledger.json');
  readonly managedRoot = join(this.dir, 'etc', 'mesh');

  path(...parts: string[]): string {
    return join(this.managedRoot, ...parts);
  }

  /** Writes a file in place (keeps the inode). */
  write(path: string, text: string): string {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text, { mode: 0o640 });
    return path;
  }

  /** Replaces a file the way editors and config tools do: a new file renamed over the old one. */
  replaceByRename(path: string, text: string): void {
    const temp = `${path}.new`;
    writeFileSync(temp, text, { mode: 0o640 });
    renameSync(temp, path);
  }

  ledger(entries: Record<string, unknown>[]): void {
    this.replaceByRename(this.ledgerPath, '[\n' + entries.map((e) => '  ' + JSON.stringify(e)).join(',\n') + '\n]\n');
  }

  /** The arguments of `mesh-audit scan` of this host into `out`, its JSON report only (for a scan run another way). */
  scanArgs(dockerHost: string, hostname: string, out: string, extra: string[] = []): string[] {
    return [
      'scan',
      '--docker-host',
      dockerHost,
      '--ledger',
      this.ledgerPath,
      '--managed-root',
      this.managedRoot,
      '--hostname',
      hostname,
      '--out',
      out,
      '--format',
      'json',
      ...extra,
    ];
  }

  scan(
    dockerHost: string,
    hostname: string,
    extra: string[] = [],
    env: NodeJS.ProcessEnv = {},
  ): CliRun & { report: LiveReport } {
    mkdirSync(this.out, { recursive: true, mode: 0o750 });
    const run = spawnCli(this.scanArgs(dockerHost, hostname, this.out, extra), env);
    let report: LiveReport;
    try {
      report = JSON.parse(readFileSync(join(this.out, 'mesh-audit.json'), 'utf8')) as LiveReport;
    } catch {
      throw new Error(`scan wrote no report (exit ${run.code}): ${run.stderr}`);
    }
    return { ...run, report };
  }

  /**
   * `snapshot -o FILE` (with the scanner's memory: `--history` names the scan's output folder), then
   * `evaluate FILE`: what a saved snapshot gives, to compare with the live scan.
   */
  snapshotThenEvaluate(
    dockerHost: string,
    hostname: string,
  ): { snapshot: CliRun; evaluate: CliRun; report: LiveReport } {
    const file = join(this.dir, `saved-${hostname}.json`);
    const snapshot = spawnCli([
      'snapshot',
      '-o',
      file,
      '--docker-host',
      dockerHost,
      '--ledger',
      this.ledgerPath,
      '--managed-root',
      this.managedRoot,
      '--hostname',
      hostname,
      '--history',
      this.out,
    ]);
    const evaluate = spawnCli(['evaluate', file, '--format', 'json', '--out', '-']);
    let report: LiveReport;
    try {
      report = JSON.parse(evaluate.stdout) as LiveReport;
    } catch {
      throw new Error(
        `snapshot (exit ${snapshot.code}: ${snapshot.stderr}) then evaluate (exit ${evaluate.code}: ${evaluate.stderr}) wrote no report`,
      );
    }
    return { snapshot, evaluate, report };
  }
}

/** The fingerprints of a report's findings, sorted: what alerting keys on. */
export const fingerprintsOf = (report: LiveReport): string[] => report.findings.map((f) => f.fingerprint).sort();

export interface LiveFinding {
  ruleId: string;
  ruleName: string;
  severity: string;
  fingerprint: string;
  subject: { kind: string; id: string };
  discriminator: string | null;
  message: string;
  /** Against a baseline: new, unchanged or updated. */
  state?: string;
}
export interface LiveReport {
  summary: { complete: boolean };
  findings: LiveFinding[];
  notifications: { level: string; message: string }[];
}

export const sha256 = (text: string): string => 'sha256:' + createHash('sha256').update(text).digest('hex');
export const envText = (vars: Record<string, string>): string =>
  Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n') + '\n';
