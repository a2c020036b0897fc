import { createRequire } from 'node:module';
import { MAX_DEPTH, pathTooDeep, yamlTooDeep } from '../input/depth.js';
import type { ComposeFacts, ComposeService } from '../snapshot/types.js';

/*
 * A Compose file, read for one thing: which env keys each service gives its containers inline
 * (`environment:`), so that such a key is not taken for one dropped from an env file (MA1004). Only key
 * names are kept; values never leave this module, and no error quotes the file's text (a value may be a
 * secret): an error says what and where (line, column) only. Read as docker-compose 1.29 reads it
 * (PyYAML: YAML 1.1, `<<` merges), with aliases bounded (ARCHITECTURE.md, Pitfalls: YAML).
 */

const require = createRequire(import.meta.url);
const yaml = (): typeof import('yaml') => require('yaml') as typeof import('yaml');

/** The services of a Compose file and the env keys each gives inline; an error (no value quoted) when it is not one. */
export function composeFacts(content: Uint8Array): ComposeFacts {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  let value: unknown;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    const doc = parseDocument(text, {
      version: '1.1',
      merge: true,
      uniqueKeys: false,
      prettyErrors: false,
      lineCounter: lines,
    });
    // Before its errors: a document deep enough overflows the composer's stack, reported where it gave up.
    const deep = yamlTooDeep(yaml(), doc);
    if (deep !== null) {
      const pos = lines.linePos(deep);
      return { error: `nested more than ${MAX_DEPTH} levels deep at line ${pos.line}, column ${pos.col}` };
    }
    const first = doc.errors[0];
    if (first) {
      const pos = lines.linePos(first.pos[0]);
      return { error: `not YAML Compose reads: ${first.code} at line ${pos.line}, column ${pos.col}` };
    }
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return {
      error:
        error instanceof RangeError
          ? 'nested too deeply to be read'
          : error instanceof TypeError
            ? 'not UTF-8 text'
            : 'not YAML Compose reads (too many aliases, or a bad one)',
    };
  }
  // Aliases and merges can nest what each stays shallow where it is written.
  if (pathTooDeep(value) !== null) return { error: `nested more than ${MAX_DEPTH} levels deep (through aliases)` };
  if (!isMap(value)) return { error: 'not a Compose file: its top level is not a mapping' };
  // File format 1 has the services at the top level; 2.x and 3.x under `services:`.
  const services = Object.hasOwn(value, 'services') ? value['services'] : 'version' in value ? {} : value;
  if (services === null || services === undefined) return { services: {} };
  if (!isMap(services)) return { error: 'not a Compose file: `services` is not a mapping' };
  const out: Record<string, ComposeService> = {};
  for (const [name, service] of Object.entries(services)) {
    if (service === null) {
      out[name] = { environment: [] };
      continue;
    }
    if (!isMap(service)) return { error: `service ${JSON.stringify(name)} is not a mapping` };
    const environment = environmentKeys(service['environment']);
    if (environment === null)
      return { error: `service ${JSON.stringify(name)}: \`environment\` is neither a list nor a mapping` };
    const ext = extendsOf(service['extends']);
    if (ext === null) return { error: `service ${JSON.stringify(name)}: \`extends\` names no service` };
    out[name] = { environment, ...(ext !== undefined ? { extends: ext } : {}) };
  }
  return { services: out };
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Map);
}

/** `environment:` as a list (`KEY=value`, `KEY`) or a mapping (`KEY: value`, `KEY:`): its keys, sorted, each once. */
function environmentKeys(env: unknown): string[] | null {
  if (env === undefined || env === null) return [];
  let keys: string[];
  if (Array.isArray(env)) keys = env.map((item) => String(item as string | number | boolean).split('=')[0]!);
  else if (isMap(env)) keys = Object.keys(env);
  else return null;
  return [...new Set(keys.filter((k) => k !== ''))].sort();
}

/** `extends: base` (file format 1 shorthand is not Compose's) or `extends: {service, file}`; null when malformed. */
function extendsOf(ext: unknown): ComposeService['extends'] | null | undefined {
  if (ext === undefined || ext === null) return undefined;
  if (typeof ext === 'string') return { service: ext };
  if (!isMap(ext) || typeof ext['service'] !== 'string') return null;
  return { service: ext['service'], ...(typeof ext['file'] === 'string' ? { file: ext['file'] } : {}) };
}
