import { pathResolver } from './logic.js';

/** `{name}` or `{dotted.path}`; `{{` and `}}` stand for literal braces. */
const PLACEHOLDER = /\{\{|\}\}|\{([a-zA-Z_][a-zA-Z0-9_.-]*)\}/g;

export function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
}

/**
 * Fills a message template. A secret-safe value prints as its shape, never its digest;
 * lists print as comma-separated text; missing values print as `-`. `unfilled`, when given, collects
 * the placeholders that had no value (null or absent): `rules test` fails a case on them.
 */
export function renderTemplate(template: string, data: unknown, unfilled?: string[]): string {
  let parts = compiledTemplates.get(template);
  if (parts === undefined) {
    parts = compileTemplate(template);
    if (compiledTemplates.size < 1000) compiledTemplates.set(template, parts);
  }
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const value = part.get(data);
    if (unfilled !== undefined && (value === undefined || value === null)) unfilled.push(part.name);
    out += display(value);
  }
  return out;
}

type TemplatePart = string | { name: string; get: (data: unknown) => unknown };

/** Templates split once into literal text and path lookups: a rule's message is filled for every finding. */
const compiledTemplates = new Map<string, TemplatePart[]>();
function compileTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let at = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (m.index > at) parts.push(template.slice(at, m.index));
    parts.push(m[1] === undefined ? m[0][0]! : { name: m[1], get: pathResolver(m[1].split('.')) });
    at = m.index + m[0].length;
  }
  if (at < template.length) parts.push(template.slice(at));
  return parts;
}

function display(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(display).join(', ');
  if (typeof value === 'object') {
    if (Object.hasOwn(value, 'shape')) return String((value as { shape: unknown }).shape);
    // Field by field, so that a safe value nested anywhere still prints as its shape.
    return Object.entries(value)
      .map(([k, v]) => `${k}=${display(v)}`)
      .join(', ');
  }
  return String(value);
}
