// A merchant that revoked the connection: catch-up, backfill and verify mark it revoked on the first 403
// connection_not_active and make no more calls for it.

import { runBackfill, runCatchup, verifyReplica } from "@loops-sync/catchup";
import type { LoopsClient } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { makeOrders, sandboxClient } from "../support/sandbox-orders.ts";

describe("revoked merchant", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let client: LoopsClient;
  const merchant = "mer_demo_2";

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    client = sandboxClient(sandbox);
    makeOrders(sandbox, merchant, 3);
    await runCatchup({ sql: db.sql, client, merchantId: merchant });
    sandbox.revokeMerchant(merchant);
  });

  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("catch-up records the revocation once, then skips the merchant without calls", async () => {
    const first = await runCatchup({ sql: db.sql, client, merchantId: merchant });
    expect(first.merchants[0]?.status).toBe("revoked");
    const [row] = await db.sql<
      { status: string }[]
    >`select status from sync.merchants where id = ${merchant}`;
    expect(row?.status).toBe("revoked");

    client.resetStats();
    const again = await runCatchup({ sql: db.sql, client });
    expect(again.merchants.find((m) => m.merchantId === merchant)).toBeUndefined();
    const explicit = await runCatchup({ sql: db.sql, client, merchantId: merchant });
    expect(explicit.merchants[0]?.status).toBe("skipped_revoked");
    await expect(runBackfill({ sql: db.sql, client, merchantId: merchant })).rejects.toMatchObject({
      code: "merchant_inactive",
    });
    const verified = await verifyReplica({ sql: db.sql, client, merchantId: merchant });
    expect(verified.merchants[0]?.error).toMatch(/revoked/);
    expect(client.stats.requests).toBe(0);
  });
});
