/*
 * The Debian package, built with dpkg-deb from a staging tree: the single executable as
 * /usr/bin/mesh-audit, the shipped pack and the Prometheus alerting rules (with their promtool test)
 * under /usr/share/mesh-audit, the systemd units of
 * examples/nightly (not enabled), the nightly config as the conffile /etc/mesh-audit/config.yaml, the
 * man page and completions when the build has them, and /var/lib/mesh-audit (0750) for the reports.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface DebInput {
  root: string;
  version: string;
  commit: string;
  binary: string;
  work: string;
  outDir: string;
}

/** Shared libraries the executable links (ldd of node): the packages that hold them. */
const DEPENDS = 'libc6 (>= 2.28), libgcc-s1 (>= 3.0), libstdc++6 (>= 9)';

/** Completion scripts by shell, where Debian's shells look for them (issue 18's `completion` command). */
const COMPLETIONS = [
  { shell: 'bash', path: 'usr/share/bash-completion/completions/mesh-audit' },
  { shell: 'zsh', path: 'usr/share/zsh/vendor-completions/_mesh-audit' },
  { shell: 'fish', path: 'usr/share/fish/vendor_completions.d/mesh-audit.fish' },
];

export function debName(version: string): string {
  return `mesh-audit_${version}_amd64.deb`;
}

export function buildDeb(input: DebInput): string {
  const tree = join(input.work, 'deb');
  rmSync(tree, { recursive: true, force: true });
  const put = (path: string, content: string | Buffer, mode = 0o644) => {
    const target = join(tree, path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, content);
    chmodSync(target, mode);
  };
  const from = (path: string) => readFileSync(join(input.root, path));
  const gz = (data: Buffer | string) => gzipSync(data, { level: 9 }); // no name nor time in the header: reproducible

  mkdirSync(join(tree, 'usr', 'bin'), { recursive: true });
  copyFileSync(input.binary, join(tree, 'usr', 'bin', 'mesh-audit'));
  chmodSync(join(tree, 'usr', 'bin', 'mesh-audit'), 0o755);

  // The schemas, and each pack folder whole (its rule files and their cases).
  for (const entry of readdirSync(join(input.root, 'policies'), { recursive: true, withFileTypes: true }))
    if (entry.isFile()) {
      const path = relative(input.root, join(entry.parentPath, entry.name));
      put(`usr/share/mesh-audit/${path}`, from(path));
    }
  // The rules the nightly unit's --prom-file feeds, and their test: `promtool test rules` runs it in place.
  for (const name of ['mesh-audit.rules.yml', 'mesh-audit.rules.test.yml'])
    put(`usr/share/mesh-audit/alerting/${name}`, from(`examples/alerting/${name}`));
  put('lib/systemd/system/mesh-audit.service', from('examples/nightly/mesh-audit.service'));
  put('lib/systemd/system/mesh-audit.timer', from('examples/nightly/mesh-audit.timer'));
  put('lib/systemd/system/mesh-audit-serve.service', from('examples/serve/mesh-audit-serve.service'));
  put('etc/mesh-audit/config.yaml', from('examples/nightly/config.yaml'));
  mkdirSync(join(tree, 'var', 'lib', 'mesh-audit'), { recursive: true });
  chmodSync(join(tree, 'var', 'lib', 'mesh-audit'), 0o750);

  put('usr/share/doc/mesh-audit/copyright', from('packaging/deb/copyright'));
  put('usr/share/lintian/overrides/mesh-audit', from('packaging/deb/lintian-overrides'));
  put('usr/share/doc/mesh-audit/changelog.gz', gz(changelog(input)));
  if (existsSync(join(input.root, 'man', 'mesh-audit.1')))
    put('usr/share/man/man1/mesh-audit.1.gz', gz(from('man/mesh-audit.1')));
  for (const c of COMPLETIONS) {
    // Asked of the program itself: a build without the `completion` command ships none.
    const r = spawnSync(input.binary, ['completion', c.shell], { encoding: 'utf8', env: {} });
    if (r.status === 0 && r.stdout.trim() !== '') put(c.path, r.stdout);
  }

  const control = readFileSync(join(input.root, 'packaging', 'deb', 'control'), 'utf8')
    .replace('@VERSION@', input.version)
    .replace('@DEPENDS@', DEPENDS)
    .replace('@INSTALLED_SIZE@', String(Math.ceil(treeBytes(tree) / 1024)));
  put('DEBIAN/control', control);
  put('DEBIAN/conffiles', from('packaging/deb/conffiles'));
  put('DEBIAN/postinst', from('packaging/deb/postinst'), 0o755);
  put('DEBIAN/postrm', from('packaging/deb/postrm'), 0o755);
  for (const dir of walkDirs(tree)) if (!dir.endsWith(join('var', 'lib', 'mesh-audit'))) chmodSync(dir, 0o755);

  const deb = join(input.outDir, debName(input.version));
  // gzip: xz took three minutes over the ~100 MB executable on CI's small machine, gzip seconds.
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z6', '--build', tree, deb], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return deb;
}

function changelog(input: DebInput): string {
  const date = new Date().toUTCString().replace('GMT', '+0000');
  return `mesh-audit (${input.version}) unstable; urgency=medium\n\n  * Built from commit ${input.commit}.\n\n -- mesh-audit maintainers <mesh-audit@example.org>  ${date}\n`;
}

function treeBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    if (name === 'DEBIAN') continue;
    const path = join(dir, name);
    const info = statSync(path);
    total += info.isDirectory() ? treeBytes(path) : info.size;
  }
  return total;
}

function walkDirs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [join(dir, e.name), ...walkDirs(join(dir, e.name))]);
}
