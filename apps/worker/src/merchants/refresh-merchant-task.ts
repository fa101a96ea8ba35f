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
 * refresh_merchant (business_profile.*, merchant.*, connection.* events, and the periodic refresh):
 * GET /merchant and GET /connection. A connection that reads as revoked revokes the merchant here too.
 */
export function refreshMerchantTask(ctx: WorkerContext): Task {
  return merchantRefresh(ctx, { name: "refresh_merchant", route: "merchant", locations: false });
}

/**
 * refresh_go_live (business_profile.approved): as refresh_merchant, and the merchant's locations and their
 * channel connections, read at once and stored in the same transaction: the locations go live at approval,
 * so they are mirrored with it rather than on the next periodic refresh.
 */
export function refreshGoLiveTask(ctx: WorkerContext): Task {
  return merchantRefresh(ctx, { name: "refresh_go_live", route: "go_live", locations: true });
}

function merchantRefresh(
  ctx: WorkerContext,
  {
    name,
    route,
    locations,
  }: { name: "refresh_merchant" | "refresh_go_live"; route: "merchant" | "go_live"; locations: boolean },
): Task {
  const { sql, client } = ctx;
  return upstreamTask(
    {
      name,
      parse: (payload) => parseIds<typeof name>(payload),
      settle: async ({ merchantId }, outcome, error) => {
        await settleRoutedEvents(sql, {
          merchantId,
          route,
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
        const listing = locations
          ? await gate.read("locations", () => listMerchantLocations(api, options))
          : undefined;
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
            route,
            receivedBefore: state.now,
            outcome: "applied",
          });
          if (connection.status === "revoked") {
            changes.push(...(await revokeMerchant(tx, merchantId, { connectionId: connection.id })).changes);
          }
          await recordChanges(tx, causedBy(changes, settled.newest));
        });
      },
    },
    ctx,
  );
}
