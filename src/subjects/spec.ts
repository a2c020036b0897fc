import type { SafeValue } from '../secret/value.js';

/*
 * A subject set's facts declared once (ARCHITECTURE.md, "Where a new field or a new subject set goes"):
 * a spec is a list of entries, each a value of the snapshot (its JSON Schema, where the scan reads it,
 * and the subject field it is) or a subject fact the facts builder makes from other things (its doc,
 * type and source). From a spec come, by the functions and types here: the snapshot part's JSON Schema
 * (src/snapshot/schema.ts, schema-host-objects.ts) and TypeScript type (src/snapshot/types.ts), the
 * subject's data type (src/policy/subject-data.ts), the fields' docs (src/policy/sets.ts: `rules docs`,
 * docs/subjects/, the load-time field check) and, for the containers' runtime facts, the mapping from
 * the snapshot's values to the subject's (src/facts/containers.ts). Plain data and types only: below
 * the snapshot and policy layers, which both read it.
 */

/** What a field means, as the registry of subject sets writes it (src/policy/fields.ts FieldDoc). */
export type SpecDoc = string | { readonly doc: string; readonly fields: Readonly<Record<string, SpecDoc>> };

type PrimitiveName = 'boolean' | 'string' | 'integer' | 'number' | 'null';

/** Bounds a primitive value may have beside its type (they do not change its TypeScript type). */
interface Bounds {
  readonly minLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
}

/** The JSON Schema a spec gives a value: the few forms the snapshot uses, so that its type can be derived. */
export type ValueSchema =
  | ({ readonly type: PrimitiveName | readonly PrimitiveName[] } & Bounds)
  | { readonly enum: readonly string[] }
  | { readonly const: string | boolean }
  | { readonly type: 'array'; readonly items: ValueSchema }
  | {
      readonly type: 'object';
      readonly required: readonly string[];
      readonly additionalProperties: false;
      readonly properties: Readonly<Record<string, ValueSchema>>;
    }
  | {
      readonly type: 'object';
      readonly additionalProperties: false;
      readonly properties: Readonly<Record<string, ValueSchema>>;
    }
  | { readonly type: 'object'; readonly additionalProperties: ValueSchema }
  | { readonly type: 'object' }
  | { readonly oneOf: readonly ValueSchema[] }
  | { readonly $ref: '#/$defs/safeValue' }
  | { readonly $ref: '#/$defs/daemonSetting' }
  | DefRef<string, ValueSchema>;

/**
 * A `$ref` to a schema of the snapshot's `$defs` (`#/$defs/<name>`), typed as that schema (`of`: the
 * type only, never in the JSON): the snapshot schema holds the def once (src/snapshot/schema.ts).
 */
export interface DefRef<N extends string, S extends ValueSchema> {
  readonly $ref: `#/$defs/${N}`;
  readonly of?: S;
}

// `_of` gives the ref its type only: the JSON names the def, which the snapshot schema holds once.
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export const defRef = <const N extends string, const S extends ValueSchema>(name: N, _of: S): DefRef<N, S> => ({
  $ref: `#/$defs/${name}`,
});

/** The properties an object's schema requires (none when it names none: JSON Schema's default). */
type RequiredOf<S> = S extends { readonly required: readonly (infer R)[] } ? R : never;

/** An intersection of object types as one (the type shows, and compares, as one object). */
type Flat<T> = { [K in keyof T]: T[K] };

type PrimitiveOf<T> = T extends 'boolean'
  ? boolean
  : T extends 'string'
    ? string
    : T extends 'integer'
      ? number
      : T extends 'null'
        ? null
        : never;

