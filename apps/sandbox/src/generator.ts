import { isFinal } from "./domain/lifecycle.ts";
import type { SandboxWorld } from "./domain/world.ts";
import { invalidRequest } from "./problem.ts";

export interface GeneratorOptions {
  /** New orders per real second across the chosen merchants. */
  ratePerSecond: number;
  /** Merchants to create orders for. Default: every merchant with an active connection. */
  merchantIds?: string[];
  /** Real ms between lifecycle steps of each open order. Default: 1000. */
  advanceEveryMs?: number;
}

const TICK_MS = 50;

/**
 * Creates orders at a steady rate and walks open ones through their lifecycles (with some rejections and
 * cancellations), as delivery channels would. Every change it makes has origin `channel`.
 */
export class OrderGenerator {
  readonly #world: SandboxWorld;
  #timer: NodeJS.Timeout | undefined;
  #owed = 0;
  #lastTick = 0;
  /** Order id → real ms when it may move next. */
  #open = new Map<string, number>();
  #options: Required<GeneratorOptions> | undefined;

  constructor(world: SandboxWorld) {
    this.#world = world;
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  start({ ratePerSecond, merchantIds, advanceEveryMs = 1000 }: GeneratorOptions): void {
    if (!(ratePerSecond >= 0) || !Number.isFinite(ratePerSecond)) {
      throw invalidRequest([
        { field: "ratePerSecond", message: "must be a number of orders per second, 0 or more" },
      ]);
    }
    if (!(advanceEveryMs > 0))
      throw invalidRequest([{ field: "advanceEveryMs", message: "must be above 0" }]);
    const store = this.#world.store;
    const ids = merchantIds ?? [...store.merchants.keys()];
    for (const id of ids)
      if (!store.merchants.has(id))
        throw invalidRequest([{ field: "merchantIds", message: `unknown merchant ${id}` }]);
    this.stop();
    this.#options = { ratePerSecond, merchantIds: ids, advanceEveryMs };
    this.#lastTick = performance.now();
    this.#owed = 0;
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const o = this.#options;
    if (!o) return;
    const now = performance.now();
    this.#owed += ((now - this.#lastTick) / 1000) * o.ratePerSecond;
    this.#lastTick = now;
    const world = this.#world;
    const live = o.merchantIds.filter((m) =>
      [...world.store.connections.values()].some((c) => c.merchant_id === m && c.status === "active"),
    );
    while (this.#owed >= 1 && live.length) {
      this.#owed -= 1;
      try {
        const order = world.createOrder(
          { merchantId: world.random.pick(live) },
          { type: "channel", application_id: null },
        );
        this.#open.set(order.id, now + o.advanceEveryMs * (0.5 + world.random.next()));
      } catch {
        // A merchant without locations or active channel connections gets no orders.
      }
    }
    if (!live.length) this.#owed = 0;
    for (const [id, due] of this.#open) {
      if (due > now) continue;
      const order = world.store.orders.get(id);
      if (!order || isFinal(order)) {
        this.#open.delete(id);
        continue;
      }
      world.advanceOrder(id, undefined, { type: "channel", application_id: null }, true);
      if (isFinal(order)) this.#open.delete(id);
      else this.#open.set(id, now + o.advanceEveryMs * (0.5 + world.random.next()));
    }
  }
}
