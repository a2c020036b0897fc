import type { CAC } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { loadCases, runCases } from '../evaluate/cases.js';
import { formatWarning, lintPack } from '../policy/lint.js';
import { loadPolicies } from '../policy/load.js';
import { ruleCatalogue, subjectCatalogue } from '../report/catalogue.js';
import { helpUriOf } from '../report/rule-docs.js';
import type { LoadedRule } from '../policy/types.js';
import type { CommandContext } from './context.js';
import {
  addPolicyOptions,
  CONFIG_HELP,
  POLICY_HELP,
  policyChoiceOf,
  settingsOf,
  type SettingFlags,
} from './settings.js';
import { didYouMean, parseChoice } from './choices.js';

function showRule(rule: LoadedRule): string {
  const expr = (v: unknown) => JSON.stringify(v);
  const lines = [
    `${rule.id}  ${rule.name}`,
    `  ${rule.title}`,
    '',
    `  severity:  ${rule.severity}` +
      (rule.escalate ? ` (raised: ${rule.escalate.map((e) => `${e.severity} when ${expr(e.when)}`).join('; ')})` : ''),
    `  subject:   ${rule.subject}`,
    `  profiles:  ${rule.profiles.join(', ')}`,
    `  tags:      ${rule.tags.join(', ')}`,
    `  source:    ${rule.source.file}:${rule.source.line}`,
    ...(rule.where !== undefined ? [`  where:     ${expr(rule.where)}`] : []),
    ...(rule.each !== undefined ? [`  each:      ${expr(rule.each)}`] : []),
    `  assert:    ${expr(rule.assert)}`,
    `  message:   ${rule.message}`,
    '',
    ...rule.help
      .trimEnd()
      .split('\n')
      .map((l) => `  ${l}`),
    '',
    ...`Remediation: ${rule.remediation.trim()}`.split('\n').map((l) => `  ${l}`),
  ];
  return lines.join('\n') + '\n';
}

export function registerRules(cli: CAC, ctx: CommandContext): void {
  addPolicyOptions(
    cli.command('rules <action> [rule]', 'Rules of the policy packs: list | show RULE | test | lint | docs'),
    `${POLICY_HELP}. list, show, docs: every rule a scan runs; test, lint: only the packs added (the shipped one ` +
      `when none is)`,
  )
    .option('--config <file>', CONFIG_HELP)
    .option(
      '--profile <name>',
      'Only rules of this profile (list, show, docs, test): nightly, premigration, all, or hardening (the shipped ' +
        'CIS Docker pack, loaded for it alone)',
    )
    .example('mesh-audit rules list')
    .example('mesh-audit rules list --profile hardening')
    .example('mesh-audit rules show no-unclaimed-container')
    .example('mesh-audit rules test')
    .example('mesh-audit rules test --policy my-pack.yaml')
    .example('mesh-audit rules lint --policy my-pack.yaml')
    .action(async (action: string, ruleRef: string | undefined, options: SettingFlags) => {
      // Only `show` takes a rule; a pack given as a word (`rules lint my-pack.yaml`) would otherwise be
      // ignored and the shipped pack checked in its place.
      if (ruleRef !== undefined && action !== 'show') {
        throw new MeshAuditError(
          `rules ${action} takes no argument ('${ruleRef}'); a pack is named with --policy, e.g. \`mesh-audit rules ` +
            `${action} --policy ${ruleRef}\``,
        );
      }
      const resolved = await settingsOf(options, ctx);
      const profile = parseChoice('--profile', resolved.settings.profile, [
        'nightly',
        'premigration',
        'hardening',
        'all',
      ]);
      const choice = policyChoiceOf(resolved);
      // Loaded with the shipped pack (unless replaced): a rule id of an added pack that clashes is an error here too.
      const loaded = await loadPolicies(choice);
      // A profile narrows every action to its rules (`rules test --profile hardening` runs the hardening cases).
      const packs = loaded
        .map((p) => ({ ...p, rules: p.rules.filter((r) => profile === 'all' || r.profiles.includes(profile)) }))
        .filter((p) => p.rules.length > 0 || p.shipped !== true);
      const rules = packs.flatMap((p) => p.rules).sort((a, b) => (a.id < b.id ? -1 : 1));
      // What `test` and `lint` check: the packs the author added, not the shipped one each time again.
      // (The shipped pack named again is loaded once: then it is what is checked.)
      const added = packs.filter((p) => p.shipped !== true);
      const authored = choice.added.length > 0 && added.length > 0 ? added : packs;
      switch (action) {
        case 'list': {
          const w = Math.max(...rules.map((r) => r.name.length));
          ctx.stdout(
            `${'ID'.padEnd(7)} ${'NAME'.padEnd(w)} ${'SEVERITY'.padEnd(8)} ${'SUBJECT'.padEnd(17)} PROFILES\n`,
          );
          for (const r of rules)
            ctx.stdout(
              `${r.id.padEnd(7)} ${r.name.padEnd(w)} ${r.severity.padEnd(8)} ${r.subject.padEnd(17)} ` +
                `${r.profiles.join(',')}\n`,
            );
          return ExitCode.Ok;
        }
        case 'show': {
          if (ruleRef === undefined)
            throw new MeshAuditError('rules show needs a rule id or name, e.g. `mesh-audit rules show MA1001`');
          const rule = rules.find((r) => r.id === ruleRef || r.name === ruleRef);
          if (!rule)
            throw new MeshAuditError(
              `no rule '${ruleRef}'${didYouMean(
                ruleRef,
                rules.flatMap((r) => [r.id, r.name]),
              )} (see \`mesh-audit rules list\`)`,
            );
          ctx.stdout(showRule(rule));
          return ExitCode.Ok;
        }
        case 'lint': {
          const warnings = (await Promise.all(authored.map(lintPack))).flat();
          for (const w of warnings) ctx.stdout(`${formatWarning(w)}\n`);
          ctx.stdout(`${warnings.length} warning${warnings.length === 1 ? '' : 's'}\n`);
          return warnings.length > 0 ? ExitCode.Findings : ExitCode.Ok;
        }
        case 'test': {
          let failed = 0;
          let total = 0;
          // The lint's warnings come first; they are advice and do not fail the cases.
          for (const w of (await Promise.all(authored.map(lintPack))).flat()) ctx.stdout(`warn ${formatWarning(w)}\n`);
          for (const { file, rules: fileRules, cases } of (await Promise.all(authored.map(loadCases))).flat()) {
            const results = runCases(file, fileRules, cases);
            for (const r of results) {
              total++;
              if (!r.ok) failed++;
              ctx.stdout(
                `${r.ok ? 'ok  ' : 'FAIL'} ${r.ruleId} ${r.kind}: ${r.name}${r.detail ? `\n       ${r.detail}` : ''}\n`,
              );
            }
          }
          ctx.stdout(`${total - failed} passed, ${failed} failed\n`);
          return failed > 0 ? ExitCode.Findings : ExitCode.Ok;
        }
        case 'docs':
          // The rules, each linked to its documentation as reports link it, then the fields each subject
          // set offers them (what a rule's `var` may read): the tables of the pages under docs/.
          ctx.stdout(`${ruleCatalogue(rules, (r) => helpUriOf(r, resolved.settings.docsUrl))}\n${subjectCatalogue()}`);
          return ExitCode.Ok;
        default:
          throw new MeshAuditError(
            `unknown rules action '${action}'${didYouMean(action, ['list', 'show', 'test', 'lint', 'docs'])} (list, ` +
              `show, test, lint, docs)`,
          );
      }
    });
}