/** The TypeScript type of the values a ValueSchema accepts (every property of an object required). */
export type ValueOf<S> = S extends { readonly $ref: '#/$defs/safeValue' }
  ? SafeValue
  : S extends { readonly $ref: '#/$defs/daemonSetting' }
    ? unknown
    : S extends { readonly $ref: string; readonly of?: infer D }
      ? ValueOf<D>
      : S extends { readonly const: infer C }
        ? C
        : S extends { readonly oneOf: readonly (infer A)[] }
          ? ValueOf<A>
          : S extends { readonly enum: readonly (infer E)[] }
            ? E
            : S extends { readonly type: 'array'; readonly items: infer I }
              ? ValueOf<I>[]
              : S extends { readonly type: 'object'; readonly properties: infer P }
                ? Flat<
                    { -readonly [K in keyof P as K extends RequiredOf<S> ? K : never]: ValueOf<P[K]> } & {
                      -readonly [K in keyof P as K extends RequiredOf<S> ? never : K]?: ValueOf<P[K]>;
                    }
                  >
                : S extends { readonly type: 'object'; readonly additionalProperties: infer A }
                  ? Record<string, ValueOf<A>>
                  : S extends { readonly type: 'object' }
                    ? Record<string, unknown>
                    : S extends { readonly type: readonly (infer T)[] }
                      ? PrimitiveOf<T>
                      : S extends { readonly type: infer T }
                        ? PrimitiveOf<T>
                        : never;

// The schema forms, written once (their key order is the snapshot schema's).
export const BOOLEAN = { type: 'boolean' } as const;
export const STRING = { type: 'string' } as const;
export const INTEGER = { type: 'integer' } as const;
export const SAFE_VALUE = { $ref: '#/$defs/safeValue' } as const;
/** Text or null (a time not known, a label not there). */
export const STRING_OR_NULL = { type: ['string', 'null'] } as const;
export const INTEGER_OR_NULL = { type: ['integer', 'null'] } as const;
export const BOOLEAN_OR_NULL = { type: ['boolean', 'null'] } as const;
/** A map of text to values of one form (labels, env). */
export const mapOf = <const A extends ValueSchema>(additionalProperties: A) =>
  ({ type: 'object', additionalProperties }) as const;
/** The value or null. */
export const orNull = <const S extends ValueSchema>(schema: S) => ({ oneOf: [{ type: 'null' }, schema] }) as const;
export const listOf = <const I extends ValueSchema>(items: I) => ({ type: 'array', items }) as const;
/** An object of fixed shape: every property required but those named `optional`, no other. */
export const shapeOf = <
  const P extends Readonly<Record<string, ValueSchema>>,
  const O extends keyof P & string = never,
>(
  properties: P,
  optional: readonly O[] = [],
) =>
  ({
    type: 'object',
    required: Object.keys(properties).filter((k) => !(optional as readonly string[]).includes(k)) as Exclude<
      keyof P & string,
      O
    >[],
    additionalProperties: false,
    properties,
  }) as const;

/**
 * A value of the snapshot's part (`snapshot`, its key there), read from the engine (`engine`: where, in
 * the Engine API's inspect or list, or on the host), and the subject field it is (`subject`, with `doc`),
 * or null when no subject field is it as it is (a fact made from it by the builder is a `made` entry).
 * `fact` turns the snapshot's value into the subject's when they differ (names inside an object);
 * `absent` stands in for it when the snapshot has no such part (then the fact is unknown): else false,
 * ``, 0, none, null. `optional`: the part may lack the value (the schema does not require it).
 */
export interface ReadEntry<K extends string, S extends ValueSchema, F extends string | null, D, T, O = false> {
  readonly snapshot: K;
  readonly schema: S;
  readonly engine: string;
  readonly subject: F;
  readonly doc: D;
  readonly fact?: (value: ValueOf<S>) => T;
  readonly absent?: string | number | boolean | null;
  readonly optional?: O;
}

/**
 * A subject fact the builder makes (derived from others, or from another part of the snapshot):
 * `from` says from what, where the doc does not.
 */
export interface MadeEntry<F extends string, S extends ValueSchema, D> {
  readonly made: F;
  readonly schema: S;
  readonly doc: D;
  readonly from?: string;
}

export const read = <
  const K extends string,
  const S extends ValueSchema,
  const F extends string | null,
  const D extends SpecDoc | null,
  T = ValueOf<S>,
  const O extends boolean = false,
>(
  entry: ReadEntry<K, S, F, D, T, O>,
): ReadEntry<K, S, F, D, T, O> => entry;

export const made = <const F extends string, const S extends ValueSchema, const D extends SpecDoc>(
  entry: MadeEntry<F, S, D>,
): MadeEntry<F, S, D> => entry;

