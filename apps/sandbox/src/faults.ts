import { z } from "zod";
import { invalidRequest } from "./problem.ts";
import { createRandom, type Random } from "./random.ts";

const rate = z.number().min(0).max(1);
const duration = z.number().int().min(0);

const faultsSchema = z.object({
  /** Seed of the fault dice; the same seed and the same calls give the same faults. */
  seed: z.number().int(),
  /** Share of webhook deliveries never sent at all (the receiver must catch up through GET /events). */
  webhookDropRate: rate,
  /** Share of webhook deliveries sent twice with the same webhook-id. */
  webhookDuplicateRate: rate,
  /** Each delivery waits a random 0..window real ms first, so deliveries overtake each other. */
  webhookReorderWindowMs: duration,
  /** Every delivery waits this many real ms first. */
  webhookDelayMs: duration,
  /** Share of API calls answered 429 rate_limited with Retry-After. */
  api429Rate: rate,
  api429RetryAfterSeconds: duration,
  /** Share of API calls answered 503 upstream_unavailable. */
  api5xxRate: rate,
  /** Share of API calls answered only after apiSlowMs real ms. */
  apiSlowRate: rate,
  apiSlowMs: duration,
  /** Share of API calls whose connection is destroyed without an answer. */
  apiResetRate: rate,
  /** Tokens stop working after this many sandbox seconds while still claiming expires_in 900; null: no fault. */
  tokenTtlSeconds: z.number().int().min(0).nullable(),
  /**
   * Seconds added to the `Date` header of every answer (negative: behind): Loops' clock as seen from a host
   * whose own clock is off. `loops-sync doctor` compares it with ours.
   */
  clockSkewSeconds: z.number().int(),
});

export type Faults = z.output<typeof faultsSchema>;

export const NO_FAULTS: Faults = {
  seed: 1,
  webhookDropRate: 0,
  webhookDuplicateRate: 0,
  webhookReorderWindowMs: 0,
  webhookDelayMs: 0,
  api429Rate: 0,
  api429RetryAfterSeconds: 1,
  api5xxRate: 0,
  apiSlowRate: 0,
  apiSlowMs: 2000,
  apiResetRate: 0,
  tokenTtlSeconds: null,
  clockSkewSeconds: 0,
};

export type ApiFault =
  | { kind: "rate_limited"; retryAfter: number }
  | { kind: "server_error" }
  | { kind: "reset" }
  | { kind: "slow"; ms: number };

export interface WebhookFaultPlan {
  drop: boolean;
  duplicate: boolean;
  /** Real milliseconds to wait before the first attempt. */
  delayMs: number;
}

/**
 * Seeded fault dice. API calls and webhook deliveries roll on separate streams, so each is reproducible
 * on its own even though the two interleave differently from run to run.
 */
export class FaultInjector {
  #faults: Faults = { ...NO_FAULTS };
  #api: Random = createRandom(NO_FAULTS.seed);
  #webhooks: Random = createRandom(NO_FAULTS.seed + 1);

  constructor(initial: Partial<Faults> = {}) {
    this.set(initial);
  }

  get(): Faults {
    return { ...this.#faults };
  }

  /** Changes some faults; giving a seed restarts both dice streams. Throws ProblemError on bad values. */
  set(partial: Partial<Faults>): Faults {
    const parsed = faultsSchema.partial().strict().safeParse(partial);
    if (!parsed.success) {
      throw invalidRequest(
        parsed.error.issues.map((i) => ({ field: i.path.join(".") || "faults", message: i.message })),
      );
    }
    this.#faults = { ...this.#faults, ...parsed.data };
    if (parsed.data.seed !== undefined) {
      this.#api = createRandom(parsed.data.seed);
      this.#webhooks = createRandom(parsed.data.seed + 1);
    }
    return this.get();
  }

  /** One roll per API call: at most one fault, checked in a fixed order. */
  rollApi(): ApiFault | undefined {
    const f = this.#faults;
    const r = this.#api.next();
    let edge = f.apiResetRate;
    if (r < edge) return { kind: "reset" };
    edge += f.api429Rate;
    if (r < edge) return { kind: "rate_limited", retryAfter: f.api429RetryAfterSeconds };
    edge += f.api5xxRate;
    if (r < edge) return { kind: "server_error" };
    edge += f.apiSlowRate;
    if (r < edge) return { kind: "slow", ms: f.apiSlowMs };
    return undefined;
  }

  planWebhook(): WebhookFaultPlan {
    const f = this.#faults;
    const drop = this.#webhooks.chance(f.webhookDropRate);
    const duplicate = this.#webhooks.chance(f.webhookDuplicateRate);
    const jitter =
      f.webhookReorderWindowMs > 0 ? Math.floor(this.#webhooks.next() * f.webhookReorderWindowMs) : 0;
    return { drop, duplicate, delayMs: f.webhookDelayMs + jitter };
  }
}
