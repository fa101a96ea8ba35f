import { type ServedStatusPage, serveStatusPage } from "@loops-sync/status";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launchChromium, skipWithoutChromium } from "../support/chromium.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { seedSyncState } from "../support/seed-sync-state.ts";

const skip = skipWithoutChromium;
if (skip) {
  console.warn(
    `SKIPPED status page browser test: ${CHROMIUM} is absent (apt-get install -y chromium); CI never skips it`,
  );
}

describe.skipIf(skip)("status page in headless Chromium", () => {
  let db: TestDatabase;
  let served: ServedStatusPage;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await seedSyncState(db.sql);
    // A feed whose first 4 changes were pruned: 8 left, positions 5–12.
    await db.sql`
      insert into replica.changes (resource, resource_id, merchant_id, operation, source)
      select 'order', 'ord_' || i, 'mer_alpha', 'insert', 'webhook' from generate_series(1, 12) i`;
    await db.sql`delete from replica.changes where position <= 4`;
    await db.sql`update replica.change_feed_state set pruned_through = 4`;
    served = await serveStatusPage({ sql: db.sql, refreshMs: 300 });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("request", (r) => requests.push(r.url()));
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(served.url);
    await page.waitForSelector("body[data-generated-at]", { timeout: 10_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await db?.drop();
  });

  const field = (selector: string) => page.getAttribute(selector, "data-value");

  it("shows the queue figures graphile-worker holds", async () => {
    const [q] = await db.sql<{ waiting: number; running: number; failed: number }[]>`
      select count(*) filter (where locked_at is null and attempts < max_attempts and run_at <= now())::int as waiting,
             count(*) filter (where locked_at is not null and attempts < max_attempts)::int as running,
             count(*) filter (where attempts >= max_attempts)::int as failed
      from graphile_worker.jobs`;
    expect(await field('[data-field="queue-waiting"]')).toBe(String(q!.waiting));
    expect(await field('[data-field="queue-running"]')).toBe(String(q!.running));
    expect(await field('[data-field="queue-failed"]')).toBe(String(q!.failed));
    expect(await page.textContent('[data-field="queue-failed"]')).toBe(String(q!.failed));
    expect(await page.locator("#failed-jobs tbody tr").count()).toBe(q!.failed);
  });

  it("shows each merchant's cursor, last webhook, pending and failed events, jobs, and who is revoked", async () => {
    const merchants = await db.sql<
      {
        id: string;
        status: string;
        cursor: string | null;
        last_webhook: Date | null;
        pending: number;
        failed: number;
        queued_jobs: number;
        failed_jobs: number;
      }[]
    >`
      select m.id, m.status, c.after_event_id as cursor,
             (select max(received_at) from sync.events e where e.merchant_id = m.id and e.source = 'webhook') as last_webhook,
             (select count(*)::int from sync.events e where e.merchant_id = m.id and e.outcome = 'pending') as pending,
             (select count(*)::int from sync.events e where e.merchant_id = m.id and e.outcome = 'failed') as failed,
             (select count(*)::int from graphile_worker._private_jobs j
               where j.payload ->> 'merchantId' = m.id and j.attempts < j.max_attempts) as queued_jobs,
             (select count(*)::int from graphile_worker._private_jobs j
               where j.payload ->> 'merchantId' = m.id and j.attempts >= j.max_attempts) as failed_jobs
      from sync.merchants m left join sync.cursors c on c.merchant_id = m.id order by m.id`;
    expect(await page.locator("#merchants tbody tr").count()).toBe(merchants.length);
    for (const m of merchants) {
      const row = `tr[data-merchant="${m.id}"]`;
      expect(await field(`${row} [data-field="status"]`)).toBe(m.status);
      expect(await field(`${row} [data-field="cursor"]`)).toBe(m.cursor ?? "");
      expect(await field(`${row} [data-field="last-webhook"]`)).toBe(m.last_webhook?.toISOString() ?? "");
      expect(await page.textContent(`${row} [data-field="pending"]`)).toBe(String(m.pending));
      expect(await page.textContent(`${row} [data-field="failed-events"]`)).toBe(String(m.failed));
      expect(await page.textContent(`${row} [data-field="queued-jobs"]`)).toBe(String(m.queued_jobs));
      expect(await page.textContent(`${row} [data-field="failed-jobs"]`)).toBe(String(m.failed_jobs));
      expect(await page.getAttribute(row, "class")).toBe(m.status === "revoked" ? "revoked" : "");
    }
    const revoked = merchants.filter((m) => m.status === "revoked").length;
    expect(await field('[data-field="merchants-revoked"]')).toBe(String(revoked));
  });

  it("charts events per minute by outcome, adding up to the database's counts for the hour", async () => {
    const generatedAt = (await page.getAttribute("body", "data-generated-at"))!;
    const bars = await page.$$eval("#events-chart rect[data-outcome]", (rects) =>
      rects.map((r) => ({
        minute: r.getAttribute("data-minute")!,
        outcome: r.getAttribute("data-outcome")!,
        count: Number(r.getAttribute("data-count")),
        height: Number(r.getAttribute("height")),
      })),
    );
    const rows = await db.sql<{ minute: Date; outcome: string; count: number }[]>`
      select date_trunc('minute', received_at) as minute, outcome, count(*)::int as count
      from sync.events
      where received_at >= date_trunc('minute', ${generatedAt}::timestamptz) - interval '59 minutes'
        and received_at <= ${generatedAt}::timestamptz
      group by 1, 2`;
    const fromDb = rows.map((r) => `${r.minute.toISOString()} ${r.outcome} ${r.count}`).sort();
    expect(bars.map((b) => `${b.minute} ${b.outcome} ${b.count}`).sort()).toEqual(fromDb);
    expect(bars.every((b) => b.height > 0)).toBe(true);
    for (const outcome of ["applied", "pending", "failed"]) {
      const total = rows.filter((r) => r.outcome === outcome).reduce((s, r) => s + r.count, 0);
      expect(await page.textContent(`[data-field="outcome-${outcome}"]`)).toBe(String(total));
    }
  });

  it("updates live as events and jobs arrive", async () => {
    const before = Number(await field('[data-field="events-last-hour"]'));
    await db.sql`
      insert into sync.events (id, type, merchant_id, created_at, source, payload, outcome, outcome_at)
      select 'evt_live_' || g, 'order.created', 'mer_beta', now(), 'webhook', '{}', 'applied', now()
      from generate_series(1, 5) g`;
    await db.sql`select graphile_worker.add_job('process_events', '{"eventIds":["evt_live_1"]}'::json)`;
    await expect
      .poll(() => field('[data-field="events-last-hour"]'), { timeout: 10_000, interval: 100 })
      .toBe(String(before + 5));
    // The job commits after the events: a refresh between the two commits shows the events first.
    await expect
      .poll(() => field('[data-field="queue-waiting"]'), { timeout: 10_000, interval: 100 })
      .toBe("3");
  });

  it("shows the change feed's head, oldest retained position, pruned_through and size, live", async () => {
    const feed = async () => {
      const [row] = await db.sql<{ head: number; oldest: number; rows: number; bytes: number }[]>`
        select max(position) as head, min(position) as oldest, count(*)::int as rows,
               pg_total_relation_size('replica.changes')::float8 as bytes
        from replica.changes`;
      return row!;
    };
    const before = await feed();
    expect(await field('[data-field="feed-head"]')).toBe(String(before.head));
    expect(await page.textContent('[data-field="feed-head"]')).toBe(String(before.head));
    expect(await field('[data-field="feed-oldest"]')).toBe(String(before.oldest));
    expect(await field('[data-field="feed-pruned-through"]')).toBe("4");
    expect(await field('[data-field="feed-rows"]')).toBe(String(before.rows));
    expect(await field('[data-field="feed-bytes"]')).toBe(String(before.bytes));

    await db.sql`
      insert into replica.changes (resource, resource_id, merchant_id, operation, source)
      values ('order', 'ord_live', 'mer_beta', 'insert', 'webhook')`;
    const after = await feed();
    expect(after.head).toBeGreaterThan(before.head);
    await expect
      .poll(() => field('[data-field="feed-head"]'), { timeout: 10_000, interval: 100 })
      .toBe(String(after.head));
    expect(await field('[data-field="feed-rows"]')).toBe(String(after.rows));
  });

  it("shows each feed consumer's lag in changes and seconds, live", async () => {
    await db.sql`select replica.create_consumer('billing', array['order'], null, 0)`;
    const row = '[data-consumer="billing"]';
    await page.waitForSelector(row, { timeout: 10_000 });
    const [lag] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from replica.changes where position > 4 and resource = 'order'`;
    expect(await field(`${row} [data-field="lag-changes"]`)).toBe(String(lag!.n));
    expect(await page.textContent(`${row} [data-field="filter"]`)).toBe("order · every merchant");
    expect(Number(await field(`${row} [data-field="lag-seconds"]`))).toBeGreaterThan(0);
    const got = await db.sql`select position from replica.receive_changes('billing', 3)`;
    await db.sql`select replica.ack_changes('billing', ${got.map((r) => r.position)}::bigint[])`;
    await expect
      .poll(() => field(`${row} [data-field="lag-changes"]`), { timeout: 10_000, interval: 100 })
      .toBe(String(lag!.n - 3));
  });

  it("loads nothing from anywhere else, shows no secret and logs no error", async () => {
    const origin = new URL(served.url).origin;
    expect(requests.length).toBeGreaterThan(1);
    expect(requests.filter((u) => !u.startsWith(origin))).toEqual([]);
    const html = await page.content();
    expect(html).not.toContain("abc123XYZ");
    expect(html).not.toContain("eyJhbGciOi");
    expect(problems).toEqual([]);
  });
});
