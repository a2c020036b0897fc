import { getSystemErrorMap } from 'node:util';

/** `ENOSPC (no space left on device)`: the OS error of a failed write, as a person reads it. */
export function osErrorText(error: unknown): string {
  const e = error as { code?: unknown; errno?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : 'error';
  const described = typeof e?.errno === 'number' ? getSystemErrorMap().get(e.errno)?.[1] : undefined;
  return described ? `${code} (${described})` : code;
}
