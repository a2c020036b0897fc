import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_SYMLINKS, resolveHostPath } from '../../src/collect/host-path.js';
import { tempDir } from '../support/cli.js';

/*
 * src/collect/host-path.ts: a `service` entry's executable path resolved as the host resolves it, under a root (the
 * scanner in a container reads the host at --root): a merged-/usr host's absolute `/bin -> /usr/bin` stays in the
 * host's tree, `..` never climbs above it, a loop or a chain past MAX_SYMLINKS is not known (never missing).
 */
function mergedUsrHost(): string {
  const root = tempDir('ma-host-path-');
  mkdirSync(join(root, 'usr', 'bin'), { recursive: true });
  writeFileSync(join(root, 'usr', 'bin', 'busybox'), '');
  symlinkSync('/usr/bin', join(root, 'bin')); // absolute: the host's /usr/bin, not this machine's
  symlinkSync('usr/bin', join(root, 'sbin'));
  symlinkSync('../../../../../usr/bin', join(root, 'usr', 'up'));
  symlinkSync('loop', join(root, 'loop'));
  return root;
}

test('a path through a symlinked folder resolves to the file the host has, under the root', () => {
  const root = mergedUsrHost();
  for (const path of ['/bin/busybox', '/sbin/busybox', '/usr/up/busybox', '/usr/bin/busybox', '/bin/../bin/busybox'])
    assert.equal(resolveHostPath(root, path), { state: 'resolved', path: '/usr/bin/busybox' }, path);
});

test('nothing there is missing; a loop and a chain past the bound are not known', () => {
  const root = mergedUsrHost();
  assert.equal(resolveHostPath(root, '/bin/nothing'), { state: 'missing' });
  assert.equal(resolveHostPath(root, '/usr/bin/busybox/x'), { state: 'missing' });
  assert.is(resolveHostPath(root, '/loop/busybox').state, 'unread');
  for (let i = 0; i <= MAX_SYMLINKS; i++)
    symlinkSync(i === MAX_SYMLINKS ? '/usr/bin' : `/c${i + 1}`, join(root, `c${i}`));
  assert.is(resolveHostPath(root, '/c0/busybox').state, 'unread', 'one link past the bound');
  assert.equal(resolveHostPath(root, '/c1/busybox'), { state: 'resolved', path: '/usr/bin/busybox' }, 'at the bound');
});

test.run();
