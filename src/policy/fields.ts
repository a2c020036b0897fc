import {
  bySet,
  SUBJECT_SETS,
  type DataOf,
  type SubjectBase,
  type SubjectDataOf,
  type SubjectSet,
  type SubjectSetName,
} from './sets.js';
import type { FieldDoc, FieldDocs } from './field-docs.js';
import { didYouMean } from '../text/suggest.js';

/**
 * The fields each subject set offers to rules and message templates, with what each means: the one
 * list the policy loader checks rules against (src/policy/load.ts), `mesh-audit rules docs` prints
 * and the pages under docs/subjects/ show. The docs are written in the registry of subject
 * sets (src/policy/sets.ts), typed from the interfaces in subject-data.ts, so a field added to (or
 * removed from) an interface and not documented fails `tsc`; the builders are held to the same
 * interfaces. Here: the types, the docs of the fields every set has, and the lookup the loader's field
 * check (src/policy/field-check.ts) uses.
 */

export type { FieldDoc, FieldDocs } from './field-docs.js';

/** What the fields every set has mean; `kind` names the kinds of the registry's sets. */
function commonDocs(sets: Readonly<Record<string, SubjectSet>>): FieldDocs<SubjectBase> {
  const kinds = Object.values(sets).map((s) => `\`${s.kind}\``);
  return {
    kind: `the kind of subject (${kinds.join(', ')})`,
    id: 'what findings about it are named by',
    host: "the host's name",
  };
}

/** Each set's fields with what each means, the common ones first, from a registry (SUBJECT_SETS, or a test's). */
export function fieldDocsOf<R extends Readonly<Record<string, SubjectSet>>>(
  sets: R,
): { readonly [S in keyof R]: FieldDocs<DataOf<R[S]>> } {
  const common = commonDocs(sets);
  return Object.fromEntries(
    Object.entries(sets).map(([name, set]) => [name, { ...common, ...set.fields }]),
  ) as unknown as { readonly [S in keyof R]: FieldDocs<DataOf<R[S]>> };
}

export const SUBJECT_FIELD_DOCS: { readonly [S in SubjectSetName]: FieldDocs<SubjectDataOf[S]> } =
  fieldDocsOf(SUBJECT_SETS);

/** The top-level field names of each set, in the order above. */
export const SUBJECT_FIELDS: { readonly [S in SubjectSetName]: readonly string[] } = bySet((set) =>
  Object.keys(SUBJECT_FIELD_DOCS[set]),
);

export const docText = (doc: FieldDoc): string => (typeof doc === 'string' ? doc : doc.doc);

/**
 * Why a path (`container.name`: ['container', 'name']) names no field of a set, or null when it does
 * (as far as the fields are known: into a map, a list or a value, any further step is allowed).
 * `heads` are names the scope has beside the fields (`let` names, `item`); `docs` another registry's (a test's).
 */
export function unknownFieldOf(
  set: SubjectSetName,
  parts: readonly string[],
  heads: ReadonlySet<string> = new Set(),
  docs: Readonly<Record<SubjectSetName, Readonly<Record<string, FieldDoc>>>> = SUBJECT_FIELD_DOCS,
): string | null {
  if (heads.has(parts[0]!)) return null;
  let fields: Readonly<Record<string, FieldDoc>> = docs[set];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!Object.hasOwn(fields, part)) {
      const within = i === 0 ? `subject set ${set}` : `${parts.slice(0, i).join('.')} (${set})`;
      const known = [...(i === 0 ? heads : []), ...Object.keys(fields)].sort();
      return `${within} has no field '${part}'${didYouMean(part, known)} (known: ${known.join(', ')})`;
    }
    const doc = fields[part]!;
    if (typeof doc === 'string') return null;
    fields = doc.fields;
  }
  return null;
}

/** The doc of the field at a path, when the set documents it that far (undefined past a map, list or value). */
export function fieldDocAt(set: SubjectSetName, parts: readonly string[]): FieldDoc | undefined {
  let fields: Readonly<Record<string, FieldDoc>> | undefined = SUBJECT_FIELD_DOCS[set];
  let doc: FieldDoc | undefined;
  for (const part of parts) {
    if (fields === undefined || !Object.hasOwn(fields, part)) return undefined;
    doc = fields[part]!;
    fields = typeof doc === 'string' ? undefined : doc.fields;
  }
  return doc;
}
