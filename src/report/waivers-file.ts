import { MeshAuditError } from '../errors.js';
import { lineAt, parseYaml } from '../policy/load.js';
import type { LoadedRule } from '../policy/types.js';
import { readInput } from '../read-input.js';
import { validatorFor } from '../validate.js';
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
  if (!validateWaivers(value)) {
    const e = validateWaivers.errors![0]!;
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params['additionalProperty'])}'` : '';
    throw new MeshAuditError(`${file}:${lineAt(doc, lines, e.instancePath)}: ${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${extra}`);
  }
  const entries = (value as { waivers: Omit<Waiver, 'source'>[] }).waivers;
  return entries.map((w, i) => {
    const line = lineAt(doc, lines, `/waivers/${i}`);
    if (!rules.some((r) => r.id === w.rule || r.name === w.rule)) {
      throw new MeshAuditError(`${file}:${line}: waiver names rule '${w.rule}', which no loaded pack has (see \`mesh-audit rules list\`)`);
    }
    return { ...w, source: `${file}:${line}` };
  });
}
