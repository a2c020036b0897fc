import type { CommandContext } from './context.js';

/** A scan shorter than this shows no progress line at all (a nightly run on a small host prints nothing). */
export const PROGRESS_AFTER_MS = 1500;

/**
 * What a live scan tells while it reads: on a terminal, one line rewritten in place, and only once the
 * scan has taken longer than PROGRESS_AFTER_MS (`$MESH_AUDIT_PROGRESS_AFTER_MS` sets another); with
 * --verbose, each step on its own line with the time since the scan began; never under --quiet, and
 * never when stderr is not a terminal (cron, pipes) unless --verbose.
 */
export function progressLine(ctx: CommandContext): { step(message: string): void; done(summary?: string): void } {
  const started = Date.now();
  const after = Number((ctx.env ?? process.env)['MESH_AUDIT_PROGRESS_AFTER_MS'] ?? PROGRESS_AFTER_MS);
  const live = ctx.interactive && !ctx.quiet && !ctx.verbose;
  let current: string | undefined;
  let shown = false;
  const draw = () => {
    if (current === undefined) return;
    shown = true;
    ctx.stderr(`\r\x1b[Kmesh-audit: ${current}…`);
  };
  const timer = live ? setTimeout(draw, Math.max(0, after)) : undefined;
  timer?.unref();
  return {
    step(message) {
      if (ctx.verbose && !ctx.quiet) ctx.stderr(`mesh-audit: [${Date.now() - started} ms] ${message}\n`);
      current = message;
      if (shown || (live && after <= 0)) draw();
    },
    done(summary) {
      if (timer) clearTimeout(timer);
      if (shown) ctx.stderr('\r\x1b[K');
      if (summary !== undefined && ctx.verbose && !ctx.quiet)
        ctx.stderr(`mesh-audit: [${Date.now() - started} ms] ${summary}\n`);
    },
  };
}
