/**
 * Polls `check` every `everyMs` until it holds; an error naming `what` when it does not within `timeoutMs`. The one
 * polling loop of the tests (a loaded CI machine is slow, never wrong: the bound is generous, never an assertion).
 */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
