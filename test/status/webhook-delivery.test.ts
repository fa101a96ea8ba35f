// Webhook delivery completeness on a running `loops-sync start` that Loops sends no webhooks to (as when the
// partner portal has disabled the endpoint), while catch-up keeps finding the events: the completeness
// alert's series fire, reporting.webhook_delivery and the operator page say so.
import { readFile } from "node:fs/promises";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { launchChromium, skipWithoutChromium } from "../support/chromium.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";
import { runCli } from "../support/operator-run.ts";
import { sampleValue, scrape } from "../support/scrape.ts";

const ALERT = "LoopsSyncWebhooksOnlyViaCatchup";

/** The completeness rule, which must read `max(M{source="catchup"}) > 0 and max(M{source="webhook"}) == 0`. */
async function completenessRule(): Promise<{ metric: string; description: string }> {
  const text = await readFile(new URL("../../infra/prometheus/alerts.yml", import.meta.url), "utf8");
  const rules = (
    parse(text) as {
      groups: { rules: { alert?: string; expr: string; annotations: { description: string } }[] }[];
    }
  ).groups.flatMap((g) => g.rules);
  const rule = rules.find((r) => r.alert === ALERT);
  const match = rule?.expr.match(
    /^max\((\w+)\{source="catchup"\}\) > 0\s+and max\(\1\{source="webhook"\}\) == 0$/,
  );
  if (!rule || !match)
    throw new Error(`${ALERT} is missing or no longer reads as this test expects: ${rule?.expr}`);
  return { metric: match[1]!, description: rule.annotations.description };
}

describe("events arriving only through catch-up", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let started: StartedLoopsSync;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    started = await startLoopsSync({
      databaseUrl: db.url,
      sandbox,
      webhooks: false,
      env: { LOOPS_MERCHANT_IDS: sandbox.merchantIds.join(","), STATUS_PAGE: "true" },
    });
  });
  afterAll(async () => {
    if (started && started.child.exitCode === null) started.child.kill("SIGKILL");
    await sandbox?.close();
    await db?.drop();
  });

  it("raises the completeness alert's series, fills reporting.webhook_delivery and warns on /status", async () => {
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from sync.cursors where last_run_status = 'ok'`;
        return row!.n === sandbox.merchantIds.length;
      },
      { timeoutMs: 30_000, what: "the first catch-up of every merchant" },
    );
    const orders = sandbox.merchantIds.map((merchantId) => sandbox.createOrder({ merchantId }));
    for (const o of orders) sandbox.advanceOrder(o.id);
    const env = {
      DATABASE_URL: db.url,
      ...loopsApiEnv(sandbox),
      LOOPS_SYNC_MIGRATE_ON_START: "false",
    };
    const catchup = await runCli(["catchup"], env, 60_000);
    expect({ code: catchup.code, stderr: catchup.stderr }).toEqual({ code: 0, stderr: "" });

    const { metric, description } = await completenessRule();
    expect(description).toContain(
      "Events are arriving only through catch-up: Loops may have disabled the webhook endpoint (the spec disables it after 3 days of failures); re-enable it in the partner portal.",
    );
    const samples = await scrape(`${started.admin}/metrics`);
    const catchupOnly = sampleValue(samples, metric, { source: "catchup" });
    const viaWebhook = sampleValue(samples, metric, { source: "webhook" });
    expect({ catchupOnly: catchupOnly! > 0, viaWebhook }).toEqual({ catchupOnly: true, viaWebhook: 0 });
    for (const merchant of sandbox.merchantIds) {
      const perMerchant = sampleValue(samples, `loops_sync_merchant_${metric.replace(/^loops_sync_/, "")}`, {
        merchant,
        source: "catchup",
      });
      expect([merchant, perMerchant! > 0]).toEqual([merchant, true]);
    }

    const view = await db.sql<
      { merchant_id: string; via_webhook: number; via_catchup: number; catchup_percent: string }[]
    >`
      select merchant_id, sum(via_webhook)::int as via_webhook, sum(via_catchup)::int as via_catchup,
             min(catchup_percent)::text as catchup_percent
      from reporting.webhook_delivery group by merchant_id order by merchant_id`;
    expect(view.map((r) => [r.merchant_id, r.via_webhook, r.via_catchup > 0, r.catchup_percent])).toEqual(
      [...sandbox.merchantIds].sort().map((m) => [m, 0, true, "100.0"]),
    );

    const api = (await (await fetch(`${started.admin}/status/api`)).json()) as {
      webhookDelivery: { catchupOnly: boolean; lastHour: { webhook: number; catchup: number } };
    };
    expect(api.webhookDelivery.catchupOnly).toBe(true);
    expect(api.webhookDelivery.lastHour.webhook).toBe(0);
  });

  it.skipIf(skipWithoutChromium)("the operator page, in headless Chromium, shows the warning", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${started.admin}/status`);
      const alert = await page.waitForSelector("#webhook-delivery-alert", { timeout: 10_000 });
      expect(await alert.textContent()).toContain("re-enable it in the partner portal");
      const rows = await page.$$eval("#webhook-delivery tbody tr", (trs) =>
        trs.map((tr) => tr.querySelector('[data-field="via-webhook"]')?.getAttribute("data-value")),
      );
      expect(rows).toEqual(sandbox.merchantIds.map(() => "0"));
    } finally {
      await browser.close();
    }
  });
});
