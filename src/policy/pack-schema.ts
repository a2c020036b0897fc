import { SUBJECT_SET_NAMES } from './sets.js';

/*
 * The pack schema's `subject` enum is the registry's set names (src/policy/sets.ts): the schema the
 * loader and the build's precompiled validator use has it set from the registry, and `npm run docs`
 * writes the same list into policies/policy.schema.json (for editors), which a test holds to it.
 */

interface SubjectProperty {
  enum: string[];
}

/** The `subject` property of a rule in the pack schema; throws when the schema no longer has one. */
function subjectProperty(schema: object): SubjectProperty {
  const property = (schema as { $defs?: { rule?: { properties?: { subject?: Partial<SubjectProperty> } } } }).$defs
    ?.rule?.properties?.subject;
  if (!property || !Array.isArray(property.enum))
    throw new Error('the policy schema has no $defs.rule.properties.subject.enum');
  return property as SubjectProperty;
}

/** The set names the schema's `subject` enum lists. */
export const schemaSubjectSets = (schema: object): readonly string[] => subjectProperty(schema).enum;

/** The pack schema with its `subject` enum made from the registry (or a test's names). */
export function withSubjectSets(schema: object, names: readonly string[] = SUBJECT_SET_NAMES): object {
  const copy = structuredClone(schema);
  subjectProperty(copy).enum = [...names];
  return copy;
}

/**
 * The text of policies/policy.schema.json with its `subject` enum made from the registry, its layout
 * kept (`npm run docs`).
 */
export function schemaTextWithSubjectSets(text: string, names: readonly string[] = SUBJECT_SET_NAMES): string {
  const pattern = /("subject": \{ "enum": )\[[^\]]*\]/;
  if (!pattern.test(text)) throw new Error('policy.schema.json: no `"subject": { "enum": [...] }` to rewrite');
  return text.replace(pattern, (_m, head: string) => `${head}${JSON.stringify(names).replace(/,/g, ', ')}`);
}
