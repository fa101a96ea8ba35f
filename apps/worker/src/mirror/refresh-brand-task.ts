import { causedBy, recordChanges } from "@loops-sync/db";
import { applyBrands, applyMenuIfNewer } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { settleRoutedEvents } from "../events/settle-events.ts";
import { openSetAsideGate, SET_ASIDE_OUTCOME } from "../upstream/set-aside-gate.ts";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import { readBrand, readMenu } from "./read-menu.ts";

/**
 * refresh_brand (brand.* and menu.* events): GET /brands/{id} and GET /brands/{id}/menu, stored in one
 * transaction: the brand gated on updated_at, the menu and its rows on version. Settles the brand's events.
 * While brands are set aside (Loops refused brands:read) the events are settled failed with no call, and
 * the job succeeds; a set-aside menu leaves the menu as it is.
 */
export function refreshBrandTask(ctx: WorkerContext): Task {
  const { sql, client } = ctx;
  return upstreamTask(
    {
      name: "refresh_brand",
      parse: (payload) => parseIds<"refresh_brand">(payload, "brandId"),
      settle: async ({ merchantId, brandId }, outcome, error) => {
        await settleRoutedEvents(sql, {
          merchantId,
          route: "brand",
          brandId,
          receivedBefore: new Date(),
          outcome,
          ...(error ? { error } : {}),
        });
      },
      async run({ merchantId, brandId }, state, helpers) {
        const api = client.forMerchant(merchantId);
        const options = { signal: helpers.abortSignal };
        const gate = await openSetAsideGate(sql, merchantId, { logger: ctx.logger });
        const brand = await gate.read("brands", () => readBrand(api, brandId, options));
        if (!brand) {
          await settleRoutedEvents(sql, {
            merchantId,
            route: "brand",
            brandId,
            receivedBefore: state.now,
            outcome: "failed",
            error: SET_ASIDE_OUTCOME("brands"),
          });
          return;
        }
        const menu = await gate.read("menus", () => readMenu(api, brandId, options));
        await sql.begin(async (tx) => {
          const changes = await applyBrands(tx, merchantId, [brand]);
          const menuChange = menu ? await applyMenuIfNewer(tx, merchantId, menu) : undefined;
          if (menuChange) changes.push(menuChange);
          const settled = await settleRoutedEvents(tx, {
            merchantId,
            route: "brand",
            brandId,
            receivedBefore: state.now,
            outcome: "applied",
          });
          await recordChanges(tx, causedBy(changes, settled.newest));
        });
      },
    },
    ctx,
  );
}
