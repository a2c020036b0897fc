import type { LoadedRule } from '../policy/types.js';
import { operatorCatalogue, ruleCatalogue, subjectCatalogue } from './catalogue.js';
import { remediationOf } from './rule-docs.js';
import { WAIVER_EXPIRED_RULE } from './waivers.js';

/**
 * One README section per rule, the target of its `helpUri` in SARIF, its `runbook_url` in alerts and
 * the link in the text report: `#### MA2001 \`no-unclaimed-container\`` (anchor `ma2001-no-unclaimed-container`).
 */
export function ruleReference(rules: readonly LoadedRule[]): string {
  const all = [...rules, ...(rules.some((r) => r.id === WAIVER_EXPIRED_RULE.id) ? [] : [WAIVER_EXPIRED_RULE])].sort(
    (a, b) => (a.id < b.id ? -1 : 1),
  );
  return all
    .map((r) => {
      const raised = r.escalate
        ? ` (raised to ${[...new Set(r.escalate.map((e) => e.severity))].join(' or ')} when it applies)`
        : '';
      const tags = r.tags.map((t) => `\`${t}\``).join(', ');
      const facts = `*${r.title}.* Severity ${r.severity}${raised}; subject \`${r.subject}\`; tags ${tags}.`;
      const help = r.help.trim();
      return [
        `#### ${r.id} \`${r.name}\``,
        '',
        facts,
        '',
        help,
        ...(remediationOf(r) ? [] : ['', "**Remediation:** see the rule's help above."]),
        '',
      ].join('\n');
    })
    .join('\n');
}

/** The README's generated blocks, by marker name: `<!-- NAME:start -->` … `<!-- NAME:end -->`. */
export function readmeBlocks(rules: readonly LoadedRule[]): Record<string, string> {
  return {
    rules: ruleCatalogue(rules),
    'rule-reference': ruleReference(rules),
    operators: operatorCatalogue(),
    subjects: subjectCatalogue(),
  };
}

/** README text with every generated block replaced by its current content. */
export function fillReadme(readme: string, blocks: Record<string, string>): string {
  let out = readme;
  for (const [name, body] of Object.entries(blocks)) {
    const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
    if (!pattern.test(out)) throw new Error(`README has no <!-- ${name}:start --> … <!-- ${name}:end --> block`);
    out = out.replace(pattern, (_m, start: string, end: string) => `${start}${body}${end}`);
  }
  return out;
}
