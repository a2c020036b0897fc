import { MeshAuditError } from '../errors.js';
import { lineAt, parseYaml, schemaErrors } from '../input/yaml.js';
import type { LoadedRule } from '../policy/types.js';
import { readInput } from '../input/read.js';
import { validatorFor } from '../input/validate.js';
import { closest, distance } from 'fastest-levenshtein';
import type { Waiver } from './waivers.js';

export const waiversSchema = {
  type: 'object',
  required: ['waivers'],
  additionalProperties: false,
  properties: {
    waivers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['rule', 'subject', 'justification', 'expires'],
        additionalProperties: false,
        properties: {
          rule: { type: 'string', minLength: 1 },
          subject: { type: 'string', minLength: 1 },
          host: { type: 'string', minLength: 1 },
          justification: { type: 'string', minLength: 10 },
          expires: { type: 'string', format: 'date' },
        },
      },
    },
  },
} as const;
const validateWaivers = validatorFor('waivers', waiversSchema);

/** Reads a waivers file; anything wrong with it is a usage error (exit 2) naming file and line. */
export async function loadWaivers(file: string, rules: readonly LoadedRule[]): Promise<Waiver[]> {
  const { doc, lines, value } = parseYaml(await readInput(file, 'waivers'), file);
  // Every mistake at once, each with its line: a bad file is fixed in one pass.
  if (!validateWaivers(value))
    throw new MeshAuditError(schemaErrors(file, doc, lines, validateWaivers.errors ?? [], waiversSchema).join('\n'));
  const entries = (value as { waivers: Omit<Waiver, 'source'>[] }).waivers;
  const errors: string[] = [];
  const names = rules.flatMap((r) => [r.id, r.name]);
  const waivers = entries.map((w, i) => {
    const line = lineAt(doc, lines, `/waivers/${i}`);
    if (!names.includes(w.rule)) {
      const near = closest(w.rule, names);
      errors.push(
        `${file}:${line}: waiver names rule '${w.rule}', which no loaded pack has` +
          (distance(w.rule, near) <= 3 ? ` (did you mean '${near}'?)` : '') +
          ' (see `mesh-audit rules list`)',
      );
    }
    return { ...w, source: `${file}:${line}` };
  });
  if (errors.length > 0) throw new MeshAuditError(errors.join('\n'));
  return waivers;
}
