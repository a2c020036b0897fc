import type { LoadedRule } from '../policy/types.js';
import { TOOL_NAME, TOOL_URI, TOOL_VERSION } from '../version.js';
import { ruleFieldsOf } from './finding-fields.js';
import { benchmarkOf, helpUriOf, severitiesOf, summaryOf } from './rule-docs.js';

export const RULES_JSON_SCHEMA = 'mesh-audit/rules@1';

/**
 * One rule as `rules list --format json` and `rules show --format json` give it (policies/rules.schema.json): what a
 * script joins a report's findings with by `ruleId`. `tags` and `cis` are the very fields a JSON finding carries; a
 * value the rule does not have (`cis`, `benchmark`, `helpUri`) is left out, as in the JSON report.
 */
export function ruleJson(rule: LoadedRule, docsUrl: string) {
  const { tags, cis } = ruleFieldsOf(rule);
  const benchmark = benchmarkOf(rule);
  const helpUri = helpUriOf(rule, docsUrl);
  return {
    id: rule.id,
    name: rule.name,
    title: rule.title,
    pack: rule.pack,
    shipped: rule.shipped === true,
    severity: rule.severity,
    severities: severitiesOf(rule),
    subject: rule.subject,
    profiles: [...rule.profiles],
    tags,
    ...(cis !== undefined ? { cis } : {}),
    ...(benchmark !== undefined ? { benchmark } : {}),
    ...(helpUri !== undefined ? { helpUri } : {}),
    summary: summaryOf(rule),
    message: rule.message,
    help: rule.help,
    remediation: rule.remediation,
    source: { ...rule.source },
  };
}

/** The catalogue of the rules a profile runs, in id order: `rules list --format json`. */
export function renderRulesJson(rules: readonly LoadedRule[], docsUrl: string, profile: string): string {
  const doc = {
    schemaVersion: RULES_JSON_SCHEMA,
    tool: { name: TOOL_NAME, version: TOOL_VERSION, uri: TOOL_URI },
    profile,
    rules: rules.map((r) => ruleJson(r, docsUrl)),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}
