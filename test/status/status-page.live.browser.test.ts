// The operator page of a running loops-sync (`loops-sync start` against the sandbox), in headless Chromium:
// the figures it shows are checked against the database the running service writes.
import { randomBytes } from "node:crypto";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { launchChromium, skipWithoutChromium } from "../support/chromium.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";

const skip = skipWithoutChromium;
const TOKEN = randomBytes(24).toString("hex");
/** Orders the test creates, half for each demo merchant, each then advanced once (version 2). */
const ORDERS = 6;

describe.skipIf(skip)("operator page of a running loops-sync, in headless Chromium", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let started: StartedLoopsSync;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    // With ADMIN_TOKEN, as an operator opens it: the browser's login prompt, the token as the password.
    // No catch-up while the orders are in flight: the merchants are configured, so the run at start (awaited)
    // is their first catch-up, and the next is a year away (CATCHUP_CRON). A first catch-up that ran after
    // the webhooks taught it the merchants (the trickle queues it at once) would backfill their orders first,
    // and then each of their events would settle stale, rightly, leaving nothing applied to count.
    started = await startLoopsSync({
      databaseUrl: db.url,
      sandbox,
      env: { ADMIN_TOKEN: TOKEN, CATCHUP_CRON: "0 0 1 1 *", LOOPS_MERCHANT_IDS: "mer_demo_1 mer_demo_2" },
    });
    await waitFor(() => /"merchants":2,.*"msg":"catch-up run finished"/.test(started.output()), {
      what: "the catch-up at start to finish, over both merchants",
    });
    const orders = Array.from({ length: ORDERS }, (_, i) =>
      sandbox.createOrder({ merchantId: i % 2 ? "mer_demo_1" : "mer_demo_2" }),
    );
    for (const o of orders) sandbox.advanceOrder(o.id);
    await waitFor(
      async () => {
        const [r] = await db.sql<
          { n: number }[]
        >`select count(*)::int as n from sync.events where outcome = 'pending'`;
        const [m] = await db.sql<
          { n: number }[]
        >`select count(*)::int as n from replica.orders where version = 2`;
        return r!.n === 0 && m!.n === orders.length;
      },
      { what: "every event settled and every order at version 2" },
    );
    browser = await launchChromium();
    page = await browser.newPage({ httpCredentials: { username: "operator", password: TOKEN } });
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`${started.admin}/status`);
    await page.waitForSelector("body[data-generated-at]", { timeout: 10_000 });
  });

  afterAll(async () => {
    await browser?.close();
    if (started && started.child.exitCode === null) started.child.kill("SIGKILL");
    await sandbox?.close();
    await db?.drop();
  });

  const field = (selector: string) => page.getAttribute(selector, "data-value");

  it("shows each merchant the service learned, with its last webhook, as in the database", async () => {
    const merchants = await db.sql<{ id: string; status: string; last_webhook: Date | null }[]>`
      select m.id, m.status,
             (select max(received_at) from sync.events e where e.merchant_id = m.id and e.source = 'webhook') as last_webhook
      from sync.merchants m order by m.id`;
    expect(merchants.map((m) => m.id)).toEqual(["mer_demo_1", "mer_demo_2"]);
    for (const m of merchants) {
      const row = `tr[data-merchant="${m.id}"]`;
      expect(await field(`${row} [data-field="status"]`)).toBe(m.status);
      expect(await field(`${row} [data-field="last-webhook"]`)).toBe(m.last_webhook?.toISOString() ?? "");
      expect(await page.textContent(`${row} [data-field="pending"]`)).toBe("0");
    }
  });

  it("counts the events it applied this hour exactly as sync.events does", async () => {
    const [applied] = await db.sql<{ n: number; orders: number }[]>`
      select count(*)::int as n, count(distinct order_id)::int as orders from sync.events
      where outcome = 'applied' and received_at > now() - interval '59 minutes'`;
    // At least one per order: the worker is each order's first writer, and the fetch that first stores an
    // order settles the events it was queued for as applied (an order.created may be stale when its
    // order.status_changed was claimed first).
    expect(applied!.orders).toBe(ORDERS);
    await expect
      .poll(() => page.textContent('[data-field="outcome-applied"]'), { timeout: 10_000, interval: 100 })
      .toBe(String(applied!.n));
    expect(problems).toEqual([]);
  });
});
