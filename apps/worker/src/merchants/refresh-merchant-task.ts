import { causedBy, recordChanges } from "@loops-sync/db";
import { revokeMerchant } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { settleRoutedEvents } from "../events/settle-events.ts";
import { openSetAsideGate } from "../upstream/set-aside-gate.ts";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { readConnection, readMerchant } from "./read-merchant.ts";
import { upsertConnection, upsertMerchant } from "./upsert-merchant.ts";

/**
 * refresh_merchant (business_profile.*, merchant.*, connection.* events, and the periodic refresh):
 * GET /merchant and GET /connection. A connection that reads as revoked revokes the merchant here too.
 */
export function refreshMerchantTask(ctx: WorkerContext): Task {
  const { sql, client } = ctx;
  return upstreamTask(
    {
      name: "refresh_merchant",
      parse: (payload) => parseIds<"refresh_merchant">(payload),
      settle: async ({ merchantId }, outcome, error) => {
        await settleRoutedEvents(sql, {
          merchantId,
          route: "merchant",
          receivedBefore: new Date(),
          outcome,
          ...(error ? { error } : {}),
        });
      },
      async run({ merchantId }, state, helpers) {
        const api = client.forMerchant(merchantId);
        const options = { signal: helpers.abortSignal };
        // The merchant's profile is an extra resource: set aside, only the connection is read.
        const gate = await openSetAsideGate(sql, merchantId, { logger: ctx.logger });
        const merchant = await gate.read("merchant", () => readMerchant(api, options));
        const connection = await readConnection(api, options);
        await sql.begin(async (tx) => {
          const changes = [
            ...(merchant ? await upsertMerchant(tx, merchant) : []),
            ...(await upsertConnection(tx, connection)),
          ];
          const settled = await settleRoutedEvents(tx, {
            merchantId,
            route: "merchant",
            receivedBefore: state.now,
            outcome: "applied",
          });
          if (connection.status === "revoked") {
            changes.push(...(await revokeMerchant(tx, merchantId, { connectionId: connection.id })));
          }
          await recordChanges(tx, causedBy(changes, settled.newest));
        });
      },
    },
    ctx,
  );
}
