import type { Sql, TransactionSql } from "../connection/connect.ts";
import { budgetSlotInWindow } from "./budget-slots.ts";

/** The shared budget as every process sees it now. */
export interface RequestBudgetReading {
  /** Requests granted in the last 1.2 s (the ring's window), every process together. */
  grantedLastSecond: number;
  /** After a 429: the narrowed rate, and until when (both null when none is in force). */
  narrowedRps: number | null;
  narrowedUntil: Date | null;
}

/**
 * The one read of `sync.request_budget` (the status page, `status`, budget pressure): what the window granted,
 * and the narrowing in force. A narrowing outlives an idle window: it holds until `narrowed_until` whether or
 * not anything was granted since.
 */
export async function readRequestBudgetState(sql: Sql | TransactionSql): Promise<RequestBudgetReading> {
  const [row] = await sql<{ granted: number; narrowed_rps: number | null; narrowed_until: Date | null }[]>`
    select (case when ${budgetSlotInWindow(sql)}
                 then (select coalesce(sum(u), 0) from unnest(used) u) else 0 end)::int as granted,
           case when narrowed_until > now() then narrowed_rps end as narrowed_rps,
           case when narrowed_until > now() then narrowed_until end as narrowed_until
    from sync.request_budget where name = 'loops'`;
  return {
    grantedLastSecond: row?.granted ?? 0,
    narrowedRps: row?.narrowed_rps ?? null,
    narrowedUntil: row?.narrowed_until ?? null,
  };
}

/** The budget's state for operators and budget pressure: the rate in force (LOOPS_MAX_RPS unless narrowed). */
export async function readRequestBudget(
  sql: Sql | TransactionSql,
  { maxRps }: { maxRps: number },
): Promise<{ rateInForce: number; narrowedUntil: Date | null; grantedLastSecond: number }> {
  const { grantedLastSecond, narrowedRps, narrowedUntil } = await readRequestBudgetState(sql);
  return {
    rateInForce: narrowedRps === null ? maxRps : Math.min(narrowedRps, maxRps),
    narrowedUntil,
    grantedLastSecond,
  };
}
