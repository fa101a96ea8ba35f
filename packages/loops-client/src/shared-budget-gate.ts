import { coalescing, type RoundEnd } from "./coalescing.ts";
import type { GateTicket, RequestGate, TakeTokens } from "./request-gate.ts";
import { sleep } from "./retry-policy.ts";

export interface SharedBudgetGateOptions {
  /** Asks the shared budget for tokens: one round trip per batch. */
  take: TakeTokens;
  /** Told about each 429 so the shared budget narrows for its Retry-After. Default: nothing. */
  narrow?: (retryAfterSeconds: number | undefined) => Promise<void> | void;
  /** Most tokens asked for in one round trip. Default 10. */
  maxBatch?: number;
  /** Leased tokens are spent this many ms before their slot ends (send latency). Default 5. */
  marginMs?: number;
  /** Asking the budget failed (Postgres away); the gate asks again after `retryMs`. Default: nothing. */
  onError?: (error: unknown) => void;
  /** Pause after a failed round trip, in ms. Default 1 000. */
  retryMs?: number;
  /**
   * At most this many ms of a round trip count as the answer's way out, added to a lease (see #pump).
   * Default 100: with the budget's 1.2 s window, a second at Loops still sees at most the budget when a
   * request arrives within 50 ms of being sent (migration 0014 allows 150 ms with no lateness).
   */
  maxLateMs?: number;
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  cleanup(): void;
}

/**
 * A process's door to a budget shared with other processes: attempts wait here in three queues, live ones
 * first, then confirmations, then background ones taking turns per merchant; tokens are leased from the shared budget in batches
 * sized by who is waiting, and a lease that outlives its slot is dropped rather than spent late.
 */
export class SharedBudgetGate implements RequestGate {
  readonly #o: Required<Omit<SharedBudgetGateOptions, "narrow" | "onError">> &
    Pick<SharedBudgetGateOptions, "narrow" | "onError">;
  readonly #live: Waiter[] = [];
  readonly #confirm: Waiter[] = [];
  readonly #background = new Map<string, Waiter[]>();
  #backgroundWaiting = 0;
  #tokens = 0;
  #expiresAt = 0;
  /** Ends the loop's wait after a refusal of background work: a live or confirming attempt arrived. */
  #wake: AbortController | undefined;
  // One loop per process hands out tokens; callers only enqueue and wake it.
  readonly #pump = coalescing(() => this.#round());

  constructor({
    take,
    narrow,
    maxBatch = 10,
    marginMs = 5,
    onError,
    retryMs = 1_000,
    maxLateMs = 100,
  }: SharedBudgetGateOptions) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1)
      throw new RangeError("maxBatch: expected a whole number above 0");
    if (!Number.isFinite(maxLateMs) || maxLateMs < 0)
      throw new RangeError("maxLateMs: expected a number of 0 or more");
    this.#o = { take, narrow, maxBatch, marginMs, onError, retryMs, maxLateMs };
  }

  /** Attempts waiting now (live, background). */
  get waiting(): { live: number; confirm: number; background: number } {
    return { live: this.#live.length, confirm: this.#confirm.length, background: this.#backgroundWaiting };
  }

  acquire({ priority, merchantId, signal }: GateTicket): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const queue =
        priority === "live"
          ? this.#live
          : priority === "confirm"
            ? this.#confirm
            : this.#merchantQueue(merchantId ?? "");
      const onAbort = () => {
        const at = queue.indexOf(waiter);
        if (at >= 0) {
          queue.splice(at, 1);
          if (priority === "background") this.#backgroundWaiting--;
        }
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
      if (priority === "background") this.#backgroundWaiting++;
      else this.#wake?.abort();
      void this.#pump.run();
    });
  }

  rateLimited(retryAfterSeconds: number | undefined): void {
    try {
      void Promise.resolve(this.#o.narrow?.(retryAfterSeconds)).catch((error) => this.#o.onError?.(error));
    } catch (error) {
      this.#o.onError?.(error);
    }
  }

  #merchantQueue(key: string): Waiter[] {
    let queue = this.#background.get(key);
    if (!queue) {
      queue = [];
      this.#background.set(key, queue);
    }
    return queue;
  }

  /** Live first, then confirmations; then the merchant whose turn it is, who goes to the back of the round. */
  #next(): Waiter | undefined {
    const first = this.#live.shift() ?? this.#confirm.shift();
    if (first) return first;
    for (const [key, queue] of this.#background) {
      this.#background.delete(key);
      const waiter = queue.shift();
      if (queue.length > 0) this.#background.set(key, queue);
      if (waiter) {
        this.#backgroundWaiting--;
        return waiter;
      }
    }
    return undefined;
  }

  /** One turn of the loop: hands out the tokens held, or asks the budget for more. */
  async #round(): Promise<RoundEnd> {
    const waiting = this.#live.length + this.#confirm.length + this.#backgroundWaiting;
    if (waiting === 0) return "done";
    if (this.#tokens > 0 && performance.now() < this.#expiresAt) {
      // Every token held goes out in this turn, to the waiters in their order.
      while (this.#tokens > 0) {
        const waiter = this.#next();
        if (!waiter) return "done";
        this.#tokens--;
        waiter.cleanup();
        waiter.resolve();
      }
      return "more";
    }
    this.#tokens = 0;
    // A lease is sized for who asks at its rate: a live or confirming attempt's lease never carries
    // background attempts along (they ask on their own, held to the background share), so background work
    // holds no token a live fetch waits for (docs/scaling.md, "Live first: the background share").
    const ahead = this.#live.length + this.#confirm.length;
    const want = Math.min(ahead > 0 ? ahead : waiting, this.#o.maxBatch);
    let grant: Awaited<ReturnType<TakeTokens>>;
    const asked = performance.now();
    try {
      grant = await this.#o.take(want, this.#live.length > 0, ahead === 0);
    } catch (error) {
      this.#o.onError?.(error);
      await sleep(this.#o.retryMs);
      return "more";
    }
    this.#tokens = grant.granted;
    // Postgres counted the slot's rest at a moment between the ask and the answer. Counted from the ask,
    // every lease of a round trip longer than a slot (50 ms: a busy event loop, a slow network) lapsed
    // unspent and no call was ever sent while the budget kept granting. Counted from the answer, a
    // lease may end up to the answer's travel time after its slot, so that is trusted only up to
    // `maxLateMs` (docs/decisions.md, "A lease counts from the budget's answer").
    const answered = performance.now();
    this.#expiresAt = Math.min(answered, asked + this.#o.maxLateMs) + grant.validMs - this.#o.marginMs;
    // A little jitter, so processes refused together do not all return in the same millisecond.
    if (grant.granted === 0) {
      const waitMs = Math.max(1, grant.waitMs) + Math.random() * 5;
      // Background work refused for its share may wait up to the budget's window (1.2 s); a live or
      // confirming attempt arriving meanwhile asks at once, for the part of the budget kept for it.
      this.#wake = ahead === 0 ? new AbortController() : undefined;
      await sleep(waitMs, this.#wake?.signal).catch(() => {});
      this.#wake = undefined;
    }
    return "more";
  }
}
