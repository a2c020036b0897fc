import type { CAC } from 'cac';
import { ExitCode } from '../errors.js';
import { parseChoice } from './choices.js';
import { diffFindings, type BaselineFinding } from '../report/baseline.js';
import { loadReportFile } from '../report/report-file.js';
import type { CommandContext } from './context.js';
import { shortenDigests } from '../report/terminal.js';
import { shown, shownMessage } from '../shown.js';

/**
 * One finding on the terminal, as in the text report: every value from the reports shown (src/shown.ts: controls
 * escaped, long values cut), digests cut to 12 hex digits (the JSON keeps them whole).
 */
const line = (f: BaselineFinding): string =>
  `  ${shown(f.severity).padEnd(7)} ${shown(f.ruleId)} ${shown(f.ruleName)}  ${shown(f.subject.kind)} ` +
  `${shortenDigests(shown(f.subject.id))}  (${shown(f.host)})\n      ${shortenDigests(shownMessage(f.message))}\n`;

export function registerDiff(cli: CAC, ctx: CommandContext): void {
  cli
    .command('diff <old> <new>', 'Compare two JSON reports: new, updated, absent and unchanged findings')
    .option('--format <format>', 'text or json', { default: 'text' })
    .option(
      '--exit-code',
      'Exit 1 when something changed (a finding new, updated or absent), 0 when not, as git diff --exit-code; ' +
        'not-checked findings are no change',
    )
    .example('mesh-audit diff reports/runs/000041-20261128T031500000Z/mesh-audit.json reports/mesh-audit.json')
    .example('mesh-audit diff --exit-code --format json last-night.json mesh-audit.json > changes.json')
    .action(async (oldPath: string, newPath: string, options: { format: string; exitCode?: boolean }) => {
      const format = parseChoice('--format', options.format, ['text', 'json'] as const);
      const [older, newer] = [await loadReportFile(oldPath), await loadReportFile(newPath)];
      const diff = diffFindings(older.findings, newer.findings, newer.coverage);
      if (format === 'json') {
        const fingerprints = (list: BaselineFinding[]) =>
          list.map((f) => ({
            fingerprint: f.fingerprint,
            host: f.host,
            ruleId: f.ruleId,
            ruleName: f.ruleName,
            severity: f.severity,
            subject: f.subject,
            message: f.message,
          }));
        ctx.stdout(
          JSON.stringify(
            {
              from: older.source,
              to: newer.source,
              new: fingerprints(diff.new),
              updated: fingerprints(diff.updated),
              absent: fingerprints(diff.absent),
              notChecked: fingerprints(diff.notChecked),
              unchanged: fingerprints(diff.unchanged),
            },
            null,
            2,
          ) + '\n',
        );
      } else {
        for (const [title, list] of [
          ['New', diff.new],
          ['Updated', diff.updated],
          ['Absent (gone since the old report)', diff.absent],
        ] as const) {
          ctx.stdout(`${title} (${list.length}):\n${list.map(line).join('')}`);
        }
        // Said only when there are any: the new report did not look (rule not run, host not read whole).
        if (diff.notChecked.length > 0)
          ctx.stdout(
            `Not checked in the new report (${diff.notChecked.length}): its rule did not run, or its host was not ` +
              `read whole\n${diff.notChecked.map(line).join('')}`,
          );
        ctx.stdout(`Unchanged: ${diff.unchanged.length}\n`);
      }
      // What a script asks with --exit-code: did the findings change? A finding not checked is not known to.
      const changed = diff.new.length + diff.updated.length + diff.absent.length > 0;
      return options.exitCode === true && changed ? ExitCode.Findings : ExitCode.Ok;
    });
}
