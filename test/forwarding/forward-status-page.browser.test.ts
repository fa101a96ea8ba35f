// The status page's forwarding section, in headless Chromium: the endpoint's state and the dead changes, and
// forwarding that no worker runs any more shown as off.

import { recordChanges } from "@loops-sync/db";
import { type ServedStatusPage, serveStatusPage } from "@loops-sync/status";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, skipWithoutChromium } from "../support/chromium.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe.skipIf(skipWithoutChromium)("status page: forwarding", () => {
  let db: TestDatabase;
  let served: ServedStatusPage | undefined;
  let browser: Browser | undefined;
  // The file's database: made before its test and dropped after it, with the page and browser on it.
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await db?.drop();
  });

  it("shows the endpoint failing and lists each dead change with its last error", async () => {
    // A worker forwards (it recorded itself just now).
    await db.sql`insert into sync.forward_progress (scanned_through, endpoint, seen_at) values (0, 'https://backend.example/changes', now())`;
    await db.sql.begin((tx) =>
      recordChanges(tx, [
        {
          resource: "order",
          resourceId: "ord_dead",
          merchantId: "mer_1",
          operation: "update",
          source: "webhook",
        },
      ]),
    );
    const [change] = await db.sql<{ position: number }[]>`select position from replica.changes`;
    await db.sql`
      insert into sync.forward_deliveries
        (position, resource, resource_id, changed_at, age_from, attempts, last_error, dead_at)
      values (${change!.position}, 'order', 'ord_dead', now(), now(), 7, 'HTTP 503: down for maintenance', now())`;
    await db.sql`
      update sync.forward_progress set scanned_through = ${change!.position}, last_failure_at = now(),
        last_failure = 'HTTP 503: down for maintenance'`;

    served = await serveStatusPage({ sql: db.sql, refreshMs: 300 });
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(served.url);
    await page.waitForSelector('[data-field="forward-state"]', { timeout: 10_000 });
    expect(await page.getAttribute('[data-field="forward-state"]', "data-value")).toBe("failing");
    expect(await page.getAttribute('[data-field="forward-dead"]', "data-value")).toBe("1");
    expect(await page.textContent("#forwarding")).toContain("https://backend.example/changes");
    const row = `#forward-dead tr[data-position="${change!.position}"]`;
    expect(await page.textContent(`${row} [data-field="webhook-id"]`)).toBe(`chg_${change!.position}`);
    expect(await page.textContent(`${row} [data-field="last-error"]`)).toBe("HTTP 503: down for maintenance");
  });

  it("shows forwarding off once no worker forwards, with the changes waiting", async () => {
    // The last forwarder stopped (or none recorded itself for a minute): the endpoint's last answer was a 2xx.
    await db.sql`
      update sync.forward_progress set seen_at = now() - interval '2 minutes', last_success_at = now(),
        last_failure_at = null, last_failure = null`;
    await db.sql`delete from sync.forward_deliveries`;
    await db.sql.begin((tx) =>
      recordChanges(tx, [
        {
          resource: "order",
          resourceId: "ord_waits",
          merchantId: "mer_1",
          operation: "update",
          source: "webhook",
        },
      ]),
    );
    const page = await browser!.newPage();
    await page.goto(served!.url);
    await page.waitForSelector('[data-field="forward-state"][data-value="off"]', { timeout: 10_000 });
    expect(await page.getAttribute('[data-field="forward-undelivered"]', "data-value")).toBe("1");
    expect(await page.textContent("#forwarding")).toContain("no running worker has FORWARD_URL");
    expect(await page.getAttribute("#forwarding", "class")).toBe("tile bad");
  });
});
