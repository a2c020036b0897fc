import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, posix } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';

/*
 * Read-only proof by system call trace (SECURITY.md, What it never does): the scanner is run under
 * `strace -f`, the trace is parsed, and every call that could change a file is checked against the
 * output folder. Also: a process runner that kills its whole process group on a time limit (a hung
 * scan must fail the test, not hang it), and a before/after picture of a host tree.
 */

/** Every system call that creates, changes or removes a file or its metadata (and exec, io_uring, chdir, bind). */
export const TRACED_SYSCALLS = [
  // the brief's set
  'open',
  'openat',
  'openat2',
  'creat',
  'rename',
  'renameat',
  'renameat2',
  'unlink',
  'unlinkat',
  'rmdir',
  'mkdir',
  'mkdirat',
  'chmod',
  'fchmod',
  'fchmodat',
  'chown',
  'fchown',
  'fchownat',
  'lchown',
  'link',
  'linkat',
  'symlink',
  'symlinkat',
  'truncate',
  'ftruncate',
  'utimensat',
  // other ways to create or change a file: device nodes/FIFOs, xattrs, times, space, inode flags, handles, unix sockets
  'mknod',
  'mknodat',
  'setxattr',
  'lsetxattr',
  'fsetxattr',
  'removexattr',
  'lremovexattr',
  'fremovexattr',
  'utime',
  'utimes',
  'futimesat',
  'fallocate',
  'ioctl',
  'open_by_handle_at',
  'bind',
  // no exec (SECURITY.md); io_uring would hide file calls from ptrace; chdir changes what a relative path means
  'execve',
  'execveat',
  'io_uring_setup',
  'chdir',
  'fchdir',
] as const;

const STRACE_CANDIDATES = ['/usr/bin/strace', '/bin/strace'];

/**
 * The strace binary, or null outside CI on a machine without it (those tests are then skipped).
 * In CI (`CI=true`) a missing strace is a failure: .ci/run must `apt-get install strace`.
 */
export function straceBinary(): string | null {
  const found = STRACE_CANDIDATES.find((p) => existsSync(p));
  if (found) return found;
  if (process.env['CI'] === 'true')
    throw new Error('CI=true but strace is not installed: .ci/run must apt-get install strace');
  return null;
}

export interface ProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
  /** Killed (with its whole process group) because it ran past the time limit. */
  timedOut: boolean;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  uid?: number;
  gid?: number;
  /** Told the started process's pid (for a resident command, stopped by the test with a signal). */
  onStart?: (pid: number) => void;
}

/** Runs a command in its own process group; past the time limit the whole group is SIGKILLed. */
export function runProcess(cmd: string, args: string[], options: RunOptions = {}): Promise<ProcessRun> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd ?? PACKAGE_ROOT,
      env: { ...process.env, ...(options.env ?? {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    });
    if (child.pid !== undefined) options.onStart?.(child.pid);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs ?? 60_000);
    const onExit = () => killGroup();
    process.once('exit', onExit);
    child.on('error', (err) => {
      clearTimeout(timer);
      process.off('exit', onExit);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', onExit);
      // Anything the command left in its group (it should leave nothing) goes with it.
      killGroup();
      resolvePromise({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut });
    });
  });
}

export interface TracedRun extends ProcessRun {
  trace: string;
  tracePath: string;
}

/**
 * Runs `node bin/mesh-audit.js ARGS` under `strace -f -qq -y -e trace=TRACED_SYSCALLS -o tracePath`.
 * `-y` prints the path behind every descriptor (AT_FDCWD included), so that relative and
 * descriptor-relative paths resolve exactly. UV_USE_IO_URING=0 keeps libuv from moving file calls
 * into io_uring, where ptrace cannot see them (and io_uring_setup is traced to prove it).
 */
