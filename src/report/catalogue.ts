import { docText, SUBJECT_FIELD_DOCS, type FieldDoc } from '../policy/fields.js';
import { CUSTOM_OPERATORS } from '../policy/operators.js';
import type { LoadedRule } from '../policy/types.js';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** The README's rule catalogue, generated from the packs: one source for README, SARIF and `rules show`. */
export function ruleCatalogue(rules: readonly LoadedRule[]): string {
  const rows = [...rules]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map(
      (r) =>
        `| ${r.id} | \`${r.name}\` | ${r.severity}${r.escalate ? ' (raised)' : ''} | ${r.subject} | ` +
        `${r.profiles.join(', ')} | ${cell(r.title)} |`,
    );
  return ['| id | name | severity | subject | profiles | title |', '|---|---|---|---|---|---|', ...rows, ''].join('\n');
}

export function operatorCatalogue(): string {
  const rows = CUSTOM_OPERATORS.map((o) => `| \`${o.name}\` | \`${cell(o.usage)}\` | ${cell(o.doc)} |`);
  return ['| operator | usage | what it does |', '|---|---|---|', ...rows, ''].join('\n');
}

/** Rows of a set's fields: each field, then the fields of an object of fixed shape under it (`container.name`). */
function fieldRows(fields: Readonly<Record<string, FieldDoc>>, prefix = ''): string[] {
  return Object.entries(fields).flatMap(([name, doc]) => [
    `| \`${prefix}${name}\` | ${cell(docText(doc))} |`,
    ...(typeof doc === 'string' ? [] : fieldRows(doc.fields, `${prefix}${name}.`)),
  ]);
}

/**
 * Each subject set's fields with what each means (src/policy/fields.ts): for the README and `rules docs`;
 * `docs` another registry's (a test's).
 */
export function subjectCatalogue(
  docs: Readonly<Record<string, Readonly<Record<string, FieldDoc>>>> = SUBJECT_FIELD_DOCS,
): string {
  return Object.entries(docs)
    .map(([set, fields]) =>
      [`**\`${set}\`**`, '', '| field | what it is |', '|---|---|', ...fieldRows(fields), ''].join('\n'),
    )
    .join('\n');
}
