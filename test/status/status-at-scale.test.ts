import { registerProcessMetrics } from "@loops-sync/cli/process-metrics";
import { startScheduledTick } from "@loops-sync/replica";
import { createStatusPage, type SyncStatus } from "@loops-sync/status";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { parseExposition } from "../support/scrape.ts";

// Thousands of merchants: the page asks for one page of them, most behind first, and sees the ticks.
describe("the status API at thousands of merchants", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql`
      insert into sync.merchants (id, learned_from)
      select 'mer_s' || lpad(i::text, 4, '0'), 'config' from generate_series(1, 2000) i`;
    // mer_s0500 waits longest, mer_s1500 next; everyone else is up to date.
    await db.sql`
      insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload)
      values ('evt_late_1', 'order.updated', 'mer_s0500', now() - interval '1 hour', now() - interval '50 minutes',
              'webhook', '{"data":{}}'),
             ('evt_late_2', 'order.updated', 'mer_s1500', now() - interval '1 hour', now() - interval '10 minutes',
              'webhook', '{"data":{}}')`;
  });
  afterAll(() => db?.drop());

  it("pages the merchants sorted by lag and counts them all", async () => {
    const app = createStatusPage({ sql: db.sql });
    const first = (await (await app.request("/api?sort=lag&limit=100")).json()) as SyncStatus;
    expect(first.merchantsTotal).toBe(2000);
    expect(first.merchants).toHaveLength(100);
    expect(first.merchants.slice(0, 2).map((m) => m.merchantId)).toEqual(["mer_s0500", "mer_s1500"]);
    const last = (await (await app.request("/api?sort=id&limit=100&offset=1950")).json()) as SyncStatus;
    expect(last.merchants.map((m) => m.merchantId)).toHaveLength(50);
    expect(last.merchants.at(-1)?.merchantId).toBe("mer_s2000");
  });

  it("answers a bad page query with a typed problem naming the parameter", async () => {
    const res = await createStatusPage({ sql: db.sql }).request("/api?limit=0");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await res.json()).toMatchObject({
      code: "invalid_query",
      detail: expect.stringMatching(/^limit:/),
    });
  });

  it("shows a scheduled run that is past its next tick as overran", async () => {
    await startScheduledTick(db.sql, {
      task: "catchup",
      cron: "*/5 * * * *",
      items: 2000,
      now: new Date(Date.now() - 11 * 60_000),
    });
    const body = (await (
      await createStatusPage({ sql: db.sql }).request("/api?limit=1")
    ).json()) as SyncStatus;
    expect(body.scheduledTicks).toEqual([
      expect.objectContaining({ task: "catchup", running: true, overran: true, items: 2000, itemsDone: 0 }),
    ]);
    const registry = registerProcessMetrics({ sql: db.sql, merchantLabelsMax: 100 });
    const samples = parseExposition(await registry.metrics());
    const value = (name: string) =>
      samples.find((s) => s.name === name && s.labels.task === "catchup")?.value;
    expect(value("loops_sync_scheduled_run_overran")).toBe(1);
    expect(value("loops_sync_scheduled_run_progress_ratio")).toBe(0);
    // 2,000 merchants: no per-merchant series, so the scrape stays small.
    expect(samples.filter((s) => s.labels.merchant !== undefined)).toEqual([]);
  });
});
