import type { CAC } from 'cac';
import { ExitCode, MeshAuditError } from '../errors.js';
import { loadCases, runCases } from '../evaluate/cases.js';
import { formatWarning, lintPack } from '../policy/lint.js';
import { loadPolicies } from '../policy/load.js';
import { ruleCatalogue, subjectCatalogue } from '../report/catalogue.js';
import { helpUriOf } from '../report/rule-docs.js';
import { renderRulesJson, ruleJson } from '../report/rules-json.js';
import { PROFILE_CHOICES, type LoadedRule, type PolicyPack } from '../policy/types.js';
import type { CommandContext } from './context.js';
import { addSettingOptions, policyChoiceOf, settingsOf, type SettingFlags } from './settings.js';
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
  addSettingOptions(
    cli.command('rules <action> [rule]', 'Rules of the policy packs: list | show RULE | test | lint | docs'),
    ['policy', 'defaultPolicy', 'config', 'profile'],
  )
    .option('--format <format>', 'text or json (list and show: the catalogue, policies/rules.schema.json)', {
      default: 'text',
    })
    .example('mesh-audit rules list')
    .example('mesh-audit rules list --format json')
    .example('mesh-audit rules list --profile hardening')
    .example('mesh-audit rules show no-unclaimed-container')
    .example('mesh-audit rules test')
    .example('mesh-audit rules test --policy my-pack.yaml')
    .example('mesh-audit rules lint --policy my-pack.yaml')
    .action(async (action: string, ruleRef: string | undefined, options: SettingFlags & { format?: string }) => {
      // Only `show` takes a rule; a pack given as a word (`rules lint my-pack.yaml`) would otherwise be
      // ignored and the shipped pack checked in its place.
      if (ruleRef !== undefined && action !== 'show') {
        throw new MeshAuditError(
          `rules ${action} takes no argument ('${ruleRef}'); a pack is named with --policy, e.g. \`mesh-audit rules ` +
            `${action} --policy ${ruleRef}\``,
        );
      }
      const format = parseChoice('--format', options.format ?? 'text', ['text', 'json'] as const);
      const selection = await selectedRules(options, ctx);
      if (!Object.hasOwn(ACTIONS, action))
        throw new MeshAuditError(
          `unknown rules action '${action}'${didYouMean(action, Object.keys(ACTIONS))} ` +
            `(${Object.keys(ACTIONS).join(', ')})`,
        );
      if (format === 'json' && action !== 'list' && action !== 'show')
        throw new MeshAuditError(`rules ${action} has no --format json (only \`rules list\` and \`rules show\` do)`);
      return ACTIONS[action as keyof typeof ACTIONS]({ ...selection, format }, ruleRef, ctx);
    });
}

/** The rules an action works on: the profile's, and the packs an author added (what `test` and `lint` check). */
interface RuleSelection {
  rules: LoadedRule[];
  /** The packs a rule of another profile may be in (a `show` that misses names it). */
  choice: ReturnType<typeof policyChoiceOf>;
  authored: PolicyPack[];
  docsUrl: string;
  /** The profile the rules are of (`--profile`): said in the JSON catalogue, and by a `show` that misses. */
  profile: string;
}

/** What an action prints: text (the default) or JSON (`list` and `show`). */
type RulesOutput = RuleSelection & { format: 'text' | 'json' };

async function selectedRules(options: SettingFlags, ctx: CommandContext): Promise<RuleSelection> {
  const resolved = await settingsOf(options, ctx);
  const profile = parseChoice('--profile', resolved.settings.profile, PROFILE_CHOICES);
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
  return { rules, authored, docsUrl: resolved.settings.docsUrl, profile, choice };
}

type RulesAction = (selection: RulesOutput, ruleRef: string | undefined, ctx: CommandContext) => Promise<number>;

/** The actions of `rules`, in the order errors name them. */
const ACTIONS = {
  list: ({ rules, format, docsUrl, profile }, _ref, ctx) => {
    if (format === 'json') {
      ctx.stdout(renderRulesJson(rules, docsUrl, profile));
      return Promise.resolve(ExitCode.Ok);
    }
    const w = Math.max(...rules.map((r) => r.name.length));
    ctx.stdout(`${'ID'.padEnd(7)} ${'NAME'.padEnd(w)} ${'SEVERITY'.padEnd(8)} ${'SUBJECT'.padEnd(17)} PROFILES\n`);
    for (const r of rules)
      ctx.stdout(
        `${r.id.padEnd(7)} ${r.name.padEnd(w)} ${r.severity.padEnd(8)} ${r.subject.padEnd(17)} ` +
          `${r.profiles.join(',')}\n`,
      );
    return Promise.resolve(ExitCode.Ok);
  },
  show: async ({ rules, format, docsUrl, profile, choice }, ruleRef, ctx) => {
    if (ruleRef === undefined)
      throw new MeshAuditError('rules show needs a rule id or name, e.g. `mesh-audit rules show MA1001`');
    const rule = rules.find((r) => r.id === ruleRef || r.name === ruleRef);
    if (!rule) {
      // A rule of another profile (the hardening pack is loaded for its profile alone): say where it is (issue 47).
      for (const pack of await loadPolicies({ ...choice, hardening: true })) {
        const found = pack.rules.find((r) => r.id === ruleRef || r.name === ruleRef);
        if (found !== undefined)
          throw new MeshAuditError(
            `${ruleRef} is in the ${pack.pack.id} pack (profiles: ${found.profiles.join(', ')}), not in --profile ` +
              `${profile}: add --profile ${found.profiles.includes('hardening') ? 'hardening' : found.profiles[0]}`,
          );
      }
      throw new MeshAuditError(
        `no rule '${ruleRef}'${didYouMean(
          ruleRef,
          rules.flatMap((r) => [r.id, r.name]),
        )} (see \`mesh-audit rules list\`)`,
      );
    }
    ctx.stdout(format === 'json' ? JSON.stringify(ruleJson(rule, docsUrl), null, 2) + '\n' : showRule(rule));
    return ExitCode.Ok;
  },
  test: async ({ authored }, _ref, ctx) => {
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
  },
  lint: async ({ authored }, _ref, ctx) => {
    const warnings = (await Promise.all(authored.map(lintPack))).flat();
    for (const w of warnings) ctx.stdout(`${formatWarning(w)}\n`);
    ctx.stdout(`${warnings.length} warning${warnings.length === 1 ? '' : 's'}\n`);
    return warnings.length > 0 ? ExitCode.Findings : ExitCode.Ok;
  },
  docs: ({ rules, docsUrl }, _ref, ctx) => {
    // The rules, each linked to its documentation as reports link it, then the fields each subject
    // set offers them (what a rule's `var` may read): the tables of the pages under docs/.
    ctx.stdout(`${ruleCatalogue(rules, (r) => helpUriOf(r, docsUrl))}\n${subjectCatalogue()}`);
    return Promise.resolve(ExitCode.Ok);
  },
} satisfies Record<string, RulesAction>;
