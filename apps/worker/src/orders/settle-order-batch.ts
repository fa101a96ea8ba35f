import { settleCoveredOrderEvents, type TransactionSql } from "@loops-sync/db";
import type { ApplyOrderResult, ChangeInput } from "@loops-sync/replica";
import type { WorkerContext } from "../worker-context.ts";
import { applyFetchedOrders, countApplied } from "./apply-fetched-orders.ts";
import { type Claimed, needsFetch } from "./claim-orders.ts";
import type { Fetched } from "./fetch-claimed-orders.ts";
import { observeCommitted } from "./observe-order-stage.ts";

/** A fetched order with what its commit found. */
export interface Answered {
  claim: Claimed;
  applied: ApplyOrderResult;
}

/**
 * Each fetched order with what its commit found: the applier's, or, for the orders no applier took (none
 * runs: a pool the batches fill), this transaction's, all applied at once now; those come with their feed
 * rows, which the batch records as its last statement.
 */
export async function applyUnappliedOrders(
  ctx: WorkerContext,
  tx: TransactionSql,
  fetched: readonly Fetched[],
): Promise<{ answers: Answered[]; changes: ChangeInput[] }> {
  const answers: Answered[] = fetched.flatMap((f) => (f.kind === "applied" ? [f] : []));
  const unapplied = fetched.flatMap((f) => (f.kind === "fetched" ? [f] : []));
  if (unapplied.length === 0) return { answers, changes: [] };
  const group = await applyFetchedOrders(
    tx,
    unapplied.map((f) => ({
      order: f.order,
      eventIds: f.claim.event_ids,
      receivedBefore: f.claim.claimed_at,
    })),
  );
  countApplied(ctx, group);
  for (const f of unapplied) observeCommitted(ctx.metrics, f.claim, f.fetchedAt);
  return {
    answers: [...answers, ...unapplied.map((f, i) => ({ claim: f.claim, applied: group.applied[i]! }))],
    changes: group.changes,
  };
}

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