export async function straceCli(
  strace: string,
  tracePath: string,
  args: string[],
  options: RunOptions = {},
): Promise<TracedRun> {
  const run = await runProcess(
    strace,
    [
      '-f',
      '-qq',
      '-y',
      '-s',
      '256',
      '-e',
      `trace=${TRACED_SYSCALLS.join(',')}`,
      '-o',
      tracePath,
      '--',
      process.execPath,
      join(PACKAGE_ROOT, 'bin', 'mesh-audit.js'),
      ...args,
    ],
    { ...options, env: { UV_USE_IO_URING: '0', ...(options.env ?? {}) } },
  );
  const trace = existsSync(tracePath) ? readFileSync(tracePath, 'utf8') : '';
  // No trace at all (ptrace refused, strace broken): say so, rather than pass on an empty trace.
  if (!/\bexecve\(/.test(trace))
    throw new Error(`strace traced nothing (exit ${run.code ?? run.signal}): ${run.stderr.slice(0, 2000)}`);
  return { ...run, trace, tracePath };
}

// ---------------------------------------------------------------------------------------------
// Parsing strace output.

export interface Syscall {
  /** 1-based line of the trace where the call started. */
  line: number;
  pid: number;
  name: string;
  /** Top-level arguments, as printed. */
  args: string[];
  /** What follows ` = `: `0`, `19</path>`, `-1 ENOENT (No such file or directory)`, `?`. */
  result: string;
  /** The call as one line (unfinished and resumed halves joined). */
  text: string;
}

export interface ParsedTrace {
  calls: Syscall[];
  /** Lines that are neither a call, a half of one, nor strace's own `+++`/`---` notices. */
  unparsed: { line: number; text: string }[];
}

const LINE = /^(\d+)\s+(.*)$/;
const RESUMED = /^<\.\.\. ([a-z0-9_]+) resumed>(.*)$/;
const UNFINISHED = ' <unfinished ...>';

/** Parses `strace -f -o` output, joining `<unfinished ...>` / `<... resumed>` halves by pid. */
export function parseTrace(text: string): ParsedTrace {
  const calls: Syscall[] = [];
  const unparsed: { line: number; text: string }[] = [];
  const pending = new Map<number, { line: number; head: string }>();
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return;
    const m = LINE.exec(raw);
    if (!m) {
      unparsed.push({ line: index + 1, text: raw });
      return;
    }
    const pid = Number(m[1]);
    let body = m[2]!;
    let line = index + 1;
    if (body.startsWith('+++ ') || body.startsWith('--- ')) return;
    const resumed = RESUMED.exec(body);
    if (resumed) {
      const head = pending.get(pid);
      if (!head) {
        unparsed.push({ line: index + 1, text: raw });
        return;
      }
      pending.delete(pid);
      body = head.head + resumed[2]!;
      line = head.line;
    }
    if (body.endsWith(UNFINISHED)) {
      pending.set(pid, { line, head: body.slice(0, -UNFINISHED.length) });
      return;
    }
    const call = parseCall(body);
    if (!call) {
      unparsed.push({ line: index + 1, text: raw });
      return;
    }
    calls.push({ line, pid, ...call, text: body });
  });
  // A call still unfinished at the end (its process was killed): keep it, with an unknown result.
  for (const [pid, head] of pending) {
    const call = parseCall(head.head + ') = ?');
    if (call) calls.push({ line: head.line, pid, ...call, text: head.head + ' <unfinished ...>' });
    else unparsed.push({ line: head.line, text: head.head });
  }
  calls.sort((a, b) => a.line - b.line);
  return { calls, unparsed };
}

