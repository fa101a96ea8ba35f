import { recordChanges, settleOrderEvents } from "@loops-sync/db";
import { LoopsError } from "@loops-sync/loops-client";
import { applyOrderIfNewer, orderChanges } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { fetchOrder } from "./fetch-order.ts";
import { resolveOrderEvents } from "./resolve-order-events.ts";

/** The job key that coalesces refreshes of one order: a burst of events costs one or two fetches. */
export function orderJobKey(merchantId: string, orderId: string): string {
  return `order:${merchantId}:${orderId}`;
}

/**
 * refresh_order: fetch GET /orders/{id}, apply it through the version gate, and settle the order's events
 * in the same transaction. Skips the fetch when no pending event asks for more than the replica holds
 * (an earlier fetch of the same burst already brought it), unless `force`.
 */
export function refreshOrderTask(ctx: WorkerContext): Task {
  const { sql, client, metrics } = ctx;
  return upstreamTask(
    {
      name: "refresh_order",
      parse: (payload) => parseIds<"refresh_order">(payload, "orderId"),
      settle: (p, outcome, error) => settleOrderEvents(sql, p.merchantId, p.orderId, outcome, error),
      async run({ merchantId, orderId, force }, state, helpers) {
        if (!force) {
          const [need] = await sql<{ needed: boolean; version: number | null }[]>`
            select exists (
                     select 1 from sync.events e
                     where e.merchant_id = ${merchantId} and e.order_id = ${orderId} and e.type like 'order.%'
                       and e.outcome in ('pending', 'failed')
                       and (e.order_version is null or o.version is null or e.order_version > o.version)
                   ) as needed,
                   o.version
            from (select 1) as one left join replica.orders o on o.id = ${orderId}`;
          if (need && !need.needed) {
            // Everything open (pending, or failed earlier and being re-run) is covered: settle without a call.
            await resolveOrderEvents(sql, {
              merchantId,
              orderId,
              versionBefore: need.version,
              receivedBefore: state.now,
            });
            return;
          }
        }
        const order = await fetchOrder(
          client.forMerchant(merchantId, { priority: "live" }),
          orderId,
          helpers.abortSignal,
        );
        const outcome = await sql.begin(async (tx) => {
          const applied = await applyOrderIfNewer(tx, order, { openEvent: true });
          const events = await resolveOrderEvents(tx, {
            merchantId,
            orderId,
            versionBefore: applied.previousVersion,
            receivedBefore: state.now,
          });
          await recordChanges(tx, orderChanges([applied], "repair"));
          return { applied, events };
        });
        metrics.orderApplies.inc({ changed: String(outcome.applied.changed) });
        if (outcome.events.newerPending > 0) {
          // The upstream is behind what an event announced: retried with backoff until it catches up.
          const { version } = outcome.applied;
          const { newerPending } = outcome.events;
          throw new LoopsError({
            kind: "not_ready",
            code: "upstream_behind",
            message: `order ${orderId}: upstream returned version ${version}, but ${newerPending} event(s) announce a newer one`,
          });
        }
      },
    },
    ctx,
  );
}
