import { posix } from 'node:path';
import { HARDENING_PACK_ID } from '../policy/load.js';
import type { LoadedRule } from '../policy/types.js';
import { operatorCatalogue, ruleCatalogue, setCatalogue } from './catalogue.js';
import { subjectPagePath } from './doc-pages.js';
import { rulePagePath } from './rule-docs.js';

/** Where the generated pages are, from the package root (scripts/docs-pages.ts writes them there). */
const DOCS = 'docs';

/**
 * The guides' generated blocks: for each guide (its path from the package root), its blocks by marker
 * name, `<!-- NAME:start -->` … `<!-- NAME:end -->`. The catalogues link to the pages under docs/,
 * relative to the guide, which hold each rule's reference and each set's fields.
 */
export function guideBlocks(rules: readonly LoadedRule[]): Map<string, Record<string, string>> {
  const core = rules.filter((r) => r.pack !== HARDENING_PACK_ID);
  const hardening = rules.filter((r) => r.pack === HARDENING_PACK_ID);
  const link = (guide: string, page: string) => posix.relative(posix.dirname(guide), `${DOCS}/${page}`);
  return new Map<string, Record<string, string>>([
    ['docs/rule-catalogue.md', { rules: ruleCatalogue(core, (r) => link('docs/rule-catalogue.md', rulePagePath(r))) }],
    // The docker-hardening pack has its own guide.
    [
      'docs/hardening.md',
      { 'hardening-rules': ruleCatalogue(hardening, (r) => link('docs/hardening.md', rulePagePath(r))) },
    ],
    ['docs/writing-rules.md', { operators: operatorCatalogue() }],
    [
      'docs/subject-sets.md',
      { subjects: setCatalogue(rules, (set) => link('docs/subject-sets.md', subjectPagePath(set))) },
    ],
  ]);
}

/** A guide's text with every one of its generated blocks replaced by its current content. */
export function fillBlocks(guide: string, text: string, blocks: Record<string, string>): string {
  let out = text;
  for (const [name, body] of Object.entries(blocks)) {
    const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
    if (!pattern.test(out)) throw new Error(`${guide} has no <!-- ${name}:start --> … <!-- ${name}:end --> block`);
    out = out.replace(pattern, (_m, start: string, end: string) => `${start}${body}${end}`);
  }
  return out;
}
