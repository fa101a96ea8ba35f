import { PROCESS_EVENTS_MAX_ATTEMPTS, type Sql, settleUnknownMerchantEvents } from "@loops-sync/db";
import { causedBy, classifyUpstreamFailure, enqueueJob, recordChanges } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { type ConnectionInput, upsertConnection } from "./upsert-merchant.ts";
import { parseIds, upstreamTask } from "./upstream-task.ts";
import type { WorkerContext } from "./worker-context.ts";

/**
 * Marks a merchant Loops does not know (404, or any other refusal of GET /connection) as `unknown`, with
 * why, and its pending events as unhandled: it is asked nothing more, and catch-up and the reconcile skip it.
 */
async function recordUnknownMerchant(sql: Sql, merchantId: string, why: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      update sync.merchants set status = 'unknown', confirm_error = ${why}
      where id = ${merchantId} and status = 'unconfirmed'`;
    await settleUnknownMerchantEvents(tx, merchantId, why);
  });
}

/**
 * confirm_merchant: a webhook named a merchant not yet known here. GET /connection for it: an answer makes it
 * active (its connection stored, its pending events dispatched again, its whole mirror reconciled); a
 * refusal records it as unknown. A portal test event's made-up merchant thus costs one call, once.
 */
export function confirmMerchantTask(ctx: WorkerContext): Task {
  const { sql, client, logger } = ctx;
  return upstreamTask(
    {
      name: "confirm_merchant",
      parse: (payload) => parseIds<"confirm_merchant">(payload),
      settle: async ({ merchantId }, outcome, error) => {
        if (outcome === "failed") await recordUnknownMerchant(sql, merchantId, error ?? "refused");
      },
      async run({ merchantId }, _state, helpers) {
        let connection: ConnectionInput;
        try {
          connection = (await client
            .forMerchant(merchantId)
            .connection.get({ signal: helpers.abortSignal })) as ConnectionInput;
        } catch (error) {
          const failure = classifyUpstreamFailure(error);
          if (failure.kind !== "permanent") throw error;
          await recordUnknownMerchant(sql, merchantId, failure.message);
          logger.warn(
            { merchantId, error: failure.message },
            "an event named a merchant Loops does not know",
          );
          return;
        }
        if (typeof connection?.id !== "string" || connection.merchant_id !== merchantId) {
          await recordUnknownMerchant(sql, merchantId, "GET /connection answered another merchant");
          return;
        }
        await sql.begin(async (tx) => {
          const confirmed = await tx`
            update sync.merchants set status = 'active', confirm_error = null
            where id = ${merchantId} and status = 'unconfirmed' returning id`;
          if (confirmed.length === 0) return;
          const changes = await upsertConnection(tx, connection);
          const pending = await tx<{ id: string; source: "webhook" | "catchup" | "cli" }[]>`
            select id, source from sync.events e
            where merchant_id = ${merchantId} and outcome = 'pending'
              and not exists (select 1 from sync.order_refresh r where r.event_id = e.id)
            order by id`;
          if (pending.length > 0) {
            await enqueueJob(tx, {
              task: "process_events",
              payload: { eventIds: pending.map((e) => e.id) },
              maxAttempts: PROCESS_EVENTS_MAX_ATTEMPTS,
            });
          }
          await enqueueJob(tx, {
            task: "reconcile_merchant",
            payload: { merchantId },
            merchantId,
            jobKey: `reconcile:${merchantId}`,
            jobKeyMode: "preserve_run_at",
          });
          // Read because the first of these events named the merchant.
          await recordChanges(tx, causedBy(changes, pending[0] ?? null, "webhook"));
        });
      },
    },
    ctx,
  );
}
