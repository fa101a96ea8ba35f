import { settleCoveredOrderEvents, type TransactionSql } from "@loops-sync/db";
import type { WorkerContext } from "../worker-context.ts";
import type { BatchValue } from "./batch-value.ts";
import { type Claimed, needsFetch } from "./claim-orders.ts";

/**
 * Settles, in one statement, the claimed events the replica already covered: those of the orders it covered
 * whole, and those of an order whose other events wait for a gap (the applier settled the fetched and chained
 * ones with their commit). An event counts as received before the fetch when it was before its claim (the
 * claim's start: an event stored in between has its own row). Counts the outcomes.
 */
export async function settleOrderBatch(
  { metrics }: WorkerContext,
  tx: TransactionSql,
  { claimed, covered }: Pick<BatchValue, "claimed" | "covered">,
): Promise<void> {
  const judged = (c: Claimed, eventIds: readonly string[]) =>
    eventIds.map((eventId) => ({ eventId, versionBefore: c.replica_version, receivedBefore: c.claimed_at }));
  const outcomes = await settleCoveredOrderEvents(tx, {
    events: [
      ...claimed.filter((c) => !needsFetch(c)).flatMap((c) => judged(c, c.event_ids)),
      ...covered.flatMap(({ claim, eventIds }) => judged(claim, eventIds)),
    ],
  });
  for (const [outcome, n] of Object.entries(outcomes)) metrics.events.inc({ outcome }, n);
}