/** An entry of any spec, whatever its types (its `fact` taken as one of nothing: never called on an unknown value). */
interface AnyRead {
  readonly snapshot: string;
  readonly schema: ValueSchema;
  readonly engine: string;
  readonly subject: string | null;
  readonly doc: unknown;
  readonly fact?: (value: never) => unknown;
  readonly absent?: string | number | boolean | null;
  readonly optional?: boolean;
}
type AnyMade = MadeEntry<string, ValueSchema, unknown>;
export type Spec = readonly (AnyRead | AnyMade)[];

type ReadsOf<S extends Spec> = Extract<S[number], { snapshot: string }>;
type MadesOf<S extends Spec> = Extract<S[number], { made: string }>;
type SubjectReadsOf<S extends Spec> = Extract<ReadsOf<S>, { subject: string }>;
type FactOf<E> = E extends { readonly fact?: (value: never) => infer T } ? T : never;

type OptionalReadsOf<S extends Spec> = Extract<ReadsOf<S>, { readonly optional?: true }>;
type RequiredReadsOf<S extends Spec> = Exclude<ReadsOf<S>, OptionalReadsOf<S>>;

/** The snapshot's part a spec declares: each value under its key (an `optional` one may be absent). */
export type SnapshotPartOf<S extends Spec> = {
  [E in RequiredReadsOf<S> as E['snapshot']]: ValueOf<E['schema']>;
} & { [E in OptionalReadsOf<S> as E['snapshot']]?: ValueOf<E['schema']> };

/** The subject fields a spec writes from the snapshot's values (the facts mapping gives them). */
export type ReadFactsOf<S extends Spec> = {
  [E in SubjectReadsOf<S> as E['subject']]: E extends { readonly optional?: true } ? FactOf<E> | null : FactOf<E>;
};

/** The subject fields a spec declares the builder makes. */
export type MadeFactsOf<S extends Spec> = { [E in MadesOf<S> as E['made']]: ValueOf<E['schema']> };

/** Every subject field a spec declares. */
export type SubjectFactsOf<S extends Spec> = ReadFactsOf<S> & MadeFactsOf<S>;

/** The docs of every subject field a spec declares, in its order. */
export type SubjectDocsOf<S extends Spec> = {
  readonly [E in SubjectReadsOf<S> | MadesOf<S> as E extends { made: infer F extends string }
    ? F
    : E extends { subject: infer F extends string }
      ? F
      : never]: E['doc'];
};

const isRead = (e: AnyRead | AnyMade): e is AnyRead => 'snapshot' in e;

/** The JSON Schema of the snapshot's part: an object with every value of the spec, required, in its order. */
export function snapshotSchemaOf(spec: Spec): {
  type: 'object';
  additionalProperties: false;
  required: string[];
  properties: Record<string, ValueSchema>;
} {
  const reads = spec.filter(isRead);
  return {
    type: 'object',
    additionalProperties: false,
    required: reads.filter((e) => e.optional !== true).map((e) => e.snapshot),
    properties: Object.fromEntries(reads.map((e) => [e.snapshot, e.schema])),
  };
}

/** What each subject field the spec declares means, in the spec's order. */
export function subjectDocsOf<const S extends Spec>(spec: S): SubjectDocsOf<S> {
  return Object.fromEntries(
    spec.flatMap((e) => (isRead(e) ? (e.subject === null ? [] : [[e.subject, e.doc]]) : [[e.made, e.doc]])),
  ) as SubjectDocsOf<S>;
}

/** Where each subject fact of the spec comes from, in its order: `read` for those read, `made[f]` for the others. */
export function factSourcesOf<const S extends Spec, V, M extends { readonly [F in keyof MadeFactsOf<S>]: unknown }>(
  spec: S,
  read: V,
  made: M,
): { [F in keyof ReadFactsOf<S>]: V } & M {
  const made_ = made as Readonly<Record<string, unknown>>;
  return Object.fromEntries(
    spec.flatMap((e) => (isRead(e) ? (e.subject === null ? [] : [[e.subject, read]]) : [[e.made, made_[e.made]]])),
  ) as { [F in keyof ReadFactsOf<S>]: V } & M;
}

