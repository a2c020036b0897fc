/*
 * A `docker restart` is one change told as several events: die, stop, the network let go and taken again, then start
 * and restart, with 0.2-0.6 s between the stop and the start (the start sets the container's namespaces up). Read
 * 250 ms after the last of the first ones, the host is read twice for one restart: once with the container stopped,
 * once with it running. The same happens when a restart policy starts a container that died.
 *
 * So a container seen going down holds the next read back until it is up again (started, or gone for good), or until
 * `holdMs` after it went down: a container stopped for good is read `holdMs` late, never missed. The resident bounds
 * how long any read may wait (src/serve/resident.ts, maxSettleMs), so containers that keep going down cannot hold the
 * answer back.
 */

export class ComingBack {
  /** The containers seen going down and not yet up, each with the time (ms) until which it holds the read back. */
  private readonly down = new Map<string, number>();

  constructor(private readonly holdMs: number) {}

  /** An event said container `id` went down (died, stopped) or came up (started, or is gone for good). */
  told(id: string, going: 'down' | 'up', nowMs: number): void {
    if (going === 'down') this.down.set(id, nowMs + this.holdMs);
    else this.down.delete(id);
  }

  /** The engine's word on its containers is lost (the stream cut): no container is waited for. */
  forget(): void {
    this.down.clear();
  }

  /** Until when (ms) the next read waits for a container to come back; null: none is awaited. */
  until(nowMs: number): number | null {
    let latest: number | null = null;
    for (const [id, until] of this.down) {
      if (until <= nowMs) this.down.delete(id);
      else if (latest === null || until > latest) latest = until;
    }
    return latest;
  }
}
