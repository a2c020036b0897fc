import { resolvePath } from './logic.js';

/** `{name}` or `{dotted.path}`; `{{` and `}}` stand for literal braces. */
const PLACEHOLDER = /\{\{|\}\}|\{([a-zA-Z_][a-zA-Z0-9_.-]*)\}/g;

export function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
}

/**
 * Fills a message template. A secret-safe value prints as its shape, never its digest;
 * lists print as comma-separated text; missing values print as `-`.
 */
export function renderTemplate(template: string, data: unknown): string {
  return template.replace(PLACEHOLDER, (whole, name: string | undefined) => {
    if (name === undefined) return whole[0]!;
    return display(resolvePath(data, name.split('.')));
  });
}

function display(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(display).join(', ');
  if (typeof value === 'object') {
    if (Object.hasOwn(value, 'shape')) return String((value as { shape: unknown }).shape);
    // Field by field, so that a safe value nested anywhere still prints as its shape.
    return Object.entries(value).map(([k, v]) => `${k}=${display(v)}`).join(', ');
  }
  return String(value);
}
