/**
 * The default bound on the files one scan records. Its own module: the settings (config.ts) need the
 * number on every start, not the file collector with its worker pool.
 */
export const DEFAULT_MAX_FILES = 20_000;
