import { HARDENING_PACK_ID } from '../policy/load.js';
import type { LoadedRule } from '../policy/types.js';
import { operatorCatalogue, ruleCatalogue, setCatalogue } from './catalogue.js';
import { subjectPagePath } from './doc-pages.js';
import { rulePagePath } from './rule-docs.js';

/** Where the pages are, from the README (scripts/docs-pages.ts writes them there). */
const README_DOCS = 'docs';

/**
 * The README's generated blocks, by marker name: `<!-- NAME:start -->` … `<!-- NAME:end -->`. The
 * catalogues link to the pages under docs/, which hold each rule's reference and each set's fields.
 */
export function readmeBlocks(rules: readonly LoadedRule[]): Record<string, string> {
  // The docker-hardening pack has its own section (README, "Hardening (CIS Docker)").
  const core = rules.filter((r) => r.pack !== HARDENING_PACK_ID);
  const hardening = rules.filter((r) => r.pack === HARDENING_PACK_ID);
  return {
    rules: ruleCatalogue(core, (r) => `${README_DOCS}/${rulePagePath(r)}`),
    'hardening-rules': ruleCatalogue(hardening, (r) => `${README_DOCS}/${rulePagePath(r)}`),
    operators: operatorCatalogue(),
    subjects: setCatalogue(rules, (set) => `${README_DOCS}/${subjectPagePath(set)}`),
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
