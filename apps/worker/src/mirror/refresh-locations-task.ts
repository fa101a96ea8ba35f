import { causedBy, recordChanges } from "@loops-sync/db";
import type { CallOptions, SyncMerchantApi } from "@loops-sync/loops-client";
import { LoopsError } from "@loops-sync/loops-client";
import { classifyUpstreamFailure } from "@loops-sync/replica";
import type { Task } from "graphile-worker";
import { settleRoutedEvents } from "../events/settle-events.ts";
import { openSetAsideGate, SET_ASIDE_OUTCOME } from "../upstream/set-aside-gate.ts";
import { parseIds, upstreamTask } from "../upstream/upstream-task.ts";
import type { WorkerContext } from "../worker-context.ts";
import type { ChannelConnectionInput, ChannelInput, LocationInput } from "./upsert-locations.ts";
import { replaceMerchantLocations, upsertChannels } from "./upsert-locations.ts";

/** Upper bound on pages of GET /locations, so a misbehaving cursor cannot loop forever. */
const MAX_PAGES = 1000;

function withId<T extends { id: string }>(items: readonly unknown[], what: string): T[] {
  return items.map((item, i) => {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id !== "string" || id.length === 0) {
      throw new LoopsError({
        kind: "bad_response",
        code: "invalid_response",
        message: `${what}[${i}] has no id`,
      });
    }
    return item as T;
  });
}

/** Every location of the merchant (all pages) and the channel connections of each. */
export async function listMerchantLocations(api: SyncMerchantApi, options: CallOptions) {
  const locations: LocationInput[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await api.locations.list({ limit: 100, ...(cursor ? { cursor } : {}) }, options);
    locations.push(...withId<LocationInput>(result.data, "locations"));
    if (!result.next_cursor) break;
    cursor = result.next_cursor;
  }
  const channelConnections: ChannelConnectionInput[] = [];
  for (const location of locations) {
    try {
      const data = await api.locations.channelConnections(location.id, options);
      channelConnections.push(
        ...withId<ChannelConnectionInput>(data, "channel connections").map((c) => ({
          ...c,
          location_id: c.location_id ?? location.id,
        })),
      );
    } catch (error) {
      // Gone between the list and this call: it simply has no connections to keep.
      const failure = classifyUpstreamFailure(error);
      if (!(failure.kind === "permanent" && failure.status === 404)) throw error;
    }
  }
  return { locations, channelConnections };
}

/**
 * refresh_locations: the merchant's locations and channel connections, replaced from a complete listing.
 * While locations are set aside (the merchant did not grant locations:read) the events are settled failed
 * with no call and the job succeeds: orders naming those locations are mirrored all the same.
 */
export function refreshLocationsTask(ctx: WorkerContext): Task {
  const { sql, client } = ctx;
  return upstreamTask(
    {
      name: "refresh_locations",
      parse: (payload) => parseIds<"refresh_locations">(payload),
      settle: async ({ merchantId }, outcome, error) => {
        await settleRoutedEvents(sql, {
          merchantId,
          route: "locations",
          receivedBefore: new Date(),
          outcome,
          ...(error ? { error } : {}),
        });
      },
      async run({ merchantId }, state, helpers) {
        const gate = await openSetAsideGate(sql, merchantId, { logger: ctx.logger });
        const listing = await gate.read("locations", () =>
          listMerchantLocations(client.forMerchant(merchantId), { signal: helpers.abortSignal }),
        );
        if (!listing) {
          await settleRoutedEvents(sql, {
            merchantId,
            route: "locations",
            receivedBefore: state.now,
            outcome: "failed",
            error: SET_ASIDE_OUTCOME("locations"),
          });
          return;
        }
        await sql.begin(async (tx) => {
          const changes = await replaceMerchantLocations(tx, merchantId, { ...listing, listedAt: state.now });
          const settled = await settleRoutedEvents(tx, {
            merchantId,
            route: "locations",
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

/** refresh_channels: the channel catalog, read through one active merchant. */
export function refreshChannelsTask(ctx: WorkerContext): Task {
  const { sql, client } = ctx;
  return upstreamTask(
    {
      name: "refresh_channels",
      parse: (payload) => parseIds<"refresh_channels">(payload),
      settle: async () => {},
      async run({ merchantId }, _state, helpers) {
        const data = await client.forMerchant(merchantId).channels.list({ signal: helpers.abortSignal });
        await sql.begin(async (tx) => {
          const changes = await upsertChannels(tx, withId<ChannelInput>(data, "channels"));
          await recordChanges(tx, causedBy(changes, null));
        });
      },
    },
    ctx,
  );
}
