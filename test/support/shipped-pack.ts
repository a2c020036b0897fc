import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_POLICY, PACK_MANIFEST } from '../../src/policy/load.js';

/** The shipped pack's rule files (`MA1-drift.yaml`, …), by name. */
export const shippedRuleFiles = (): string[] =>
  readdirSync(DEFAULT_POLICY)
    .filter((n) => n.endsWith('.yaml') && !n.endsWith('.cases.yaml') && n !== PACK_MANIFEST)
    .sort();

/**
 * The shipped pack folder written as one pack file (its pack.yaml, then every rule file's rules): for
 * tests that edit the pack's text as one piece.
 */
export function shippedPackAsOneFile(): string {
  const rules = shippedRuleFiles().map((name) => {
    const text = readFileSync(join(DEFAULT_POLICY, name), 'utf8');
    return text.slice(text.indexOf('\nrules:\n') + '\nrules:\n'.length);
  });
  return `${readFileSync(join(DEFAULT_POLICY, PACK_MANIFEST), 'utf8')}\nrules:\n${rules.join('\n')}`;
}
