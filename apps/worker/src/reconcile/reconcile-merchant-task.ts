import { tickItemDone } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { reconcileMerchant } from "./reconcile-merchant.ts";
import { RECONCILE_TICK } from "./refresh-resources-task.ts";

/**
 * reconcile_merchant (fanned out at start and on RECONCILE_CRON, and after a merchant is confirmed): every
 * mirrored resource of one merchant, through the etiquette of `upstreamTask` (429 pauses, revocation stops).
 * It answers no event: self-originated events stay ignored, and this is how our own writes reach the mirror.
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
      async run({ merchantId, tick }, _state, helpers) {
        const result = await reconcileMerchant(sql, client, merchantId, {
          signal: helpers.abortSignal,
          logger,
        });
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
