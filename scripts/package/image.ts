/*
 * The container image's root file system, as a tar for `docker import` (packaging/image/build-image.sh):
 * the single executable and the shared libraries it links, nothing else — no shell, no package
 * manager. There is no registry to pull a base image from, and the scanner needs none.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The libraries `ldd` finds for `binary`, by the absolute path the loader will look for. */
export function sharedLibraries(binary: string): string[] {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
  }
  return libs;
}

export function buildRootfs(binary: string, work: string, output: string): void {
  const tree = join(work, 'rootfs');
  rmSync(tree, { recursive: true, force: true });
  const put = (path: string, source: string, mode: number) => {
    const target = join(tree, path);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(source, target);
    chmodSync(target, mode);
  };
  put('usr/bin/mesh-audit', binary, 0o755);
  for (const lib of sharedLibraries(binary)) put(lib.slice(1), lib, 0o755);
  // Node asks the user database for a home folder when HOME is unset (the Docker config is looked for there).
  mkdirSync(join(tree, 'etc'), { recursive: true });
  writeFileSync(
    join(tree, 'etc', 'passwd'),
    'root:x:0:0:root:/root:/nonexistent\nnobody:x:65534:65534:nobody:/nonexistent:/nonexistent\n',
  );
  writeFileSync(join(tree, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
  for (const dir of ['root', 'tmp', 'host', 'etc/mesh-audit', 'var/lib/mesh-audit', 'var/lib/prometheus/node-exporter'])
    mkdirSync(join(tree, dir), { recursive: true });
  chmodSync(join(tree, 'tmp'), 0o1777);
  chmodSync(join(tree, 'root'), 0o700);
  chmodSync(join(tree, 'var', 'lib', 'mesh-audit'), 0o750);
  execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '--sort=name', '-C', tree, '-cf', output, '.']);
}
