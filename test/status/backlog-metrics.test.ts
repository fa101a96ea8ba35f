// The backlog gauges every process exports, read from a seeded Postgres at scrape time: exact totals,
// per-merchant series only while the merchants are few enough, revoked merchants left out.
import { registerProcessMetrics } from "@loops-sync/cli/process-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { parseExposition, type Sample, sampleValue } from "../support/scrape.ts";

describe("backlog gauges", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`
      insert into sync.merchants (id, status, first_seen_at) values
        ('mer_a', 'active', now() - interval '2 hours'),
        ('mer_b', 'active', now() - interval '2 hours'),
        ('mer_gone', 'revoked', now() - interval '2 hours')`;
    const event = (id: string, merchant: string, source: string, outcome: string, ago: string) => db.sql`
      insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload, outcome)
      values (${id}, 'order.created', ${merchant}, now() - ${ago}::interval, now() - ${ago}::interval, ${source},
              ${db.sql.json({ id })}, ${outcome})`;
    await event("evt_1", "mer_a", "webhook", "pending", "10 minutes");
    await event("evt_2", "mer_a", "webhook", "applied", "30 minutes");
    await event("evt_3", "mer_a", "catchup", "failed", "5 minutes");
    await event("evt_4", "mer_b", "catchup", "pending", "20 minutes");
    await event("evt_5", "mer_b", "catchup", "applied", "3 hours");
    await event("evt_6", "mer_gone", "webhook", "pending", "1 minute");
    await db.sql`
      insert into sync.order_refresh (merchant_id, order_id, queued_at) values
        ('mer_a', 'ord_1', now() - interval '100 seconds'), ('mer_a', 'ord_2', now() - interval '10 seconds'),
        ('mer_b', 'ord_3', now() - interval '40 seconds')`;
    await db.sql`
      insert into sync.cursors (merchant_id, last_run_started_at, last_run_finished_at, last_run_status) values
        ('mer_a', now() - interval '301 seconds', now() - interval '300 seconds', 'ok'),
        ('mer_b', now() - interval '900 seconds', null, 'running')`;
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function scrapeWith(merchantLabelsMax: number): Promise<Sample[]> {
    const registry = registerProcessMetrics({ sql: db.sql, merchantLabelsMax });
    return parseExposition(await registry.metrics());
  }
  const near = (value: number | undefined, expected: number) =>
    Math.abs((value ?? Number.NaN) - expected) < 5;

  it("gives totals over the active merchants and one series per merchant", async () => {
    const s = await scrapeWith(10);
    expect({
      ordersWaiting: sampleValue(s, "loops_sync_orders_waiting"),
      pending: sampleValue(s, "loops_sync_events_pending"),
      failed: sampleValue(s, "loops_sync_events_failed"),
      lastHourWebhook: sampleValue(s, "loops_sync_events_first_arrived_last_hour", { source: "webhook" }),
      lastHourCatchup: sampleValue(s, "loops_sync_events_first_arrived_last_hour", { source: "catchup" }),
      pendingB: sampleValue(s, "loops_sync_merchant_events_pending", { merchant: "mer_b" }),
      failedA: sampleValue(s, "loops_sync_merchant_events_failed", { merchant: "mer_a" }),
      waitingA: sampleValue(s, "loops_sync_merchant_orders_waiting", { merchant: "mer_a" }),
      catchupA: sampleValue(s, "loops_sync_merchant_events_first_arrived_last_hour", {
        merchant: "mer_a",
        source: "catchup",
      }),
      revoked: s.filter((x) => x.labels.merchant === "mer_gone").length,
    }).toEqual({
      ordersWaiting: 3,
      pending: 2,
      failed: 1,
      lastHourWebhook: 2,
      lastHourCatchup: 2,
      pendingB: 1,
      failedA: 1,
      waitingA: 2,
      catchupA: 1,
      revoked: 0,
    });
    expect(near(sampleValue(s, "loops_sync_orders_waiting_oldest_seconds"), 100)).toBe(true);
    expect(
      near(sampleValue(s, "loops_sync_merchant_orders_waiting_oldest_seconds", { merchant: "mer_b" }), 40),
    ).toBe(true);
    // The newest webhook of any merchant (mer_a's, 10 minutes ago); mer_b never had one.
    expect(near(sampleValue(s, "loops_sync_webhook_last_received_seconds"), 600)).toBe(true);
    expect(
      sampleValue(s, "loops_sync_merchant_webhook_last_received_seconds", { merchant: "mer_b" }),
    ).toBeUndefined();
    // mer_a finished 300 s ago; mer_b's run started 900 s ago and is still running.
    expect(
      near(sampleValue(s, "loops_sync_merchant_catchup_cursor_age_seconds", { merchant: "mer_a" }), 300),
    ).toBe(true);
    expect(near(sampleValue(s, "loops_sync_catchup_cursor_age_seconds"), 900)).toBe(true);
  });

  it("leaves the per-merchant series out when there are more merchants than METRICS_MERCHANT_LABELS_MAX", async () => {
    const s = await scrapeWith(1);
    expect(s.filter((x) => x.name.startsWith("loops_sync_merchant_"))).toEqual([]);
    expect(sampleValue(s, "loops_sync_events_pending")).toBe(2);
  });
});
