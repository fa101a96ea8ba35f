import { recordMerchantReconciled } from "@loops-sync/db";
import { tickItemDone } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { RECONCILE_TICK } from "./pace-background.ts";
import { reconcileMerchant } from "./reconcile-merchant.ts";

/**
 * reconcile_merchant (queued by the trickle when the merchant is due, and after it is confirmed): every
 * mirrored resource of one merchant, through the etiquette of `upstreamTask` (429 pauses, revocation stops).
 * It answers no event: self-originated events stay ignored, and this is how our own writes reach the mirror.
 * A complete run is recorded (sync.merchants.reconciled_at), which schedules the next one; a job of the
 * trickle whose merchant was reconciled since it was queued makes no call.
 */
export function reconcileMerchantTask(ctx: WorkerContext): Task {
  const { sql, client, logger } = ctx;
  return upstreamTask(
    {
      name: "reconcile_merchant",
      parse: (payload) => parseIds<"reconcile_merchant">(payload),
      // It answers no event; a run's merchant that ends without success still ends its part of the run.
      settle: async ({ tick }) => {
        if (tick) await tickItemDone(sql, RECONCILE_TICK);
      },
      async run({ merchantId, tick, lastReconciledAt }, _state, helpers) {
        if (lastReconciledAt !== undefined) {
          const [row] = await sql<{ newer: boolean }[]>`
            select reconciled_at is not null
                   and (${lastReconciledAt}::timestamptz is null
                        -- The payload carries milliseconds; the column, microseconds.
                        or date_trunc('milliseconds', reconciled_at) > ${lastReconciledAt}::timestamptz) as newer
            from sync.merchants where id = ${merchantId}`;
          if (row?.newer) return;
        }
        const result = await reconcileMerchant(sql, client, merchantId, {
          signal: helpers.abortSignal,
          logger,
        });
        if (!result.revoked) await recordMerchantReconciled(sql, merchantId, result.apiCalls);
        if (tick) await tickItemDone(sql, RECONCILE_TICK);
        logger.debug(
          {
            merchantId,
            apiCalls: result.apiCalls,
            changes: result.changes.length,
            setAside: result.setAside,
          },
          "merchant reconciled",
        );
      },
    },
    ctx,
  );
}
