/**
 * What `npm run docs` writes, worked out without writing (test/docs-pages.test.ts compares it with the
 * files): the pages under docs/ for every rule of the shipped packs, the built-in ones and every
 * subject set. The guides' generated blocks are src/report/guide-blocks.ts's.
 */
import { relative } from 'node:path';
import { caseExamples, loadCases, type RuleCases } from '../src/evaluate/cases.js';
import { PACKAGE_ROOT } from '../src/paths.js';
import { loadShippedPacks } from '../src/policy/load.js';
import { docPages, type RulePageInput } from '../src/report/doc-pages.js';
import { WAIVER_EXPIRED_RULE } from '../src/report/waivers.js';

/** The folder the pages go in, relative to the package: each page's path is under it. */
export const DOCS_FOLDER = 'docs';

/** Every page by its path under docs/ (`rules/MA1001.md`). */
export async function shippedDocPages(): Promise<Map<string, string>> {
  const inputs: RulePageInput[] = [{ rule: WAIVER_EXPIRED_RULE, source: 'src/report/waivers.ts', examples: [] }];
  for (const pack of await loadShippedPacks()) {
    const cases = Object.assign({}, ...(await loadCases(pack)).map((f) => f.cases)) as Record<string, RuleCases>;
    for (const rule of pack.rules)
      inputs.push({
        rule,
        source: relative(PACKAGE_ROOT, rule.source.file),
        pack: { id: pack.pack.id, version: pack.pack.version },
        examples: caseExamples(rule, cases[rule.id]),
      });
  }
  return docPages(inputs);
}
