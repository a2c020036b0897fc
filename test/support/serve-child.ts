import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';

/** `mesh-audit serve` as a child process of the test, asked over its unix socket; killed when the test process ends. */
export interface ServeChild {
  child: ChildProcess;
  socket: string;
  stderr(): string;
  /** GET `path` on the socket: its status code and body (code 0 when nothing answered). */
  get(path: string): Promise<{ code: number; body: string }>;
  /** Polls `path` every 100 ms until `check` holds of its answer; the answer, or an error naming `what`. */
  until(
    what: string,
    path: string,
    check: (answer: { code: number; body: string }) => boolean,
    timeoutMs: number,
  ): Promise<{ code: number; body: string; ms: number }>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export function getOn(socket: string, path: string, method = 'GET'): Promise<{ code: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, path, method, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ code: 0, body: '' }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ code: 0, body: '' }));
    req.end();
  });
}

export function startServe(args: string[], socket: string, env: NodeJS.ProcessEnv = {}): ServeChild {
  const child = spawn(
    process.execPath,
    [join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'), 'serve', '--socket', socket, ...args],
    {
      cwd: PACKAGE_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  const get = (path: string) => getOn(socket, path);
  return {
    child,
    socket,
    stderr: () => stderr,
    get,
    async until(what, path, check, timeoutMs) {
      const start = Date.now();
      let last = { code: 0, body: '' };
      while (Date.now() - start <= timeoutMs) {
        last = await get(path);
        if (check(last)) return { ...last, ms: Date.now() - start };
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `${what}: not within ${timeoutMs} ms; last answer ${last.code} ${last.body.slice(0, 2000)}\nserve's stderr: ${stderr}`,
      );
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
