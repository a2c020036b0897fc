import { docText, SUBJECT_FIELD_DOCS, type FieldDoc } from '../policy/fields.js';
import { CUSTOM_OPERATORS } from '../policy/operators.js';
import { SUBJECT_SET_NAMES, SUBJECT_SETS } from '../policy/sets.js';
import type { LoadedRule, SubjectSetName } from '../policy/types.js';

/**
 * The catalogues: the guides' tables (docs/), `mesh-audit rules docs`, and the field tables of the pages under
 * docs/ (doc-pages.ts) — each written once, here, so that they agree.
 */

// A run of white space holding a line break becomes one space (`\s+` whole: `\s*\n\s*` re-read long runs).
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, (ws) => (ws.includes('\n') ? ' ' : ws));

/**
 * The rule catalogue, generated from the packs: one source for docs/rule-catalogue.md, SARIF and `rules show`. `linkOf`
 * gives each rule's documentation (its page, its helpUri): the id links there.
 */
export function ruleCatalogue(
  rules: readonly LoadedRule[],
  linkOf: (rule: LoadedRule) => string | undefined = () => undefined,
): string {
  const rows = [...rules]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((r) => {
      const link = linkOf(r);
      const id = link === undefined ? r.id : `[${r.id}](${link})`;
      return (
        `| ${id} | \`${r.name}\` | ${r.severity}${r.escalate ? ' (raised)' : ''} | ${r.subject} | ` +
        `${r.profiles.join(', ')} | ${cell(r.title)} |`
      );
    });
  return ['| id | name | severity | subject | profiles | title |', '|---|---|---|---|---|---|', ...rows, ''].join('\n');
}

export function operatorCatalogue(): string {
  const rows = CUSTOM_OPERATORS.map((o) => `| \`${o.name}\` | \`${cell(o.usage)}\` | ${cell(o.doc)} |`);
  return ['| operator | usage | what it does |', '|---|---|---|', ...rows, ''].join('\n');
}

/** The table of a set's fields: each field, then the fields of an object of fixed shape under it (`container.name`). */
export function fieldTable(fields: Readonly<Record<string, FieldDoc>>): string {
  const rows = (within: Readonly<Record<string, FieldDoc>>, prefix = ''): string[] =>
    Object.entries(within).flatMap(([name, doc]) => [
      `| \`${prefix}${name}\` | ${cell(docText(doc))} |`,
      ...(typeof doc === 'string' ? [] : rows(doc.fields, `${prefix}${name}.`)),
    ]);
  return ['| field | what it is |', '|---|---|', ...rows(fields), ''].join('\n');
}

/**
 * Each subject set's fields with what each means (the registry, src/policy/sets.ts), for `rules docs`:
 * each set's table is the one on its page. `docs` another registry's (a test's).
 */
export function subjectCatalogue(
  docs: Readonly<Record<string, Readonly<Record<string, FieldDoc>>>> = SUBJECT_FIELD_DOCS,
): string {
  return Object.entries(docs)
    .map(([set, fields]) => [`**\`${set}\`**`, '', fieldTable(fields)].join('\n'))
    .join('\n');
}

/** The subject sets, each linked to its page (`linkOf`), with what it holds and the shipped rules over it. */
export function setCatalogue(rules: readonly LoadedRule[], linkOf: (set: SubjectSetName) => string): string {
  const rows = SUBJECT_SET_NAMES.map((set) => {
    const over = rules
      .filter((r) => r.subject === set)
      .map((r) => r.id)
      .sort();
    return `| [\`${set}\`](${linkOf(set)}) | ${cell(SUBJECT_SETS[set].summary)} | ${over.join(', ') || '—'} |`;
  });
  return ['| subject set | what it holds | shipped rules over it |', '|---|---|---|', ...rows, ''].join('\n');
}
