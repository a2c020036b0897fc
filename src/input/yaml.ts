import { createRequire } from 'node:module';
import type { ErrorObject } from 'ajv';
import type { Document, LineCounter } from 'yaml';
import { MeshAuditError } from '../errors.js';

/*
 * YAML read with locations, for every YAML file mesh-audit reads (policy packs and their cases,
 * the config file, waivers): one set of parser options (YAML 1.2, bounded aliases, unique keys) and
 * every error as `file:line`.
 */

const require = createRequire(import.meta.url);
/** The yaml package, loaded when a YAML text is parsed (the bundled pack usually is not: src/policy/load.ts). */
const yaml = (): typeof import('yaml') => require('yaml') as typeof import('yaml');

/** A YAML input is YAML 1.2 with bounded aliases and unique keys (see ARCHITECTURE.md, Pitfalls: YAML). */
export function parseYaml(text: string, file: string): { doc: Document; lines: LineCounter; value: unknown } {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, merge: false, prettyErrors: true });
  } catch (err) {
    // The parser recurses once per nesting level: deep enough, it overflows the stack itself instead
    // of reporting a YAML error (thousands of nested block mappings did; flow style is reported).
    const why = err instanceof RangeError ? 'nested too deeply to be read' : String((err as Error).message).split('\n')[0];
    throw new MeshAuditError(`${file}:1: YAML error: ${why}`);
  }
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    throw new MeshAuditError(`${file}:${pos ? `${pos.line}:${pos.col}` : '1'}: YAML error: ${first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  if (doc.directives?.yaml.explicit && doc.directives.yaml.version !== '1.2') {
    throw new MeshAuditError(`${file}:1: only YAML 1.2 is accepted (a %YAML 1.1 directive changes what booleans mean)`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    // The yaml package refuses alias bombs (and similar) here, after parsing.
    throw new MeshAuditError(`${file}:1: YAML error: ${(err as Error).message}`);
  }
  return { doc, lines, value };
}

/** Line of the YAML node at a JSON Pointer, or of its nearest parent that exists. */
export function lineAt(doc: Document, lines: LineCounter, pointer: string): number {
  const path = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true);
    if (yaml().isNode(node) && node.range) return lines.linePos(node.range[0]).line;
  }
  return 1;
}

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
