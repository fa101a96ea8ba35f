import { causedBy, recordChanges } from "@loops-sync/db";
import { revokeMerchant } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { settleRoutedEvents } from "../events/settle-events.ts";
import { listMerchantLocations } from "../mirror/refresh-locations-task.ts";
import { replaceMerchantLocations } from "../mirror/upsert-locations.ts";
import { openSetAsideGate } from "../upstream/set-aside-gate.ts";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { readConnection, readMerchant } from "./read-merchant.ts";
import { upsertConnection, upsertMerchant } from "./upsert-merchant.ts";

/**
 * refresh_go_live (business_profile.approved): the merchant, its connection, its locations and their channel
 * connections, read at once and stored in one transaction: the locations go live at approval, so they are
 * mirrored with it rather than on the next periodic refresh.
 */
export function refreshGoLiveTask(ctx: WorkerContext): Task {
  const { sql, client } = ctx;
  return upstreamTask(
    {
      name: "refresh_go_live",
      parse: (payload) => parseIds<"refresh_go_live">(payload),
      settle: async ({ merchantId }, outcome, error) => {
        await settleRoutedEvents(sql, {
          merchantId,
          route: "go_live",
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
        const listing = await gate.read("locations", () => listMerchantLocations(api, options));
        await sql.begin(async (tx) => {
          const changes = [
            ...(merchant ? await upsertMerchant(tx, merchant) : []),
            ...(await upsertConnection(tx, connection)),
            ...(listing
              ? await replaceMerchantLocations(tx, merchantId, { ...listing, listedAt: state.now })
              : []),
          ];
          const settled = await settleRoutedEvents(tx, {
            merchantId,
            route: "go_live",
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
