/** Code-unit order: the same on every machine, unlike localeCompare. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
