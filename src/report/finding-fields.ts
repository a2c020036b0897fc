import type { Finding } from '../evaluate/finding.js';
import type { LoadedRule } from '../policy/types.js';
import { benchmarkOf } from './rule-docs.js';

/** What a script joins a finding on besides its rule id: the rule's tags and the CIS recommendation it implements. */
export interface RuleFields {
  tags: string[];
  /** The CIS recommendation's id (`5.5` of `cis-docker-1.6:5.5`); absent when the rule implements none. */
  cis?: string;
}

/** A rule's fields as the JSON and JSON Lines reports give them on each finding and `rules list --format json`. */
export function ruleFieldsOf(rule: Pick<LoadedRule, 'tags'>): RuleFields {
  const cis = benchmarkOf(rule)?.id;
  return { tags: [...rule.tags], ...(cis !== undefined ? { cis } : {}) };
}

/**
 * A finding with its rule's fields after its rule's name (`ruleId`, `ruleName`, `tags`, `cis`, then the rest as it
 * was). A finding whose rule is not loaded (a baseline's, of a rule gone since) keeps the fields it was read with.
 */
export function withRuleFields(
  rules: readonly LoadedRule[],
): (f: Finding & Partial<RuleFields>) => Finding & Partial<RuleFields> {
  const byId = new Map(rules.map((r) => [r.id, ruleFieldsOf(r)]));
  return (f) => {
    const { host, ruleId, ruleName, tags, cis, ...rest } = f;
    const fields = byId.get(ruleId) ?? {
      ...(tags !== undefined ? { tags } : {}),
      ...(cis !== undefined ? { cis } : {}),
    };
    return { host, ruleId, ruleName, ...fields, ...rest };
  };
}
