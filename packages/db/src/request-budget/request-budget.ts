import type { BudgetGrant } from "@loops-sync/loops-client";
import type { Sql } from "../connection/connect.ts";
import { budgetSlotInWindow } from "./budget-slots.ts";

export interface RequestBudgetOptions {
  /** Requests per second to Loops for the whole deployment (LOOPS_MAX_RPS); each process passes the same. */
  maxRps: number;
}

/**
 * The deployment's request budget in `sync.request_budget`: grants and narrowing. Its rules are written once,
 * in `sync.take_request_tokens` and `sync.narrow_request_budget` (migration 0014).
 */
export interface RequestBudget {
  /** Up to `want` tokens now, in one statement; `live` may use the share kept from background work. */
  take(want: number, live: boolean): Promise<BudgetGrant>;
  /** A 429: narrow the shared rate until `retryAfterSeconds` (default 1) has passed. */
  narrow(retryAfterSeconds: number | undefined): Promise<void>;
}

/** The shared budget over `sql`; every process, host and CLI command on the same database shares it. */
export function requestBudget(sql: Sql, { maxRps }: RequestBudgetOptions): RequestBudget {
  if (!Number.isInteger(maxRps) || maxRps < 1)
    throw new RangeError("maxRps: expected a whole number above 0");
  return {
    async take(want, live) {
      const [row] = await sql<{ granted: number; valid_ms: number; wait_ms: number }[]>`
        select granted, valid_ms, wait_ms from sync.take_request_tokens(${want}::int, ${maxRps}::int, ${live})`;
      return { granted: row?.granted ?? 0, validMs: row?.valid_ms ?? 0, waitMs: row?.wait_ms ?? 100 };
    },
    async narrow(retryAfterSeconds) {
      await sql`select sync.narrow_request_budget(${maxRps}::int, ${retryAfterSeconds ?? 1}::numeric)`;
    },
  };
}

/** The budget's state for operators: the rate in force and what the last second granted. */
export async function readRequestBudget(
  sql: Sql,
  { maxRps }: RequestBudgetOptions,
): Promise<{ rateInForce: number; narrowedUntil: Date | null; grantedLastSecond: number }> {
  const [row] = await sql<{ rate: number; narrowed_until: Date | null; granted: number }[]>`
    select case when narrowed_until > now() then least(narrowed_rps, ${maxRps}::int) else ${maxRps}::int end as rate,
           case when narrowed_until > now() then narrowed_until end as narrowed_until,
           (select coalesce(sum(u), 0)::int from unnest(used) u) as granted
      from sync.request_budget
     where name = 'loops'
       and ${budgetSlotInWindow(sql)}`;
  return {
    rateInForce: row?.rate ?? maxRps,
    narrowedUntil: row?.narrowed_until ?? null,
    grantedLastSecond: row?.granted ?? 0,
  };
}
