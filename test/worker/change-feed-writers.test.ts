// What each writer of the mirror puts in the change feed: one row per real change, with its transition, its source
// and its event; nothing for a stale, duplicate or identical fetch; a notification after each commit that adds some.
import { applyOrderPage, repairOrder } from "@loops-sync/catchup";
import { connect, type EventEnvelope } from "@loops-sync/db";
import type { Order } from "@loops-sync/loops-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { makeOrder } from "../support/make-order.ts";
import { createHarness, type Harness, settled } from "../support/worker-harness.ts";

const MERCHANT = "mer_demo_1";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  await h.worker();
});
afterAll(async () => {
  await h?.close();
});

interface Change {
  position: number;
  resource: string;
  resource_id: string;
  merchant_id: string | null;
  operation: string;
  version: number | null;
  previous_version: number | null;
  status: string | null;
  previous_status: string | null;
  source: string;
  event_id: string | null;
}

async function changesOf(resourceId: string): Promise<Change[]> {
  return await h.db.sql<Change[]>`
    select position::int, resource, resource_id, merchant_id, operation, version::int, previous_version::int,
           status, previous_status, source, event_id
    from replica.read_changes(0, 10000) where resource_id = ${resourceId} order by position`;
}

/** Queues the refresh of the merchant (and its connection) and of its locations, as the periodic refresh does. */
async function refreshMerchant(): Promise<void> {
  for (const task of ["refresh_merchant", "refresh_locations"]) {
    await h.db
      .sql`select graphile_worker.add_job(${task}::text, json_build_object('merchantId', ${MERCHANT}::text))`;
  }
}

const eventsOf = (orderId: string) => (e: EventEnvelope) => e.data.order_id === orderId;

describe("the change feed's writers", () => {
  it("records an order's webhook-driven changes with their status transitions, sources and events", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    const first = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, first), { what: "the created order applied" });
    h.sandbox.advanceOrder(order.id);
    const second = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, second), { what: "the advanced order applied" });

    const truth = h.sandbox.truth.order(order.id)!;
    const changes = await changesOf(order.id);
    expect(changes.map((c) => [c.operation, c.previous_version, c.version])).toEqual([
      ["insert", null, 1],
      ["update", 1, truth.version],
    ]);
    expect(changes[1]).toMatchObject({
      resource: "order",
      merchant_id: MERCHANT,
      previous_status: changes[0]!.status,
      status: truth.status,
      // The status change chained onto the stored order: applied from its event's payload.
      source: "event",
      event_id: second[0],
    });
  });

  it("writes nothing for a duplicate, a stale copy or the same version again", async () => {
    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    h.sandbox.advanceOrder(order.id);
    const ids = await h.ingest(eventsOf(order.id));
    await waitFor(() => settled(h.db, ids), { what: "order applied" });
    const before = await changesOf(order.id);
    const truth = h.sandbox.truth.order(order.id)! as unknown as Order;

    await applyOrderPage(h.db.sql, [truth], { source: "catchup" });
    await applyOrderPage(h.db.sql, [{ ...truth, version: 1 }], { source: "backfill" });
    expect(await changesOf(order.id)).toEqual(before);
  });

  it("names catch-up, backfill and repair as the source of what they change", async () => {
    await applyOrderPage(h.db.sql, [makeOrder({ id: "ord_feed_src", version: 1 })], { source: "catchup" });
    await h.db.sql.begin(async (tx) => {
      await applyOrderPage(tx, [makeOrder({ id: "ord_feed_other", version: 1 })], { source: "backfill" });
    });
    // Given a transaction, the page leaves recording to its caller: nothing was recorded for it.
    expect(await changesOf("ord_feed_other")).toEqual([]);

    const upstream = makeOrder({ id: "ord_feed_src", version: 1, status: "cancelled" }) as unknown as Order;
    await repairOrder(h.db.sql, { orderId: "ord_feed_src", kind: "status_mismatch" } as never, upstream);
    await repairOrder(h.db.sql, { orderId: "ord_feed_src", kind: "extra" } as never, undefined);
    expect(
      (await changesOf("ord_feed_src")).map((c) => [c.source, c.operation, c.previous_status, c.status]),
    ).toEqual([
      ["catchup", "insert", null, "placed"],
      ["repair", "update", "placed", "cancelled"],
      ["repair", "delete", "cancelled", null],
    ]);
  });

  it("records merchants, connections, locations and channel connections once, not on an identical refresh", async () => {
    await refreshMerchant();
    const counts = async () =>
      await h.db.sql<{ resource: string; n: number }[]>`
        select resource, count(*)::int as n from replica.changes
        where merchant_id = ${MERCHANT} and resource <> 'order' group by 1 order by 1`;
    const first = await waitFor(
      async () => {
        const rows = await counts();
        return rows.length === 4 ? rows : undefined;
      },
      { what: "merchant, connection, location and channel connection changes" },
    );
    expect(first.map((r) => r.resource)).toEqual([
      "channel_connection",
      "connection",
      "location",
      "merchant",
    ]);
    const [reconciled] = await h.db.sql`
      select source, event_id from replica.changes where resource = 'merchant' and resource_id = ${MERCHANT}`;
    expect(reconciled).toEqual({ source: "reconcile", event_id: null });

    // The same reads again change nothing: once the jobs are done, the counts are as before.
    await refreshMerchant();
    await waitFor(
      async () => {
        const [row] = await h.db.sql<{ n: number }[]>`
          select count(*)::int as n from graphile_worker.jobs
          where task_identifier in ('refresh_merchant', 'refresh_locations')`;
        return row!.n === 0;
      },
      { what: "the second refresh done" },
    );
    expect(await counts()).toEqual(first);
  });

  it("notifies loops_sync_changes after a commit that adds changes, with the head position", async () => {
    const listener = connect(h.db.url, { max: 1 });
    try {
      const heard: string[] = [];
      await listener.listen("loops_sync_changes", (payload) => heard.push(payload));
      await applyOrderPage(h.db.sql, [makeOrder({ id: "ord_feed_notify", version: 1 })], {
        source: "catchup",
      });
      const [change] = await changesOf("ord_feed_notify");
      await waitFor(() => heard.includes(String(change!.position)), { what: "the notification" });
    } finally {
      await listener.end({ timeout: 1 });
    }
  });
});
