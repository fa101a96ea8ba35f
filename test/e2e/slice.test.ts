// The thin end-to-end slice, all real: sandbox (token, orders, signed webhooks) → receiver (verify, store,
// enqueue in one transaction) → worker (bearer token + Service-Merchant-Id fetch) → version-gated upsert.

import { createLogger } from "@loops-sync/config";
import { startReceiver } from "@loops-sync/receiver";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  DEFAULT_WEBHOOK_SECRET,
  type Sandbox,
  startSandbox,
} from "@loops-sync/sandbox";
import { startWorker } from "@loops-sync/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

describe("end-to-end slice", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  const stops: Array<() => Promise<void>> = [];
  const logger = createLogger({ name: "e2e", level: "silent" });

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    const receiver = await startReceiver({
      sql: db.sql,
      webhookSecrets: [DEFAULT_WEBHOOK_SECRET],
      applicationId: DEFAULT_SANDBOX_CREDENTIALS.applicationId,
      port: 0,
      host: "127.0.0.1",
      logger,
    });
    stops.push(() => receiver.close());
    sandbox.addWebhookEndpoint({ url: `${receiver.url}/webhooks/loops`, secrets: [DEFAULT_WEBHOOK_SECRET] });
    const client = sandboxClient(sandbox, {});
    const worker = await startWorker({
      databaseUrl: db.url,
      sql: db.sql,
      client,
      applicationId: DEFAULT_SANDBOX_CREDENTIALS.applicationId,
      concurrency: 4,
      logger,
    });
    stops.push(() => worker.stop());
  });

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    await sandbox?.close();
    await db?.drop();
  });

  it("mirrors an order created in the sandbox, then each newer version of it", async () => {
    const created = sandbox.createOrder({ merchantId: "mer_demo_1" });
    const row = await waitFor(async () => {
      const [r] = await db.sql`select * from replica.orders where id = ${created.id}`;
      return r;
    });
    expect(row.version).toBe(created.version);
    expect(row.merchant_id).toBe("mer_demo_1");
    expect(row.location_id).toBe(created.location_id);
    expect(row.status).toBe("placed");
    expect(Number(row.total_amount)).toBe(created.totals.total.amount);
    expect(row.raw).toEqual(JSON.parse(JSON.stringify(created)));

    // The webhook was stored with its source, and its outcome recorded.
    const [event] =
      await db.sql`select * from sync.events where order_id = ${created.id} and type = 'order.created'`;
    expect(event?.source).toBe("webhook");
    await waitFor(async () => {
      const [e] = await db.sql`select outcome from sync.events where id = ${event!.id}`;
      return e?.outcome === "applied" ? e : undefined;
    });

    sandbox.advanceOrder(created.id);
    const advanced = sandbox.advanceOrder(created.id);
    const latest = await waitFor(async () => {
      const [r] = await db.sql`select version, status from replica.orders where id = ${created.id}`;
      return r && Number(r.version) === advanced.version ? r : undefined;
    });
    expect(latest.status).toBe(advanced.status);
    const history = await db.sql`
      select status from replica.order_status_history where order_id = ${created.id} order by position`;
    expect(history.map((h) => h.status)).toEqual(advanced.status_history.map((h) => h.status));

    // The worker called the API with a bearer token and the merchant header (the sandbox refuses otherwise).
    const stats = sandbox.stats();
    expect(stats.tokenRequests).toBeGreaterThanOrEqual(1);
    expect(Object.entries(stats.apiCalls).some(([k, n]) => k.startsWith("GET /orders/") && n > 0)).toBe(true);
  });
});
