import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import type { Document, LineCounter } from 'yaml';
import { MeshAuditError } from '../errors.js';
import { didYouMean } from '../text/suggest.js';
import { MAX_DEPTH, pathTooDeep, pointerOf, yamlTooDeep } from './depth.js';

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
    const why =
      err instanceof RangeError ? 'nested too deeply to be read' : String((err as Error).message).split('\n')[0];
    throw new MeshAuditError(`${file}:1: YAML error: ${why}`);
  }
  // Measured before its errors: a document deep enough overflows the composer's stack, which it reports
  // as an error where it gave up; the depth is said where the limit was passed.
  const deep = yamlTooDeep(yaml(), doc);
  if (deep !== null) {
    const pos = lines.linePos(deep);
    throw new MeshAuditError(`${file}:${pos.line}:${pos.col}: nested more than ${MAX_DEPTH} levels deep`);
  }
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    throw new MeshAuditError(
      `${file}:${pos ? `${pos.line}:${pos.col}` : '1'}: YAML error: ` +
        first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''),
    );
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
  // Aliases can nest what each stays shallow where it is written.
  const path = pathTooDeep(value);
  if (path !== null)
    throw new MeshAuditError(
      `${file}:${lineAt(doc, lines, pointerOf(path))}: nested more than ${MAX_DEPTH} levels deep (through aliases)`,
    );
  return { doc, lines, value };
}

/** Line of the YAML node at a JSON Pointer, or of its nearest parent that exists. */
const pathOf = (pointer: string): (string | number)[] =>
  pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));

export function lineAt(doc: Document, lines: LineCounter, pointer: string): number {
  const path = pathOf(pointer);
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true);
    if (yaml().isNode(node) && node.range) return lines.linePos(node.range[0]).line;
  }
  return 1;
}

/** The schema object at a JSON Pointer fragment of Ajv's `schemaPath` (`#/properties/labels`), when local. */
export function schemaAt(schema: object | undefined, schemaPath: string): Record<string, unknown> | undefined {
  if (schema === undefined || !schemaPath.startsWith('#')) return undefined;
  let node: unknown = schema;
  for (const part of schemaPath.slice(1).split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return typeof node === 'object' && node !== null ? (node as Record<string, unknown>) : undefined;
}

const pointerPart = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Line of the key at a JSON Pointer (`/exclude`: the line `exclude:` is on, not its list's first item); else lineAt.
 */
export function keyLineAt(doc: Document, lines: LineCounter, pointer: string): number {
  const path = pathOf(pointer);
  const key = path.at(-1);
  const parent = path.length > 0 ? (path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true)) : undefined;
  if (key !== undefined && yaml().isMap(parent)) {
    const pair = parent.items.find((p) => (yaml().isScalar(p.key) ? p.key.value : p.key) === key);
    if (pair && yaml().isNode(pair.key) && pair.key.range) return lines.linePos(pair.key.range[0]).line;
  }
  return lineAt(doc, lines, pointer);
}

/**
 * Every schema error of a YAML input as `file:line: where what`, in file order, one per place and
 * kind: a user fixes a bad file in one pass, not one error per run. (An `anyOf` repeats its branches'
 * errors; only its own is kept.) With the schema given, a key it does not know is shown on its own
 * line with the nearest known key, and a value outside an enum with the nearest allowed one.
 */
export function schemaErrors(
  file: string,
  doc: Document,
  lines: LineCounter,
  errors: readonly ErrorObject[],
  schema?: object,
): string[] {
  const anyOfAt = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const seen = new Set<string>();
  const found: { line: number; text: string }[] = [];
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && anyOfAt.has(e.instancePath)) continue;
    let line = lineAt(doc, lines, e.instancePath);
    let what = e.keyword === 'anyOf' ? 'matches none of its allowed forms' : (e.message ?? 'is invalid');
    if (e.keyword === 'additionalProperties') {
      const key = String(e.params['additionalProperty']);
      line = keyLineAt(doc, lines, `${e.instancePath}/${pointerPart(key)}`);
      const known = Object.keys(
        (schemaAt(schema, e.schemaPath.replace(/\/additionalProperties$/, ''))?.['properties'] as object | undefined) ??
          {},
      );
      // Escaped: a key can hold line breaks.
      what += ` '${JSON.stringify(key).slice(1, -1)}'${didYouMean(key, known)}`;
    } else if (e.keyword === 'pattern' && e.params['pattern'] === '^/') {
      // A path a job reads from any folder: said whole, with the one it would be beside this file (issue 47).
      const value = doc.getIn(pathOf(e.instancePath));
      const text = JSON.stringify(String(value)).slice(1, -1);
      what =
        `must be an absolute path, not '${text}' (a job runs from any folder): beside this file it would be ` +
        JSON.stringify(resolve(dirname(resolve(file)), String(value))).slice(1, -1);
    } else if (e.keyword === 'format' && e.params['format'] === 'date') {
      what = `${what} (a date is written YYYY-MM-DD)`;
    } else if (e.keyword === 'enum') {
      const allowed = (e.params['allowedValues'] as unknown[]).map(String);
      const value = doc.getIn(pathOf(e.instancePath));
      const shown =
        typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
          ? ` '${JSON.stringify(String(value)).slice(1, -1)}'`
          : '';
      what =
        `must be one of ${allowed.join(', ')}, ` +
        `not${shown || ' this'}${typeof value === 'string' ? didYouMean(value, allowed) : ''}`;
    }
    const text = `${file}:${line}: ${e.instancePath || '(root)'} ${what}`;
    if (seen.has(text)) continue;
    seen.add(text);
    found.push({ line, text });
  }
  return found.sort((a, b) => a.line - b.line).map((f) => f.text);
}
