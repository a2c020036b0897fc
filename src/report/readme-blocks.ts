import { SUBJECT_FIELDS } from '../facts/fields.js';
import type { LoadedRule } from '../policy/types.js';
import { operatorCatalogue, ruleCatalogue } from './catalogue.js';

/** The README's generated blocks, by marker name: `<!-- NAME:start -->` … `<!-- NAME:end -->`. */
export function readmeBlocks(rules: readonly LoadedRule[]): Record<string, string> {
  return {
    rules: ruleCatalogue(rules),
    operators: operatorCatalogue(),
    subjects: Object.entries(SUBJECT_FIELDS)
      .map(([set, fields]) => `- \`${set}\`: ${fields.map((f) => `\`${f}\``).join(', ')}`)
      .join('\n') + '\n',
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
