import { readFileSync } from 'node:fs';
import { example } from './cli.js';

/** The .deb's unit for `mesh-audit serve` (scripts/package/deb.ts installs it). */
export const SERVE_UNIT = example('serve', 'mesh-audit-serve.service');

/**
 * The NODE_OPTIONS the unit runs serve with ('' when it sets none): what a bench or test that means to measure serve
 * as the package runs it passes too, read from the unit so that the two cannot part.
 */
export function serveUnitNodeOptions(unit = readFileSync(SERVE_UNIT, 'utf8')): string {
  const lines = unit.split('\n').filter((l) => l.startsWith('Environment=NODE_OPTIONS='));
  if (lines.length > 1) throw new Error(`${SERVE_UNIT}: NODE_OPTIONS set ${lines.length} times`);
  return lines[0]?.slice('Environment=NODE_OPTIONS='.length).trim() ?? '';
}
