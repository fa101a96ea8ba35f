// A merchant first named by a webhook joins the sync only once Loops confirms it (GET /connection); one it
// does not know is recorded as unknown, its events unhandled, counted by type in `status`.

import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import { readSyncStatus } from "@loops-sync/status";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { APPLICATION_ID, createHarness, type Harness, outcomes } from "../support/worker-harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  // No merchant configured: every one is learned from the events below.
  await h.worker({ merchantIds: [] });
});
afterAll(async () => {
  await h?.close();
});

const event = (id: string, merchantId: string, type: string, data: Record<string, unknown> = {}) =>
  ({
    id,
    type,
    created_at: new Date().toISOString(),
    merchant_id: merchantId,
    location_id: null,
    connection_id: "con_x",
    origin: { type: "web_app", application_id: null },
    data,
  }) as unknown as EventEnvelope;

const store = (events: EventEnvelope[]) =>
  h.db.sql.begin((tx) =>
    storeEventsAndEnqueue(tx, events, { source: "webhook", applicationId: APPLICATION_ID }),
  );

const merchantStatus = async (id: string) =>
  (await h.db.sql<{ status: string }[]>`select status from sync.merchants where id = ${id}`)[0]?.status;

describe("merchants learned from webhooks", () => {
  it("records a merchant Loops does not know, once, and leaves its events unhandled", async () => {
    await store([
      event("evt_ghost_1", "mer_ghost", "portal.test"),
      event("evt_ghost_2", "mer_ghost", "brand.updated", { brand_id: "brd_x" }),
    ]);
    expect(await merchantStatus("mer_ghost")).toBe("unconfirmed");
    await waitFor(async () => (await merchantStatus("mer_ghost")) === "unknown", {
      what: "mer_ghost unknown",
    });
    expect(await outcomes(h.db, ["evt_ghost_1", "evt_ghost_2"])).toEqual({
      evt_ghost_1: "unhandled",
      evt_ghost_2: "unhandled",
    });
    expect(h.calls("GET /connection")).toBe(1);
    expect(h.calls("GET /brands/{brand_id}")).toBe(0);

    // A later event of the same merchant costs no call.
    await store([event("evt_ghost_3", "mer_ghost", "brand.updated", { brand_id: "brd_x" })]);
    await waitFor(async () => (await outcomes(h.db, ["evt_ghost_3"])).evt_ghost_3 === "unhandled", {
      what: "evt_ghost_3 unhandled",
    });
    expect(h.calls("GET /connection")).toBe(1);

    const status = await readSyncStatus(h.db.sql);
    expect(status.unhandledEvents.map(({ type, count }) => ({ type, count }))).toEqual([
      { type: "brand.updated", count: 2 },
      { type: "portal.test", count: 1 },
    ]);
  });

  it("order events of a merchant Loops does not know cost one GET /connection and no order fetch", async () => {
    h.sandbox.resetStats();
    const ids = Array.from({ length: 5 }, (_, i) => `evt_made_up_${i}`);
    await store(
      ids.map((id, i) =>
        event(id, "mer_made_up", "order.status_changed", { order_id: `ord_made_up_${i}`, version: 2 }),
      ),
    );
    await waitFor(async () => (await merchantStatus("mer_made_up")) === "unknown", {
      what: "mer_made_up unknown",
    });
    await waitFor(async () => Object.values(await outcomes(h.db, ids)).every((o) => o === "unhandled"), {
      what: "the made-up merchant's order events unhandled",
    });
    expect(h.calls("GET /connection")).toBe(1);
    expect(h.calls("GET /orders/{order_id}")).toBe(0);
    expect(h.calls("GET /orders")).toBe(0);
    const [queued] = await h.db.sql<{ n: number }[]>`
      select count(*)::int as n from sync.order_refresh where merchant_id = 'mer_made_up'`;
    expect(queued?.n).toBe(0);
  });

  it("order events of a merchant Loops knows wait for its confirmation, then are fetched", async () => {
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    await store([
      event("evt_known_order", "mer_demo_1", "order.created", { order_id: order.id, version: 1 }),
    ]);
    await waitFor(async () => (await outcomes(h.db, ["evt_known_order"])).evt_known_order === "applied", {
      what: "the order event applied after confirmation",
    });
    expect(await merchantStatus("mer_demo_1")).toBe("active");
    const [row] = await h.db.sql`select version from replica.orders where id = ${order.id}`;
    expect(row).toEqual({ version: 1 });
  });

  it("confirms a merchant Loops knows, then answers its events", async () => {
    await store([event("evt_real_1", "mer_demo_2", "brand.updated", { brand_id: "brd_demo_2" })]);
    await waitFor(async () => (await outcomes(h.db, ["evt_real_1"])).evt_real_1 === "applied", {
      what: "the brand event applied after confirmation",
    });
    expect(await merchantStatus("mer_demo_2")).toBe("active");
    const [brand] = await h.db.sql`select name_en from replica.brands where id = 'brd_demo_2'`;
    expect(brand).toEqual({ name_en: "Hijaz Coffee" });
  });
});
