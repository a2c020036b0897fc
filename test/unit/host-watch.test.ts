import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { listenersDigest, MAX_WATCHED_FOLDERS, TOO_MANY_FOLDERS, watchFiles } from '../../src/collect/host-watch.js';
import { tempDir } from '../support/cli.js';

/*
 * What tells `serve` that a socket started or stopped listening (src/collect/host-watch.ts): the digest of the socket
 * tables' listening rows. Traffic (queues, timers, connections coming and going) must not move it, or serve would
 * read the host every few seconds on a busy machine; a new listener must.
 */
const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
const row = (sl: number, local: string, state: string, queues: string, inode: number) =>
  `   ${sl}: ${local} 00000000:0000 ${state} ${queues} 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`;

function rootWith(tcp: string): string {
  const root = tempDir('ma-watch-');
  mkdirSync(join(root, 'proc', '1', 'net'), { recursive: true });
  writeFileSync(join(root, 'proc', '1', 'net', 'tcp'), HEADER + tcp);
  for (const t of ['tcp6', 'udp', 'udp6']) writeFileSync(join(root, 'proc', '1', 'net', t), HEADER);
  return root;
}

test('the listeners digest moves with a new listener, not with traffic', () => {
  const sshd = row(0, '00000000:0016', '0A', '00000000:00000000', 1001);
  const base = listenersDigest(rootWith(sshd));
  // The same listener with a backlog, and an established connection come and gone: traffic.
  const busy =
    row(0, '00000000:0016', '0A', '00000000:00000003', 1001) + row(1, '0100007F:A1B2', '01', '00000000:00000000', 2002);
  assert.is(listenersDigest(rootWith(busy)), base, 'traffic does not move it');
  const more = sshd + row(1, '00000000:1F90', '0A', '00000000:00000000', 3003);
  assert.is.not(listenersDigest(rootWith(more)), base, 'a new listener on :8080 moves it');
  assert.is.not(listenersDigest(rootWith('')), base, 'a listener gone moves it');
});

test('a socket table that cannot be read is part of the digest (its return is a change too)', () => {
  const root = rootWith('');
  const readable = listenersDigest(root);
  const unreadable = listenersDigest(join(root, 'nothing-here'));
  assert.is.not(unreadable, readable);
});

test('a folder not there yet is watched through its nearest parent: its making is a change', async () => {
  const root = tempDir('ma-watch-');
  mkdirSync(join(root, 'etc'));
  let changes = 0;
  const w = watchFiles(root, { changed: () => changes++, unwatched: () => undefined });
  try {
    w.follow(['/etc/mesh/new/app.conf'], []);
    assert.ok(w.whole(), 'watched through its parent while it is not there: nothing to follow again yet');
    mkdirSync(join(root, 'etc', 'mesh'));
    for (let i = 0; i < 50 && changes === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(changes > 0, 'the folder made under the watched parent was seen');
    assert.not.ok(w.whole(), 'a watch fired: the next read follows the same files again');
    mkdirSync(join(root, 'etc', 'mesh', 'new'));
    assert.ok(w.follow(['/etc/mesh/new/app.conf'], []), 'the next read watches the folder itself (anew)');
    assert.ok(w.whole(), 'every folder watched as itself: following the same files again would change nothing');
    changes = 0;
    writeFileSync(join(root, 'etc', 'mesh', 'new', 'app.conf'), 'A=1\n');
    for (let i = 0; i < 50 && changes === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(changes > 0, 'the file written there was seen');
  } finally {
    w.stop();
  }
});

test('folder watches: a file written in a watched folder is a change; past the bound, what is not watched is said while it holds', async () => {
  const root = tempDir('ma-watch-');
  const folders = Array.from({ length: MAX_WATCHED_FOLDERS + 1 }, (_, i) => `/f${i}`);
  for (const f of folders) mkdirSync(join(root, f));
  let changes = 0;
  const said: (readonly string[])[] = [];
  const w = watchFiles(root, { changed: () => changes++, unwatched: (c) => said.push(c) });
  try {
    assert.ok(w.follow(['/f0/app.env'], []), 'a folder watched anew: what changed while it was read was not heard');
    assert.equal(said.at(-1), [], 'everything watched');
    assert.not.ok(w.follow(['/f0/app.env'], []), 'the same folders: nothing new');
    writeFileSync(join(root, 'f0', 'app.env'), 'A=1\n');
    for (let i = 0; i < 50 && changes === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(changes > 0, 'the write was seen');
    w.follow([], folders);
    assert.equal(said.at(-1), [TOO_MANY_FOLDERS], 'past the bound: said');
    assert.not.ok(w.whole(), 'past the bound: not whole');
    w.follow(['/f0/app.env'], []);
    assert.equal(said.at(-1), [], 'back under it: no longer said');
  } finally {
    w.stop();
  }
});

test.run();
