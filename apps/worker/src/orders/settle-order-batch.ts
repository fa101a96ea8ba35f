import { settleCoveredOrderEvents, type TransactionSql } from "@loops-sync/db";
import type { WorkerContext } from "../worker-context.ts";
import { type Claimed, needsFetch } from "./claim-orders.ts";

/**
 * Settles, in one statement, the events of the claimed orders the replica already covered (the applier
 * settled the fetched ones' with their commit). An event counts as received before the fetch when it was
 * before its claim (the claim's start: an event stored in between has its own row). Counts the outcomes.
 */
export async function settleOrderBatch(
  { metrics }: WorkerContext,
  tx: TransactionSql,
  claimed: readonly Claimed[],
): Promise<void> {
  const outcomes = await settleCoveredOrderEvents(tx, {
    events: claimed
      .filter((c) => !needsFetch(c))
      .flatMap((c) =>
        c.event_ids.map((eventId) => ({
          eventId,
          versionBefore: c.replica_version,
          receivedBefore: c.claimed_at,
        })),
      ),
  });
  for (const [outcome, n] of Object.entries(outcomes)) metrics.events.inc({ outcome }, n);
}
