/*
 * The types a subject set's field docs are written in: the registry (src/policy/sets.ts) writes them, the field
 * lookups (src/policy/fields.ts) read them. Apart from both, so that neither imports the other back.
 */

/**
 * What a field means. An object of fixed shape may also say what each of its fields means: then a
 * rule's path into it is checked too (`container.name`); a map (`labels`, `env`) or a list is not.
 */
export type FieldDoc = string | { doc: string; fields: Readonly<Record<string, FieldDoc>> };

type DocOf<V> =
  NonNullable<V> extends readonly unknown[]
    ? string
    : NonNullable<V> extends object
      ? string extends keyof NonNullable<V>
        ? string
        : string | { doc: string; fields: FieldDocs<NonNullable<V>> }
      : string;

/** One entry per field of T, no more, no fewer. */
export type FieldDocs<T> = { readonly [K in keyof T]-?: DocOf<T[K]> };
