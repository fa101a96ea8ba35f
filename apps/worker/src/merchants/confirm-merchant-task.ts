import {
  causedBy,
  recordChanges,
  refuseMerchant,
  type Sql,
  settleUnknownMerchantEvents,
  skipRevokedMerchantEvents,
} from "@loops-sync/db";
import { classifyUpstreamFailure, revokeMerchant } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { confirmActiveConnection } from "./confirm-active-connection.ts";
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
            changes.push(...(await revokeMerchant(tx, merchantId, { connectionId: connection.id })).changes);
            await recordChanges(tx, causedBy(changes, null, "webhook"));
            return;
          }
          await confirmActiveConnection(tx, merchantId, connection);
        });
      },
    },
    ctx,
  );
}
