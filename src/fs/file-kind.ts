/** What a path is on disk, as a snapshot records it (`missing`: nothing there). */
export type FileKind =
  | 'file'
  | 'directory'
  | 'symlink'
  | 'fifo'
  | 'socket'
  | 'block-device'
  | 'char-device'
  | 'missing'
  | 'unknown';

/** The methods fs.Stats and fs.BigIntStats share that tell a file's kind. */
interface KindOfStats {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isBlockDevice(): boolean;
  isCharacterDevice(): boolean;
}

/** The kind of a stat result (lstat: a symlink is a symlink; fstat: what it opened). */
export function kindOf(stat: KindOfStats): FileKind {
  if (stat.isFile()) return 'file';
  if (stat.isDirectory()) return 'directory';
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isBlockDevice()) return 'block-device';
  if (stat.isCharacterDevice()) return 'char-device';
  return 'unknown';
}

const IN_WORDS: Record<FileKind, string> = {
  file: 'a regular file',
  directory: 'a folder',
  symlink: 'a symlink',
  fifo: 'a FIFO',
  socket: 'a socket',
  'block-device': 'a block device',
  'char-device': 'a character device',
  missing: 'missing',
  unknown: 'of an unknown kind',
};

/** A kind in a message: `a folder`, `a FIFO`. */
export const kindInWords = (kind: FileKind): string => IN_WORDS[kind];
