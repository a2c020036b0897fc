// The part of fs-ext (a native addon over flock(2)) that mesh-audit uses; the package ships no types.
declare module 'fs-ext' {
  export function flock(
    fd: number,
    flags: 'sh' | 'ex' | 'shnb' | 'exnb' | 'un',
    callback: (err: NodeJS.ErrnoException | null) => void,
  ): void;
  export function flockSync(fd: number, flags: 'sh' | 'ex' | 'shnb' | 'exnb' | 'un'): void;
}
