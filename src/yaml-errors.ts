import type { ErrorObject } from 'ajv';
import type { Document, LineCounter } from 'yaml';
import { lineAt } from './policy/load.js';

/**
 * Every schema error of a YAML input as `file:line: where what`, in file order, one per place and
 * kind: a user fixes a bad file in one pass, not one error per run. (An `anyOf` repeats its branches'
 * errors; only its own is kept.)
 */
export function schemaErrors(file: string, doc: Document, lines: LineCounter, errors: readonly ErrorObject[]): string[] {
  const anyOfAt = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const seen = new Set<string>();
  const found: { line: number; text: string }[] = [];
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && anyOfAt.has(e.instancePath)) continue;
    const extra = e.keyword === 'additionalProperties' ? ` '${JSON.stringify(String(e.params['additionalProperty'])).slice(1, -1)}'` : ''; // escaped: a key can hold line breaks
    const line = lineAt(doc, lines, e.instancePath);
    const text = `${file}:${line}: ${e.instancePath || '(root)'} ${e.keyword === 'anyOf' ? 'matches none of its allowed forms' : (e.message ?? 'is invalid')}${extra}`;
    if (seen.has(text)) continue;
    seen.add(text);
    found.push({ line, text });
  }
  return found.sort((a, b) => a.line - b.line).map((f) => f.text);
}
