import {
  type EventEnvelope,
  ORDER_REFRESH_CHANNEL,
  PROCESS_EVENTS_MAX_ATTEMPTS,
  storeEventsAndEnqueue,
} from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const event = (id: string, overrides: Partial<EventEnvelope> = {}): EventEnvelope => ({
  id,
  type: "order.status_changed",
  created_at: "2026-11-22T10:00:00Z",
  merchant_id: "mer_a",
  location_id: "loc_a",
  connection_id: "con_a",
  origin: { type: "channel", application_id: null },
  data: { order_id: "ord_1", version: 3, status: "accepted" },
  ...overrides,
});

describe("storeEventsAndEnqueue", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  const jobs = async () =>
    db.sql<{ task_identifier: string; payload: { eventIds: string[] }; max_attempts: number }[]>`
      select t.identifier as task_identifier, j.payload, j.max_attempts
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id order by j.id`;

  it("stores new events, queues order events for the refresher and the rest in one job, skips duplicates, marks self-originated ones ignored", async () => {
    const result = await db.sql.begin((tx) =>
      storeEventsAndEnqueue(
        tx,
        [
          event("evt_1"),
          event("evt_1"),
          event("evt_self", { origin: { type: "api", application_id: "app_us" } }),
          event("evt_2", { type: "brand.renamed", extra_field: { kept: true } }),
        ],
        { source: "webhook", applicationId: "app_us" },
      ),
    );
    expect(result.inserted.sort()).toEqual(["evt_1", "evt_2", "evt_self"]);
    expect(result.duplicates).toEqual(["evt_1"]);
    expect(result.ignoredSelf).toEqual(["evt_self"]);
    // Our application id is known, so the order event goes straight to the order refresh queue.
    expect(result.queued).toEqual(["evt_1"]);
    expect(result.enqueued).toEqual(["evt_2"]);

    const again = await db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [event("evt_1"), event("evt_2")], {
        source: "catchup",
        applicationId: "app_us",
      }),
    );
    expect(again).toEqual({
      inserted: [],
      duplicates: ["evt_1", "evt_2"],
      ignoredSelf: [],
      enqueued: [],
      queued: [],
    });

    const all = await jobs();
    // The merchant is new and came by webhook: one job to confirm it with Loops, one for the events.
    const byTask = Object.fromEntries(all.map((j) => [j.task_identifier, j.payload]));
    expect(all).toHaveLength(2);
    expect(byTask).toEqual({
      confirm_merchant: { merchantId: "mer_a" },
      process_events: { eventIds: ["evt_2"] },
    });
    // The attempts every process_events job gets, the same as `replay` and confirm_merchant give it.
    expect(all.find((j) => j.task_identifier === "process_events")!.max_attempts).toBe(
      PROCESS_EVENTS_MAX_ATTEMPTS,
    );
    const queue = await db.sql`select merchant_id, order_id, version, event_id from sync.order_refresh`;
    expect(queue).toEqual([{ merchant_id: "mer_a", order_id: "ord_1", version: 3, event_id: "evt_1" }]);

    const rows =
      await db.sql`select id, outcome, source, order_id, order_version, payload from sync.events order by id`;
    expect(rows.map((r) => [r.id, r.outcome, r.source])).toEqual([
      ["evt_1", "pending", "webhook"],
      ["evt_2", "pending", "webhook"],
      ["evt_self", "ignored_self", "webhook"],
    ]);
    expect(rows[0]!.order_id).toBe("ord_1");
    expect(rows[0]!.order_version).toBe(3);
    expect(rows[1]!.payload.extra_field).toEqual({ kept: true });
    const merchants = await db.sql`select id, learned_from, status from sync.merchants`;
    expect(merchants).toEqual([{ id: "mer_a", learned_from: "webhook", status: "unconfirmed" }]);
  });

  it("adds nothing when the transaction rolls back", async () => {
    await db.sql
      .begin(async (tx) => {
        await storeEventsAndEnqueue(tx, [event("evt_rolled_back")], {
          source: "webhook",
          applicationId: undefined,
        });
        throw new Error("abort");
      })
      .catch(() => {});
    const [row] = await db.sql`select count(*)::int as n from sync.events where id = 'evt_rolled_back'`;
    expect(row!.n).toBe(0);
    expect(await jobs()).toHaveLength(2);
  });

  it("is one atomic statement on its own, without a surrounding transaction", async () => {
    const result = await storeEventsAndEnqueue(db.sql, [event("evt_solo_b"), event("evt_solo_a")], {
      source: "cli",
      applicationId: undefined,
    });
    expect(result.enqueued.sort()).toEqual(["evt_solo_a", "evt_solo_b"]);
    const all = await jobs();
    expect(all).toHaveLength(3);
    expect(all.find((j) => j.payload.eventIds?.includes("evt_solo_a"))!.payload.eventIds).toEqual([
      "evt_solo_a",
      "evt_solo_b",
    ]);
    const failing = await storeEventsAndEnqueue(
      db.sql,
      [event("evt_bad_date", { created_at: "not a date" })],
      { source: "cli", applicationId: undefined },
    ).catch((e: unknown) => e);
    expect(failing).toBeInstanceOf(Error);
    expect(await jobs()).toHaveLength(3);
  });
  it("wakes the order refreshers at commit with the merchants it queued, or an empty payload when they would not fit", async () => {
    const payloads: string[] = [];
    const listener = await db.sql.listen(ORDER_REFRESH_CHANNEL, (p) => payloads.push(p));
    let markers = 0;
    /**
     * The NOTIFYs since the last call: Postgres delivers notifications in the order their transactions
     * committed, so once a marker sent now has arrived, none committed before it can still be on its way.
     */
    const notifiedSinceLast = async () => {
      const marker = `marker ${++markers}`;
      await db.sql`select pg_notify(${ORDER_REFRESH_CHANNEL}, ${marker})`;
      await waitFor(() => payloads.includes(marker), { what: `the NOTIFY "${marker}"` });
      return payloads.splice(0, payloads.indexOf(marker) + 1).slice(0, -1);
    };
    try {
      const orders = [
        ["mer_named_1", "ord_named_a"],
        ["mer_named_1", "ord_named_b"],
        ["mer_named_2", "ord_named_a"],
        ["mer_named_2", "ord_named_a"],
      ] as const;
      await storeEventsAndEnqueue(
        db.sql,
        orders.map(([merchant, order], i) =>
          event(`evt_named_${i}`, { merchant_id: merchant, data: { order_id: order, version: i + 1 } }),
        ),
        { source: "webhook", applicationId: "app_us" },
      );
      const named = await notifiedSinceLast();
      expect(named).toHaveLength(1);
      expect((JSON.parse(named[0]!) as string[]).sort()).toEqual(["mer_named_1", "mer_named_2"]);

      // 600 merchants exceed what one NOTIFY may carry: the refreshers are told to read the queue.
      await storeEventsAndEnqueue(
        db.sql,
        Array.from({ length: 600 }, (_, i) =>
          event(`evt_many_${i}`, {
            merchant_id: `mer_many_${i}`,
            data: { order_id: `ord_many_${i}`, version: 1 },
          }),
        ),
        { source: "webhook", applicationId: "app_us" },
      );
      expect(await notifiedSinceLast()).toEqual([""]);
      // Nothing queued (a duplicate): no NOTIFY at all.
      await storeEventsAndEnqueue(db.sql, [event("evt_named_0")], {
        source: "webhook",
        applicationId: "app_us",
      });
      expect(await notifiedSinceLast()).toEqual([]);
    } finally {
      await listener.unlisten();
    }
  });
});
