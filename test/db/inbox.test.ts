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
    // Merchants Loops confirmed (GET /connection): only theirs are queued straight for a fetch.
    const confirmed = [
      "mer_a",
      "mer_named_1",
      "mer_named_2",
      ...Array.from({ length: 600 }, (_, i) => `mer_many_${i}`),
    ];
    await db.sql`
      insert into sync.merchants (id, learned_from, status)
      select id, 'webhook', 'active' from unnest(${confirmed}::text[]) as id`;
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
          event("evt_2", { type: "brand.renamed", merchant_id: "mer_b", extra_field: { kept: true } }),
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
    // mer_b is new and came by webhook: one job to confirm it with Loops, one for the events.
    const byTask = Object.fromEntries(all.map((j) => [j.task_identifier, j.payload]));
    expect(all).toHaveLength(2);
    expect(byTask).toEqual({
      confirm_merchant: { merchantId: "mer_b" },
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
    const merchants = await db.sql`
      select id, learned_from, status from sync.merchants where id in ('mer_a', 'mer_b') order by id`;
    expect(merchants).toEqual([
      { id: "mer_a", learned_from: "webhook", status: "active" },
      { id: "mer_b", learned_from: "webhook", status: "unconfirmed" },
    ]);
  });

  it("adds nothing when the transaction rolls back", async () => {
    await expect(
      db.sql.begin(async (tx) => {
        await storeEventsAndEnqueue(tx, [event("evt_rolled_back")], {
          source: "webhook",
          applicationId: undefined,
        });
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
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

  it("queues no fetch for an order event of a merchant not confirmed yet: it waits in process_events with its confirmation", async () => {
    await db.sql`insert into sync.merchants (id, learned_from, status) values ('mer_revoked', 'webhook', 'revoked')`;
    const result = await storeEventsAndEnqueue(
      db.sql,
      [
        event("evt_new_1", { merchant_id: "mer_new", data: { order_id: "ord_new_1", version: 1 } }),
        event("evt_new_2", { merchant_id: "mer_new", data: { order_id: "ord_new_2", version: 1 } }),
        event("evt_rev_1", { merchant_id: "mer_revoked", data: { order_id: "ord_rev_1", version: 1 } }),
      ],
      { source: "webhook", applicationId: "app_us" },
    );
    expect(result.queued).toEqual([]);
    expect(result.enqueued.sort()).toEqual(["evt_new_1", "evt_new_2", "evt_rev_1"]);
    const [queue] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from sync.order_refresh where merchant_id in ('mer_new', 'mer_revoked')`;
    expect(queue?.n).toBe(0);
    const [merchant] = await db.sql<
      { status: string }[]
    >`select status from sync.merchants where id = 'mer_new'`;
    expect(merchant?.status).toBe("unconfirmed");
    // Catch-up learns a merchant as active: its order events are queued at once.
    const caught = await storeEventsAndEnqueue(
      db.sql,
      [event("evt_cu_1", { merchant_id: "mer_from_catchup", data: { order_id: "ord_cu_1", version: 1 } })],
      { source: "catchup", applicationId: "app_us" },
    );
    expect(caught.queued).toEqual(["evt_cu_1"]);
  });

  it("reads an order event's order id from data.order_id, else data.order.id or data.id (payloads not shown)", async () => {
    const result = await storeEventsAndEnqueue(
      db.sql,
      [
        event("evt_shape_nested", {
          type: "order.created",
          data: { order: { id: "ord_nested", version: 1 } },
        }),
        event("evt_shape_id", { type: "order.updated", data: { id: "ord_by_id", version: 2 } }),
        event("evt_shape_both", { type: "order.updated", data: { order_id: "ord_named", id: "ord_other" } }),
        event("evt_shape_brand", { type: "brand.updated", data: { id: "brd_1" } }),
      ],
      { source: "webhook", applicationId: "app_us" },
    );
    const rows = await db.sql<{ id: string; order_id: string | null }[]>`
      select id, order_id from sync.events where id like 'evt_shape_%' order by id`;
    expect(Object.fromEntries(rows.map((r) => [r.id, r.order_id]))).toEqual({
      evt_shape_both: "ord_named",
      evt_shape_brand: null,
      evt_shape_id: "ord_by_id",
      evt_shape_nested: "ord_nested",
    });
    // The three order events go to the order queue like any other (mer_a is confirmed).
    expect(result.queued.sort()).toEqual(["evt_shape_both", "evt_shape_id", "evt_shape_nested"]);
  });
});
