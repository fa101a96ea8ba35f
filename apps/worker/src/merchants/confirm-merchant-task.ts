import {
  causedBy,
  confirmMerchant,
  PROCESS_EVENTS_MAX_ATTEMPTS,
  recordChanges,
  refuseMerchant,
  type Sql,
  settleUnknownMerchantEvents,
  skipRevokedMerchantEvents,
} from "@loops-sync/db";
import { classifyUpstreamFailure, enqueueJob, revokeMerchant } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { type ConnectionInput, upsertConnection } from "./upsert-merchant.ts";

/**
 * Marks a merchant Loops does not know (404, or any other refusal of GET /connection) as `unknown`, with
 * why, and its pending events as unhandled: it is asked nothing more, and catch-up and the reconcile skip it.
 * A merchant that was revoked before (a reconnect being confirmed) is revoked again instead: the connection
 * its event named is not one Loops answers for, and its next events naming it ask nothing.
 */
async function recordUnknownMerchant(sql: Sql, merchantId: string, why: string): Promise<void> {
  await sql.begin(async (tx) => {
    const status = await refuseMerchant(tx, merchantId, why);
    if (status === "revoked") await skipRevokedMerchantEvents(tx, merchantId);
    else await settleUnknownMerchantEvents(tx, merchantId, why);
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
          if (connection.status === "revoked") {
            // Answered, but not active: the connection the event named is revoked too.
            const changes = await upsertConnection(tx, connection);
            changes.push(...(await revokeMerchant(tx, merchantId, { connectionId: connection.id })));
            await recordChanges(tx, causedBy(changes, null, "webhook"));
            return;
          }
          // Null: no longer unconfirmed (another confirmation came first).
          const confirmed = await confirmMerchant(tx, merchantId, connection.id);
          if (!confirmed) return;
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
          if (confirmed.wasRevoked) {
            // Events of the time it was revoked were skipped, and catch-up left it out: read its event log
            // again from its cursor.
            await enqueueJob(tx, {
              task: "catchup",
              payload: { merchantId },
              merchantId,
              jobKey: `catchup:${merchantId}`,
            });
          }
          // Read because the first of these events named the merchant.
          await recordChanges(tx, causedBy(changes, pending[0] ?? null, "webhook"));
        });
      },
    },
    ctx,
  );
}
