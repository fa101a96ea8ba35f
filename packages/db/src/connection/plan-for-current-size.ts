import type { TransactionSql } from "./connect.ts";

/**
 * Makes the rest of the transaction plan each statement for the tables as they are now: `plan_cache_mode =
 * force_custom_plan`, for this transaction only. postgres.js prepares every statement, and after five runs
 * Postgres may cache a generic plan per connection; one cached while sync.events was small reads the events
 * a statement names by id with a sequential scan, and keeps doing so as the table grows until an ANALYZE
 * replans it (a fresh install flooded at once: 31× slower per commit at 200k events, and growing;
 * bench/event-lookup-plans.ts). A custom plan is made with the table's current size every time. Sent at
 * once and not waited for: it travels with the transaction's next statement, costing no round trip, and if
 * it failed the next statement fails too. Handled here, so a broken connection is no unhandled rejection.
 */
export function planForCurrentSize(tx: TransactionSql): Promise<unknown> {
  const sent = tx`select set_config('plan_cache_mode', 'force_custom_plan', true)`.execute();
  sent.catch(() => {});
  return sent;
}
