import type { LoadedRule, Rule, Severity } from '../policy/types.js';

/**
 * What every report says about a rule beyond its id, written once: where its documentation is, its
 * remediation, and whether it is about exposure (a security finding for GitHub code scanning).
 */

/** A rule's page, relative to the docs folder (written by `npm run docs`, scripts/docs.ts). */
export const rulePagePath = (rule: Pick<Rule, 'id'>): string => `rules/${rule.id}.md`;

/**
 * Where a rule's documentation is: its own `helpUri`; else, for a rule of a shipped pack (or a built-in
 * one), its page under the docs folder at `docsUrl` (the setting; by default the repository of
 * package.json at this version's tag, DEFAULT_DOCS_URL); else none — no page documents a rule of a pack
 * of one's own, so a custom rule without `helpUri` gets no link rather than a made-up one (docs/writing-rules.md,
 * A pack of your own).
 */
export const helpUriOf = (rule: Pick<LoadedRule, 'id' | 'helpUri' | 'shipped'>, docsUrl: string): string | undefined =>
  // eslint-disable-next-line regexp/no-super-linear-move -- the docs URL is the operator's setting, not the host's
  rule.helpUri ?? (rule.shipped === true ? `${docsUrl.replace(/\/+$/, '')}/${rulePagePath(rule)}` : undefined);

/** Where to read more, for the text and JUnit reports: the rule's link, else where the rule is written. */
export const moreAbout = (rule: Pick<LoadedRule, 'id' | 'helpUri' | 'shipped' | 'source'>, docsUrl: string): string =>
  helpUriOf(rule, docsUrl) ??
  `${rule.source.file}:${rule.source.line} (\`mesh-audit rules show ${rule.id}\` with its pack)`;

/** Markdown help as plain text: emphasis and code marks dropped, paragraphs kept. */
export const plainText = (markdown: string): string =>
  markdown
    .trim()
    .replace(/\*\*([^*]+)\*\*/g, '$1')
    .replace(/`([^`]+)`/g, '$1');

const paragraphs = (help: string): string[] =>
  help
    .trim()
    .split(/\n\s*\n/)
    // eslint-disable-next-line regexp/no-super-linear-move -- a rule's help, from a pack the operator chose
    .map((p) => p.replace(/\s*\n\s*/g, ' ').trim());

/** The first paragraph of the help, on one line. */
export const summaryOf = (rule: Pick<Rule, 'help'>): string => paragraphs(rule.help)[0] ?? '';

/** The remediation as plain text, a paragraph a line (text report, JUnit, Alertmanager). */
export const remediationOf = (rule: Pick<Rule, 'remediation'>): string =>
  plainText(paragraphs(rule.remediation).join('\n\n'));

/** Help and remediation in one markdown text, for readers that have one help field (SARIF `help`). */
export const helpWithRemediation = (rule: Pick<Rule, 'help' | 'remediation'>): string =>
  `${rule.help.trim()}\n\n**Remediation:** ${rule.remediation.trim()}`;

/** Rules about something reachable from outside: tagged `exposure` in their pack. */
export const isExposureRule = (rule: Pick<Rule, 'tags'>): boolean => rule.tags.includes('exposure');

/** Security rules for code-scanning consumers (SARIF `security-severity`): exposure and hardening (CIS) rules. */
export const isSecurityRule = (rule: Pick<Rule, 'tags'>): boolean =>
  isExposureRule(rule) || rule.tags.includes('hardening');

/** A rule's CIS benchmark recommendation, from its tags (`cis-docker-1.6:5.5`, `cis-level-1`, `cis-automated`). */
export interface BenchmarkRef {
  benchmark: string;
  id: string;
  level: number | null;
  assessment: 'automated' | 'manual' | null;
}

/** The recommendation a rule implements, when its tags name one (the docker-hardening pack's do). */
export function benchmarkOf(rule: Pick<Rule, 'tags'>): BenchmarkRef | undefined {
  const ref = rule.tags.map((t) => /^(cis-[a-z0-9-]+-\d+(?:\.\d+)*):(\d+(?:\.\d+)*)$/.exec(t)).find((m) => m !== null);
  if (!ref) return undefined;
  const level = rule.tags.map((t) => /^cis-level-(\d)$/.exec(t)).find((m) => m !== null);
  const assessment = rule.tags.find((t) => t === 'cis-automated' || t === 'cis-manual');
  return {
    benchmark: ref[1]!,
    id: ref[2]!,
    level: level ? Number(level[1]) : null,
    assessment: assessment === undefined ? null : assessment === 'cis-automated' ? 'automated' : 'manual',
  };
}

/** The worst severity a rule can give: its own or one it escalates to. */
export function worstSeverity(rule: Pick<Rule, 'severity' | 'escalate'>): Severity {
  const rank = { note: 1, warning: 2, error: 3 } as const;
  return [rule.severity, ...(rule.escalate ?? []).map((s) => s.severity)].reduce((a, b) => (rank[b] > rank[a] ? b : a));
}

/** Every severity a rule can give, in a fixed order (for series that must exist before a finding does). */
export function severitiesOf(rule: Pick<Rule, 'severity' | 'escalate'>): Severity[] {
  const all = new Set<Severity>([rule.severity, ...(rule.escalate ?? []).map((s) => s.severity)]);
  return (['error', 'warning', 'note'] as const).filter((s) => all.has(s));
}

/**
 * GitHub's `security-severity` (a CVSS-like score: 9.0+ critical, 7.0+ high, 4.0+ medium, else low),
 * from the worst severity the rule can give: an exposed unclaimed container is high, not a note.
 */
export const SECURITY_SEVERITY: Record<Severity, string> = { error: '8.0', warning: '5.0', note: '2.0' };