/** `name(arg, arg, …) = result`, with strings, braces, brackets and `<path>` decorations kept whole. */
function parseCall(body: string): { name: string; args: string[]; result: string } | null {
  const open = body.indexOf('(');
  if (open <= 0) return null;
  const name = body.slice(0, open);
  if (!/^[a-z0-9_]+$/.test(name)) return null;
  const args: string[] = [];
  let depth = 0;
  let current = '';
  let i = open + 1;
  for (; i < body.length; i++) {
    const c = body[i]!;
    if (c === '"') {
      const end = endOfString(body, i);
      current += body.slice(i, end);
      i = end - 1;
      continue;
    }
    if (c === '<' && /(?:\d|AT_FDCWD)$/.test(current)) {
      // A descriptor's path (-y): read to its closing '>' (paths here never hold one).
      const end = body.indexOf('>', i);
      if (end < 0) return null;
      current += body.slice(i, end + 1);
      i = end;
      continue;
    }
    if (c === '(' || c === '{' || c === '[') depth++;
    if (c === ')' || c === '}' || c === ']') {
      if (depth === 0 && c === ')') break;
      depth--;
    }
    if (c === ',' && depth === 0) {
      args.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  if (i >= body.length) return null;
  if (current.trim() !== '' || args.length > 0) args.push(current.trim());
  const rest = body.slice(i + 1);
  const eq = /^\s*=\s*(.*)$/.exec(rest);
  if (!eq) return null;
  return { name, args, result: eq[1]!.trim() };
}

/** Index just past the closing quote of the string starting at `start` (and any `...` of a cut one). */
function endOfString(body: string, start: number): number {
  let i = start + 1;
  while (i < body.length) {
    if (body[i] === '\\') i += 2;
    else if (body[i] === '"') break;
    else i++;
  }
  i++;
  if (body.startsWith('...', i)) i += 3;
  return i;
}

/** The text of a printed string argument, unescaped; null for NULL or anything that is not a string. */
export function stringArg(arg: string | undefined): string | null {
  if (arg === undefined || !arg.startsWith('"')) return null;
  const end = endOfString(arg, 0);
  const inner = arg.slice(1, arg.endsWith('...') ? end - 4 : end - 1);
  const bytes: number[] = [];
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = inner[++i]!;
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, v: 11, f: 12, '\\': 92, '"': 34, "'": 39 };
    if (next in simple) bytes.push(simple[next]!);
    else if (next === 'x') {
      bytes.push(parseInt(inner.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (/[0-7]/.test(next)) {
      const oct = /^[0-7]{1,3}/.exec(inner.slice(i))![0];
      bytes.push(parseInt(oct, 8));
      i += oct.length - 1;
    } else bytes.push(...Buffer.from(next, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The path -y printed behind a descriptor (`19</a/b>`, `AT_FDCWD</cwd>`), without ` (deleted)`; null without one. */
export function fdPath(arg: string | undefined): string | null {
  const m = arg === undefined ? null : /^(?:-?\d+|AT_FDCWD)<(.*)>$/.exec(arg);
  if (!m) return null;
  return m[1]!.replace(/ \(deleted\)$/, '');
}

/** The path behind the descriptor a call returned (`= 19</path>`), or null. */
export function resultPath(call: Syscall): string | null {
  const m = /^(\d+)<(.*)>$/.exec(call.result);
  return m ? m[2]!.replace(/ \(deleted\)$/, '') : null;
}

export const succeeded = (call: Syscall): boolean => call.result !== '?' && !call.result.startsWith('-1');

// ---------------------------------------------------------------------------------------------
// What the calls touch.

const WRITE_FLAGS = ['O_WRONLY', 'O_RDWR', 'O_CREAT', 'O_TRUNC', 'O_APPEND', 'O_TMPFILE', '__O_TMPFILE'];
// O_WRONLY 1, O_RDWR 2, O_CREAT 0100, O_TRUNC 01000, O_APPEND 02000, __O_TMPFILE 020000000 (x86-64/arm64 values).
const WRITE_BITS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000 | 0o20000000;

/** Whether open flags as strace prints them ask for writing, creating, truncating or appending. */
export function isWriteMode(flags: string): boolean {
  const inner = /^\{.*?flags=([^,}]*)/.exec(flags)?.[1] ?? flags; // openat2's struct open_how
  return inner.split('|').some((token) => {
    const t = token.trim();
    if (WRITE_FLAGS.includes(t)) return true;
    if (/^(0x[0-9a-f]+|0[0-7]*|\d+)$/i.test(t))
      return (Number(t.startsWith('0') && !t.startsWith('0x') ? parseInt(t, 8) : Number(t)) & WRITE_BITS) !== 0;
    return false;
  });
}

export interface Touch {
  call: Syscall;
  /** What the call does to the file: `write-open`, `read-open`, `create`, `change`, `remove`, `rename`, … */
  effect: string;
  /** Absolute, normalized path; null when it cannot be known (then it counts as outside). */
  path: string | null;
}

/**
 * Every path each call names or reaches, resolved: relative paths against the working folder
 * (followed through chdir/fchdir) or the -y path of their directory descriptor; a descriptor's
 * own calls (fchmod, ftruncate, utimensat(fd, NULL)) by its -y path; a returned descriptor by its
 * -y path too (what an open really reached, magic links and symlinks included).
 */
export function touches(calls: readonly Syscall[], initialCwd: string): Touch[] {
  let cwd = initialCwd;
  const out: Touch[] = [];
  const abs = (base: string | null, p: string | null): string | null => {
    if (p === null) return null;
    if (p.startsWith('/')) return posix.normalize(p).replace(/(.)\/$/, '$1');
    if (base === null) return null;
    return posix.normalize(posix.join(base, p)).replace(/(.)\/$/, '$1');
  };
  /** A path relative to a dirfd argument (`AT_FDCWD</cwd>` or `5</dir>`); an empty path is the descriptor itself. */
  const at = (dirArg: string | undefined, pathArg: string | undefined): string | null => {
    const p = stringArg(pathArg);
    if (p === '' || pathArg === 'NULL') return abs(null, fdPath(dirArg));
    const base = dirArg?.startsWith('AT_FDCWD') ? (fdPath(dirArg) ?? cwd) : fdPath(dirArg);
    return abs(base, p);
  };
  const plain = (pathArg: string | undefined): string | null => abs(cwd, stringArg(pathArg));
  const fd = (arg: string | undefined): string | null => abs(null, fdPath(arg));
  const add = (call: Syscall, effect: string, path: string | null) => out.push({ call, effect, path });
  for (const call of calls) {
    const a = call.args;
    const opened = resultPath(call);
    switch (call.name) {
      case 'open':
      case 'openat':
      case 'openat2':
      case 'open_by_handle_at': {
        const flags = call.name === 'open' ? a[1] : a[2];
        const effect = isWriteMode(flags ?? '') ? 'write-open' : 'read-open';
        if (call.name === 'open') add(call, effect, plain(a[0]));
        else if (call.name !== 'open_by_handle_at') add(call, effect, at(a[0], a[1]));
        if (opened !== null || call.name === 'open_by_handle_at') add(call, effect, opened);
        break;
      }
      case 'creat':
        add(call, 'write-open', plain(a[0]));
        if (opened !== null) add(call, 'write-open', opened);
        break;
      case 'rename':
      case 'link':
        add(call, call.name, plain(a[0]));
        add(call, call.name, plain(a[1]));
        break;
      case 'renameat':
      case 'renameat2':
      case 'linkat':
        add(call, call.name.replace(/at2?$/, ''), at(a[0], a[1]));
        add(call, call.name.replace(/at2?$/, ''), at(a[2], a[3]));
        break;
      case 'symlink':
        add(call, 'create', plain(a[1])); // a[0] is the link's text, not a path written
        break;
      case 'symlinkat':
        add(call, 'create', at(a[1], a[2]));
        break;
      case 'unlink':
      case 'rmdir':
        add(call, 'remove', plain(a[0]));
        break;
      case 'unlinkat':
        add(call, 'remove', at(a[0], a[1]));
        break;
      case 'mkdir':
      case 'mknod':
        add(call, 'create', plain(a[0]));
        break;
      case 'mkdirat':
      case 'mknodat':
        add(call, 'create', at(a[0], a[1]));
        break;
      case 'chmod':
      case 'chown':
      case 'lchown':
      case 'truncate':
      case 'utime':
      case 'utimes':
      case 'setxattr':
      case 'lsetxattr':
      case 'removexattr':
      case 'lremovexattr':
        add(call, 'change', plain(a[0]));
        break;
      case 'fchmodat':
      case 'fchownat':
      case 'utimensat':
      case 'futimesat':
        add(call, 'change', at(a[0], a[1]));
        break;
      case 'fchmod':
      case 'fchown':
      case 'ftruncate':
      case 'fallocate':
      case 'fsetxattr':
      case 'fremovexattr':
        add(call, 'change', fd(a[0]));
        break;
      case 'ioctl':
        // Inode flags (chattr), project ids and versions change a file through any descriptor.
        if (/^FS_IOC_(?:SET|FSSET)/.test(a[1] ?? '')) add(call, 'change', fd(a[0]));
        break;
      case 'bind': {
        const sun = /sun_path=("(?:[^"\\]|\\.)*")/.exec(a[1] ?? '')?.[1];
        if (sun !== undefined) add(call, 'create', plain(sun)); // abstract sockets (sun_path=@"…") create no file
        break;
      }
      case 'execve':
      case 'execveat':
        add(call, 'exec', call.name === 'execve' ? plain(a[0]) : at(a[0], a[1]));
        break;
      case 'io_uring_setup':
        if (succeeded(call)) add(call, 'io_uring', null);
        break;
      case 'chdir':
        if (succeeded(call)) cwd = plain(a[0]) ?? cwd;
        break;
      case 'fchdir':
        if (succeeded(call)) cwd = fd(a[0]) ?? cwd;
        break;
      default:
        break;
    }
  }
  return out;
}

export interface Violation {
  line: number;
  why: string;
  text: string;
}

/** `p` is `dir` or below it (lexically; both absolute and normalized). */
export const isUnder = (p: string, dir: string): boolean => p === dir || p.startsWith(dir === '/' ? '/' : dir + '/');

/**
 * Everything in a trace of one scan that could have changed a file outside `outDir`: a write-mode
 * open (wherever the path or the descriptor it returned lies outside), any create, change, rename,
 * link or removal outside, any exec after the first (the scanner itself), io_uring in use, and any
 * line that cannot be parsed (an unparsed line might be a write). Failed attempts count too, with
 * one exception: mkdir of an existing ancestor of `outDir` (EEXIST), which is `mkdir -p` of the
 * output folder and changes nothing.
 * `allowWrites` lists exact paths whose write-mode opens are allowed (none unless a test shows why).
 */
export function writesOutside(
  trace: string,
  options: { outDir: string; cwd: string; allowWrites?: readonly string[] },
): Violation[] {
  const { calls, unparsed } = parseTrace(trace);
  const violations: Violation[] = unparsed.map(({ line, text }) => ({
    line,
    why: 'cannot parse this trace line',
    text,
  }));
  let execs = 0;
  for (const t of touches(calls, options.cwd)) {
    if (t.effect === 'read-open') continue;
    if (t.effect === 'exec') {
      if (++execs > 1 || !succeeded(t.call)) violations.push({ line: t.call.line, why: 'exec', text: t.call.text });
      continue;
    }
    if (t.effect === 'io_uring') {
      violations.push({
        line: t.call.line,
        why: 'io_uring in use: file calls made through it are not traced',
        text: t.call.text,
      });
      continue;
    }
    if (t.path === null) {
      violations.push({ line: t.call.line, why: `${t.effect} of a path that cannot be resolved`, text: t.call.text });
      continue;
    }
    if (isUnder(t.path, options.outDir)) continue;
    // The output folder's own `mkdir -p` (src/write/atomic.ts makeFolders) tries every ancestor from
    // `/` down; on an ancestor that already exists that mkdir fails with EEXIST and changes nothing.
    // Only that is let through: a mkdir that created an ancestor, or touched anything else, is not.
    if (t.call.name === 'mkdir' && t.call.result.startsWith('-1 EEXIST') && isUnder(options.outDir, t.path)) continue;
    if (t.effect === 'write-open' && options.allowWrites?.includes(t.path)) continue;
    violations.push({ line: t.call.line, why: `${t.effect} outside ${options.outDir}: ${t.path}`, text: t.call.text });
  }
  if (execs === 0) violations.push({ line: 0, why: 'no execve in the trace: not the trace of a run', text: '' });
  // A write-mode open whose path and returned descriptor both lie outside is one violation, not two.
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.line}\0${v.why}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Calls that named or reached (by a returned descriptor) `dir` or anything below it. */
export function callsReaching(trace: string, cwd: string, dir: string): Syscall[] {
  const { calls } = parseTrace(trace);
  const hits = new Set<Syscall>();
  for (const t of touches(calls, cwd)) if (t.path !== null && isUnder(t.path, dir)) hits.add(t.call);
  return [...hits];
}

// ---------------------------------------------------------------------------------------------
// A picture of a host tree, to compare before and after a scan.

/**
 * Every entry under `dir` (lstat, never followed): kind, mode, owner, size, inode, link count,
 * mtime and ctime in nanoseconds (ctime moves with any chmod, chown, rename, link, write or xattr
 * change, and cannot be set back), sha256 of regular files, the text of symlinks. FIFOs, sockets
 * and devices are never opened. `exclude` (absolute paths) are left out with all below them.
 */
export function treeState(dir: string, exclude: readonly string[] = []): string[] {
  const lines: string[] = [];
  const visit = (path: string): void => {
    if (exclude.some((x) => isUnder(path, x))) return;
    const st = lstatSync(path, { bigint: true });
    const kind = st.isFile()
      ? 'file'
      : st.isDirectory()
        ? 'dir'
        : st.isSymbolicLink()
          ? 'symlink'
          : st.isFIFO()
            ? 'fifo'
            : st.isSocket()
              ? 'socket'
              : st.isCharacterDevice()
                ? 'chardev'
                : st.isBlockDevice()
                  ? 'blockdev'
                  : 'other';
    let extra = '';
    if (kind === 'file') extra = 'sha256:' + createHash('sha256').update(readFileSync(path)).digest('hex');
    if (kind === 'symlink') extra = '-> ' + readlinkSync(path);
    lines.push(
      `${path} ${kind} mode=${(st.mode & 0o7777n).toString(8)} uid=${st.uid} gid=${st.gid} size=${kind === 'dir' ? '-' : st.size} ino=${st.ino} nlink=${st.nlink} mtime=${st.mtimeNs} ctime=${st.ctimeNs} ${extra}`.trimEnd(),
    );
    if (kind === 'dir') for (const name of readdirSync(path).sort()) visit(join(path, name));
  };
  visit(dir);
  return lines;
}

/** `which`-like: whether a command can be run (used for optional tools such as mkfifo, mknod). */
export function hasCommand(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}
