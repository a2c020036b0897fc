import { test } from 'uvu';
import * as assert from 'uvu/assert';

/**
 * Tests that need root (chown to another user, dropping to nobody, strace of a root scan). Outside CI,
 * not root, they are skipped and uvu counts them as skipped; in CI (run as root by .ci/run) they run,
 * and fail when root is missing: they never pass by returning early.
 */
export const isRoot = process.getuid?.() === 0;
export const ci = process.env['CI'] === 'true';
export const rootTest = isRoot || ci ? test : test.skip;

/** The first line of a root-only test: fails it when the process is not root. */
export function requireRoot(): void {
  assert.ok(isRoot, 'this test needs root (CI runs it as root)');
}
