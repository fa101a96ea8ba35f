import type { BudgetGrant } from "@loops-sync/loops-client";
import type { Sql } from "../connection/connect.ts";

export interface RequestBudgetOptions {
  /** Requests per second to Loops for the whole deployment (LOOPS_MAX_RPS); each process passes the same. */
  maxRps: number;
  /**
   * RECONCILE_BUDGET_SHARE: background takes stop once the window holds this share of the rate, so live
   * fetches always find the rest (sync.take_request_tokens' four-argument form, migration 0025). Default:
   * none, the 0014 rule (background may fill nine tenths).
   */
  backgroundShare?: number | undefined;
}

/**
 * The deployment's request budget in `sync.request_budget`: grants and narrowing. Its rules are written once,
 * in `sync.take_request_tokens` and `sync.narrow_request_budget` (migration 0014).
 */
export interface RequestBudget {
  /**
   * Up to `want` tokens now, in one statement; `live` may use the share kept from background work;
   * `background` (tokens only background attempts will spend) is held to `backgroundShare` when set.
   */
  take(want: number, live: boolean, background?: boolean): Promise<BudgetGrant>;
  /** A 429: narrow the shared rate until `retryAfterSeconds` (default 1) has passed. */
  narrow(retryAfterSeconds: number | undefined): Promise<void>;
}

/** The shared budget over `sql`; every process, host and CLI command on the same database shares it. */
export function requestBudget(sql: Sql, { maxRps, backgroundShare }: RequestBudgetOptions): RequestBudget {
  if (!Number.isInteger(maxRps) || maxRps < 1)
    throw new RangeError("maxRps: expected a whole number above 0");
  if (backgroundShare !== undefined && !(backgroundShare > 0 && backgroundShare <= 1))
    throw new RangeError("backgroundShare: expected a number above 0 and at most 1");
  return {
    async take(want, live, background = false) {
      const [row] = await (background && !live && backgroundShare !== undefined
        ? sql<{ granted: number; valid_ms: number; wait_ms: number }[]>`
            select granted, valid_ms, wait_ms
              from sync.take_request_tokens(${want}::int, ${maxRps}::int, false, ${backgroundShare}::numeric)`
        : sql<{ granted: number; valid_ms: number; wait_ms: number }[]>`
            select granted, valid_ms, wait_ms from sync.take_request_tokens(${want}::int, ${maxRps}::int, ${live})`);
      return { granted: row?.granted ?? 0, validMs: row?.valid_ms ?? 0, waitMs: row?.wait_ms ?? 100 };
    },
    async narrow(retryAfterSeconds) {
      await sql`select sync.narrow_request_budget(${maxRps}::int, ${retryAfterSeconds ?? 1}::numeric)`;
    },
  };
}
