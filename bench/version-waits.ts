import type { SentEvent } from "./send-order-traffic.ts";

/**
 * Freshness of one observer (the replica's commit, a feed reader): each acknowledged event waits until the
 * observer has seen its order at that version or newer; the wait from the 2xx is the event's freshness.
 */
export class VersionWaits {
  /** ms from each event's 2xx to the observer seeing its version (0 when it had already). */
  readonly freshness: number[] = [];
  /** [ackAt, freshness] per event, for per-second windows. */
  readonly byAck: [number, number][] = [];
  private readonly seen = new Map<string, number>();
  private readonly waiting = new Map<string, { version: number; ackAt: number }[]>();

  /** The observer saw `orderId` at `version` at `at` (performance.now()). */
  onVersion(orderId: string, version: number, at: number): void {
    if ((this.seen.get(orderId) ?? 0) < version) this.seen.set(orderId, version);
    const list = this.waiting.get(orderId);
    if (!list) return;
    const rest = list.filter((w) => {
      if (w.version > version) return true;
      this.freshness.push(at - w.ackAt);
      this.byAck.push([w.ackAt, at - w.ackAt]);
      return false;
    });
    if (rest.length > 0) this.waiting.set(orderId, rest);
    else this.waiting.delete(orderId);
  }

  /** A measured event was acknowledged: start its wait (none when its version was already seen). */
  onAck(e: SentEvent): void {
    if ((this.seen.get(e.orderId) ?? 0) >= e.version) this.freshness.push(0);
    else
      this.waiting.set(e.orderId, [
        ...(this.waiting.get(e.orderId) ?? []),
        { version: e.version, ackAt: e.ackAt },
      ]);
  }

  /** Orders with an event still waiting. */
  get waitingOrders(): number {
    return this.waiting.size;
  }

  /** Ends the measurement: every event still waiting counts as infinitely late; returns how many. */
  close(): number {
    let unseen = 0;
    for (const list of this.waiting.values()) unseen += list.length;
    // A version that never arrived counts as infinitely late, so it cannot flatter the percentiles.
    for (let i = 0; i < unseen; i++) this.freshness.push(Number.POSITIVE_INFINITY);
    return unseen;
  }
}