/** The value absent from a snapshot without the part: false, ``, 0, none, null, an object of those. */
function absentOf(schema: ValueSchema): unknown {
  if ('$ref' in schema || 'enum' in schema) return null;
  if ('const' in schema) return schema.const;
  if ('additionalProperties' in schema && schema.additionalProperties !== false) return Object.freeze({});
  if ('oneOf' in schema)
    return schema.oneOf.some((s) => 'type' in s && s.type === 'null') ? null : absentOf(schema.oneOf[0]!);
  const type = typeof schema.type === 'string' ? schema.type : schema.type.includes('null') ? 'null' : schema.type[0];
  switch (type) {
    case 'boolean':
      return false;
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'array':
      return Object.freeze([]);
    case 'object':
      if (!('properties' in schema)) return Object.freeze({});
      return Object.freeze(
        Object.fromEntries(
          Object.entries((schema as { properties: Record<string, ValueSchema> }).properties).map(([k, s]) => [
            k,
            absentOf(s),
          ]),
        ),
      );
    default:
      return null;
  }
}

/** Writes a subject's facts read from a snapshot part (`part`, undefined when the snapshot has none). */
export type FactsWriter<S extends Spec> = <B extends object>(
  facts: B,
  part: SnapshotPartOf<S> | undefined,
) => B & ReadFactsOf<S>;

/**
 * The mapping from the snapshot's part to the subject's fields, made once per spec. Speed: a subject
 * literal with the builder's facts gets these written after it, each once, always in the same order,
 * so every subject of a set has one hidden class and stays a fast object. Measured against the literal
 * that held them all (10,000 containers, src/facts/containers.ts buildContainers): about a tenth
 * slower to build, no slower to read (within the noise); a writer compiled from the spec's names was no
 * faster, so the cost is the properties added after the literal, not this loop.
 */
export function factsWriterOf<const S extends Spec>(spec: S): FactsWriter<S> {
  const reads = spec.filter(isRead).filter((e) => e.subject !== null);
  const keys = reads.map((e) => e.subject!);
  const snapshotKeys = reads.map((e) => e.snapshot);
  const facts = reads.map((e) => e.fact);
  const absent = Object.freeze(
    Object.fromEntries(
      reads.map((e) => {
        const value = e.absent ?? absentOf(e.schema);
        return [e.subject!, e.fact === undefined ? value : e.fact(value as never)];
      }),
    ),
  );
  const count = keys.length;
  return <B extends object>(base: B, part: SnapshotPartOf<S> | undefined): B & ReadFactsOf<S> => {
    const out = base as Record<string, unknown>;
    if (part === undefined) {
      for (let i = 0; i < count; i++) out[keys[i]!] = absent[keys[i]!];
    } else {
      const values = part as Readonly<Record<string, unknown>>;
      for (let i = 0; i < count; i++) {
        const fact = facts[i];
        const value = values[snapshotKeys[i]!];
        out[keys[i]!] = value === undefined ? null : fact === undefined ? value : fact(value as never);
      }
    }
    return out as B & ReadFactsOf<S>;
  };
}

/**
 * A subject set declared by its spec: the `kind` of its subjects, what a finding about one is about
 * (`about`, a kind src/policy/sets.ts knows), what the set holds in one line, and its entries.
 */
export interface SetSpec<K extends string, A extends string, S extends Spec> {
  readonly kind: K;
  readonly about: A;
  readonly summary: string;
  readonly entries: S;
}

/**
 * A set's spec. Its entries are written apart (`[…] as const`): as the expected type of a `read(…)`
 * call inside this one, a Spec would make TypeScript infer the entry's fact type `unknown`.
 */
export const setSpec = <const K extends string, const A extends string, const S extends Spec>(
  set: SetSpec<K, A, S>,
): SetSpec<K, A, S> => set;

/** A subject's data: the fields every subject has (`kind`, `id`, `host`) and those its spec declares. */
export type SubjectDataOfSpec<T extends SetSpec<string, string, Spec>> = {
  kind: T['kind'];
  id: string;
  host: string;
} & SubjectFactsOf<T['entries']>;
