import type { Sql, TransactionSql } from "../connection/connect.ts";

/**
 * The request budget's ring (`sync.request_budget`, migration 0014), as TypeScript reads it: 50 ms slots, a
 * grant allowed while the last 24 (1.2 s) stay within LOOPS_MAX_RPS, at most a tenth of the rate per slot.
 * The SQL functions keep their own copy (`sync.take_request_tokens`); test/budget/budget-slots.test.ts holds
 * these to it.
 */
export const BUDGET_SLOT_MS = 50;

/** Slots per second: `sync.request_budget.slot` is epoch seconds times this. */
export const BUDGET_SLOTS_PER_SECOND = 1000 / BUDGET_SLOT_MS;

/** Slots of the window whose grants together stay within the rate. */
export const BUDGET_WINDOW_SLOTS = 24;

/** Most tokens one slot grants at `rate` requests per second: a burst is spread over the second. */
export function budgetSlotCap(rate: number): number {
  return Math.max(1, Math.ceil(rate / 10));
}

/**
 * SQL condition on a `sync.request_budget` row: its last written slot is inside the window now, so its `used`
 * counts are current (older ones are stale). Constant text, so the statements holding it stay prepared once.
 */
export function budgetSlotInWindow(sql: Sql | TransactionSql) {
  return sql.unsafe(
    `slot > floor(extract(epoch from clock_timestamp()) * ${BUDGET_SLOTS_PER_SECOND})::bigint - ${BUDGET_WINDOW_SLOTS}`,
  );
}
