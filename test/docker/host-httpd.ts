/** A host process listening on a port for the live tests: busybox httpd, never connected to. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/cli.js';

/** The ports of /proc/net/tcp in LISTEN (read, never connected to). */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && f[1] !== undefined) ports.add(parseInt(f[1].split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/** busybox httpd on the host, as a process named `httpd` (a link to busybox, as a package installs it). */
export function hostHttpd(address: string, port: number): ChildProcess {
  const dir = tempDir('ma-host-httpd-', '/tmp');
  const link = join(dir, 'httpd');
  symlinkSync('/bin/busybox', link);
  const child = spawn(link, ['-f', '-p', `${address}:${port}`, '-h', dir], { stdio: 'ignore' });
  process.once('exit', () => child.kill('SIGKILL'));
  for (let waited = 0; !listeningPorts().has(port); waited += 50) {
    if (child.exitCode !== null || waited > 20_000) throw new Error(`httpd on ${address}:${port} did not listen`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  return child;
}
