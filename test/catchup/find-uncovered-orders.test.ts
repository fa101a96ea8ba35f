// Catch-up's own-origin filter: a page of GET /events holding order events our own application caused asks
// for no fetch of them (they reflect our write; the spec says to ignore them), while the same page's other
// order events do, whichever payload shape names the order.

import { findUncoveredOrders } from "@loops-sync/catchup";
import type { Event } from "@loops-sync/loops-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const OURS = "app_ours";

const orderEvent = (id: string, data: Record<string, unknown>, applicationId: string | null): Event =>
  ({
    id,
    type: "order.status_changed",
    created_at: "2026-11-22T10:00:00Z",
    merchant_id: "mer_a",
    location_id: "loc_a",
    connection_id: "con_a",
    origin: applicationId
      ? { type: "api", application_id: applicationId }
      : { type: "channel", application_id: null },
    data,
  }) as Event;

describe("findUncoveredOrders", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("leaves out the order events our own application caused, and reads every order id shape", async () => {
    const page = [
      orderEvent("evt_1", { order_id: "ord_ours", version: 2 }, OURS),
      orderEvent("evt_2", { order: { id: "ord_ours_nested" }, version: 1 }, OURS),
      orderEvent("evt_3", { order_id: "ord_channel", version: 1 }, null),
      orderEvent("evt_4", { order: { id: "ord_nested", version: 1 } }, null),
      orderEvent("evt_5", { id: "ord_by_id", version: 1 }, "app_someone_else"),
    ];
    const found = await findUncoveredOrders(db.sql, page, OURS);
    expect(found.uncovered.map((o) => o.orderId).sort()).toEqual(["ord_by_id", "ord_channel", "ord_nested"]);
    // Without our application id nothing is told apart: every order is asked for.
    const all = await findUncoveredOrders(db.sql, page, undefined);
    expect(all.uncovered).toHaveLength(5);
  });
});
