import { CUSTOM_OPERATORS } from '../policy/operators.js';
import type { LoadedRule } from '../policy/types.js';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** The README's rule catalogue, generated from the packs: one source for README, SARIF and `rules show`. */
export function ruleCatalogue(rules: readonly LoadedRule[]): string {
  const rows = [...rules]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((r) => `| ${r.id} | \`${r.name}\` | ${r.severity}${r.escalate ? ' (raised)' : ''} | ${r.subject} | ${r.profiles.join(', ')} | ${cell(r.title)} |`);
  return ['| id | name | severity | subject | profiles | title |', '|---|---|---|---|---|---|', ...rows, ''].join('\n');
}

export function operatorCatalogue(): string {
  const rows = CUSTOM_OPERATORS.map((o) => `| \`${o.name}\` | \`${cell(o.usage)}\` | ${cell(o.doc)} |`);
  return ['| operator | usage | what it does |', '|---|---|---|', ...rows, ''].join('\n');
}
